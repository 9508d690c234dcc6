// Filters for tests/console/progress_test.py: a run long enough to draw the progress line,
// with log lines in the middle of it and one stream clearly more held back than another.
//   Ticker  source: every `every_ms` (default 100) writes one buffer and logs "tick N",
//           `count` times (default 20); with `print: true` also prints "printed N" to stdout.
//   Pump    source: writes `count` buffers (default 60) as fast as the stream takes them.
//   Sink    reads everything; `sleep_ms` (default 0) per buffer makes it a slow consumer,
//           so its producers wait for room (backpressure).
#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include <sluice/sluice.h>

class Ticker : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    const auto every = std::chrono::milliseconds(ctx.arg<int>("every_ms", 100));
    const int count = ctx.arg<int>("count", 20);
    const bool print = ctx.arg<bool>("print", false);
    for (int i = 0; i < count; ++i) {
      std::this_thread::sleep_for(every);
      sluice::Buffer buffer = out.allocate();
      buffer.resize(8);
      out.write(std::move(buffer));
      // Printed first: the progress line may be on the terminal (a log line clears it).
      if (print) std::cout << "printed " << i << std::endl;
      ctx.log().info("tick " + std::to_string(i));
    }
  }
};

class Pump : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    const int count = ctx.arg<int>("count", 60);
    for (int i = 0; i < count; ++i) {
      sluice::Buffer buffer = out.allocate();
      buffer.resize(buffer.capacity());
      out.write(std::move(buffer));
    }
  }
};

class Sink : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    const auto pause = std::chrono::milliseconds(ctx.arg<int>("sleep_ms", 0));
    while (auto buffer = in.read()) {
      if (pause.count() > 0) std::this_thread::sleep_for(pause);
    }
  }
};

SLUICE_FILTER(Ticker)
SLUICE_FILTER(Pump)
SLUICE_FILTER(Sink)
