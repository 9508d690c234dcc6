// The seed's producer/consumer experiment, C++ side (bench/seed_table.py drives it):
// a producer on one host writes `count` buffers of `size` bytes, a consumer on another host
// reads them. Each filter times only its stream calls, as the seed did: OutputStream::write
// in the producer, InputStream::read in the consumer (steady_clock around each call), and
// appends one line to the file named by args.report:
//   seed role=producer lang=cpp size=S count=N first_ns=F rest_mean_ns=M rest_total_ns=T rest_p50_ns=P
// first_ns is the first buffer's call alone; rest_mean_ns the mean over buffers 2..N and
// rest_p50_ns their median (a typical call, apart from the waits for credit). The
// consumer's final read (the one that returns end of work) is not counted. allocate() is
// not timed (it blocks when the pool is empty: that is backpressure, not the write).
//
//   SeedProducer args: size (bytes), count, report (path)
//   SeedConsumer args: report (path)
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include <algorithm>

#include <sluice/sluice.h>

namespace {

using Clock = std::chrono::steady_clock;

std::int64_t ns(Clock::duration d) { return std::chrono::duration_cast<std::chrono::nanoseconds>(d).count(); }

void report(const sluice::Context& ctx, const char* role, std::size_t size, std::uint64_t count, std::int64_t first,
            std::int64_t rest, std::vector<std::int64_t>& times) {
  std::int64_t p50 = 0;
  if (times.size() > 1) {
    auto mid = times.begin() + 1 + static_cast<std::ptrdiff_t>((times.size() - 1) / 2);
    std::nth_element(times.begin() + 1, mid, times.end());
    p50 = *mid;
  }
  const std::string path = ctx.arg<std::string>("report");
  char line[512];
  const int n = std::snprintf(line, sizeof line,
                              "seed role=%s lang=cpp host=%s size=%zu count=%llu first_ns=%lld rest_mean_ns=%.1f "
                              "rest_total_ns=%lld rest_p50_ns=%lld\n",
                              role, ctx.host().c_str(), size, static_cast<unsigned long long>(count),
                              static_cast<long long>(first), count > 1 ? double(rest) / double(count - 1) : 0.0,
                              static_cast<long long>(rest), static_cast<long long>(p50));
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) throw sluice::Error("cannot open report file " + path + ": " + std::strerror(errno));
  const bool ok = ::write(fd, line, static_cast<std::size_t>(n)) == n;
  ::close(fd);
  if (!ok) throw sluice::Error("cannot write report file " + path);
  ctx.log().info(std::string(line, static_cast<std::size_t>(n - 1)));
}

}  // namespace

class SeedProducer : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    const std::size_t size = ctx.arg<std::size_t>("size");
    const std::uint64_t count = ctx.arg<std::uint64_t>("count");
    std::int64_t first = 0, rest = 0;
    std::vector<std::int64_t> times;
    times.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) {
      sluice::Buffer b = out.allocate();
      b.resize(size);
      std::memcpy(b.data(), &i, std::min<std::size_t>(size, sizeof i));
      const auto t0 = Clock::now();
      out.write(std::move(b));
      const std::int64_t t = ns(Clock::now() - t0);
      if (i == 0) first = t; else rest += t;
      times.push_back(t);
    }
    report(ctx, "producer", size, count, first, rest, times);
  }
};

class SeedConsumer : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    std::int64_t first = 0, rest = 0;
    std::uint64_t count = 0, sum = 0;
    std::size_t size = 0;
    std::vector<std::int64_t> times;
    times.reserve(1 << 16);
    for (;;) {
      const auto t0 = Clock::now();
      auto b = in.read();
      const std::int64_t t = ns(Clock::now() - t0);
      if (!b) break;
      if (count == 0) first = t; else rest += t;
      times.push_back(t);
      ++count;
      size = b->size();
      sum += static_cast<std::uint8_t>(b->data()[0]);
    }
    sink_ = sum;
    report(ctx, "consumer", size, count, first, rest, times);
  }
  volatile std::uint64_t sink_ = 0;
};

SLUICE_FILTER(SeedProducer)
SLUICE_FILTER(SeedConsumer)
