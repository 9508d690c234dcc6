// What the benchmarks share: a source and a sink that do as little as possible per buffer
// (so the stream's own cost is what gets measured), medians, and compact number formatting.
// Each benchmark registers the filters it uses with SLUICE_FILTER in its own .cc.
#ifndef SLUICE_BENCH_BENCH_COMMON_H_
#define SLUICE_BENCH_BENCH_COMMON_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "sluice/sluice.h"

namespace bench {

// Writes args.count buffers of args.size bytes; only the first 8 bytes are written.
class BenchSource : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    const std::uint64_t count = ctx.arg<std::uint64_t>("count");
    const std::size_t size = ctx.arg<std::size_t>("size");
    for (std::uint64_t i = 0; i < count; ++i) {
      sluice::Buffer b = out.allocate();
      b.resize(size);
      std::memcpy(b.data(), &i, std::min<std::size_t>(size, 8));
      out.write(std::move(b));
    }
  }
};

// Reads every buffer and touches its first byte.
class BenchSink : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    std::uint64_t sum = 0;
    while (auto b = in.read()) sum += static_cast<std::uint8_t>(b->data()[0]);
    sink_ = sum;
  }
  volatile std::uint64_t sink_ = 0;
};

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2);
}

// 1234567 -> "1.23M", 12345 -> "12.3k".
inline std::string si(double v) {
  char text[32];
  if (v >= 1e6) std::snprintf(text, sizeof text, "%.2fM", v / 1e6);
  else if (v >= 1e3) std::snprintf(text, sizeof text, "%.1fk", v / 1e3);
  else std::snprintf(text, sizeof text, "%.0f", v);
  return text;
}

}  // namespace bench

#endif  // SLUICE_BENCH_BENCH_COMMON_H_
