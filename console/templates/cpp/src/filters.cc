// @NAME@'s filters. Upper is the one to make your own; Emit and Print feed and show it.
//   Emit   source: writes the unit of work's payload (sluice run --work TEXT) as one buffer.
//   Upper  upper-cases every buffer it reads and passes it on (zero-copy).
//   Print  writes every buffer it reads to stdout, one line each.
#include <algorithm>
#include <iostream>
#include <mutex>
#include <stdexcept>
#include <string>

#include <sluice/sluice.h>

#include "upper.h"

class Emit : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    const std::string& text = ctx.work();
    sluice::Buffer buffer = out.allocate();
    if (text.size() > buffer.capacity()) {  // say so rather than cut it
      throw std::runtime_error("the payload (" + std::to_string(text.size()) + " bytes) does not fit in one buffer (" +
                               std::to_string(buffer.capacity()) + " bytes): give the stream from " +
                               ctx.filter_name() + ".out a larger buffer_size in the topology (buffer_size: 1MiB)");
    }
    buffer.resize(text.size());
    std::copy_n(reinterpret_cast<const std::byte*>(text.data()), text.size(), buffer.bytes().begin());
    out.write(std::move(buffer));
  }
};

class Upper : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    auto& out = ctx.output("out");
    while (auto buffer = in.read()) {  // empty at end of work
      to_upper(buffer->bytes());
      out.write(std::move(*buffer));
    }
  }
};

class Print : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    while (auto buffer = in.read()) {
      static std::mutex mu;  // copies of Print share stdout
      std::lock_guard<std::mutex> lock(mu);
      std::cout.write(reinterpret_cast<const char*>(buffer->bytes().data()),
                      static_cast<std::streamsize>(buffer->size()));
      std::cout << std::endl;
    }
  }
};

SLUICE_FILTER(Emit)
SLUICE_FILTER(Upper)
SLUICE_FILTER(Print)
