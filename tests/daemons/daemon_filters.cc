// Filters for the daemons' tests that the examples do not provide.
//   Chatter  logs `line` (if given) in init, then `count` lines "chatter N" (default 0) in
//            process, `every_ms` apart (default 0: as fast as it can), then `last` (if given)
//            in finalize; and `print` lines "<print> N" (print_count of them, default 3) to
//            stdout in process, the last one ended in finalize. No ports. (logs_test.py: log
//            lines and stdout from a copy on another host.)
//   Fail     writes `count` buffers of 1 KiB to `out`, then throws "failing as asked after
//            N buffers", followed by `pad` bytes 'x' (default 0), and with `echo_work: true`
//            " for work " and the unit's payload. (cross_test.py: a failed run's summary keeps
//            the counts; a message past what a control frame holds; a payload not UTF-8.)
#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include <sluice/sluice.h>

class Chatter : public sluice::Filter {
 public:
  void init(sluice::Context& ctx) override {
    const std::string line = ctx.arg("line", std::string());
    if (!line.empty()) ctx.log().info(line);
  }
  void process(sluice::Context& ctx) override {
    const int count = ctx.arg<int>("count", 0);
    const auto every = std::chrono::milliseconds(ctx.arg<int>("every_ms", 0));
    for (int i = 0; i < count; ++i) {
      if (every.count() > 0) std::this_thread::sleep_for(every);
      ctx.log().info("chatter " + std::to_string(i));
    }
    const std::string print = ctx.arg("print", std::string());
    const int prints = ctx.arg<int>("print_count", 3);
    for (int i = 0; i < prints && !print.empty(); ++i) {
      std::cout << print << " " << i;
      if (i + 1 < prints) std::cout << "\n";  // the last line ends in finalize
    }
  }
  void finalize(sluice::Context& ctx) override {
    if (!ctx.arg("print", std::string()).empty()) std::cout << std::endl;
    const std::string last = ctx.arg("last", std::string());
    if (!last.empty()) ctx.log().warn(last);
  }
};

class Fail : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    const int count = ctx.arg<int>("count");
    for (int i = 0; i < count; ++i) {
      sluice::Buffer buffer = out.allocate();
      buffer.resize(std::min<std::size_t>(1024, buffer.capacity()));
      out.write(std::move(buffer));
    }
    throw sluice::Error("failing as asked after " + std::to_string(count) + " buffers" +
                        std::string(ctx.arg<std::size_t>("pad", 0), 'x') +
                        (ctx.arg<bool>("echo_work", false) ? " for work " + ctx.work() : ""));
  }
};

SLUICE_FILTER(Chatter)
SLUICE_FILTER(Fail)
