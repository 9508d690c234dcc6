// A by_key all-to-all stream, for bench/four_hosts.py: every source copy writes `count`
// buffers whose keys spread them over every sink copy, on every host (its own included);
// every sink copy checks that it got exactly the buffers the by_key policy sends it, in
// order, from every source copy, and each copy appends one line per unit of work to the
// file named by args.report:
//   a2a role=source host=H copy=I unit=U count=N start_ns=T0 end_ns=T1
//   a2a role=sink host=H copy=I unit=U buffers=B bytes=Y first_ns=T0 end_ns=T1
// Times are CLOCK_MONOTONIC (steady_clock) nanoseconds: comparable between the processes of
// one machine (the benchmark's hosts are network namespaces of one machine), not between
// machines.
//
//   KeyedSource args: size (bytes, default the stream's buffer_size), count (per copy;
//                     a unit of work whose payload is a number uses that instead), report
//   KeyedSink   args: producers (the source's copies), count (as the source's), report
//
// A buffer carries {magic, producer copy, sequence number} in its first 16 bytes (sizes
// from 16 bytes up) and the key (producer << 32) | seq, so the sources do not all address
// the same sink at the same moment. The payload after the header is left as the pool had
// it, as iperf3 leaves its own: the benchmark measures moving buffers, not filling them
// (examples/cpp/producer_consumer.cc checksums every byte; the daemons' tests use that).
//
// The sink knows which sequence numbers of each producer the policy sends it (by_key is
// splitmix64(key) scaled onto the copies on every host, stream/output_port.cc): it fails the run, naming
// what it saw, when one is missing, duplicated, out of order or meant for another copy, or
// when fewer than all of them arrived by the end of work.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <sluice/sluice.h>

namespace {

constexpr std::uint32_t kMagic = 0xa11a0a11u;
struct Header {
  std::uint32_t magic;
  std::uint32_t producer;
  std::uint64_t seq;
};

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::uint64_t key_of(std::uint32_t producer, std::uint64_t seq) { return (std::uint64_t{producer} << 32) | seq; }

// The by_key policy's choice (OutputPort::key_to_copy): a change there fails this check
// loudly ("meant for copy ...") rather than measuring something else.
__extension__ using Wide = unsigned __int128;

std::size_t copy_for(std::uint64_t key, std::size_t copies) {
  key ^= key >> 30;
  key *= 0xbf58476d1ce4e5b9ULL;
  key ^= key >> 27;
  key *= 0x94d049bb133111ebULL;
  key ^= key >> 31;
  return static_cast<std::size_t>((static_cast<Wide>(key) * copies) >> 64);
}

// The unit's payload when it is a number, else args.count.
std::uint64_t count_of(const sluice::Context& ctx) {
  const std::string& work = ctx.work();
  if (!work.empty() && work.find_first_not_of("0123456789") == std::string::npos) return std::stoull(work);
  return ctx.arg<std::uint64_t>("count");
}

void append(const sluice::Context& ctx, const std::string& line) {
  const std::string path = ctx.arg<std::string>("report");
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) throw sluice::Error("cannot open report file " + path + ": " + std::strerror(errno));
  const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());  // one append
  ::close(fd);
  if (!ok) throw sluice::Error("cannot write report file " + path);
}

std::string common(const sluice::Context& ctx, const char* role) {
  return std::string("a2a role=") + role + " host=" + ctx.host() + " copy=" + std::to_string(ctx.copy_index()) +
         " unit=" + std::to_string(ctx.work_index());
}

}  // namespace

class KeyedSource : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    const std::size_t size = ctx.arg<std::size_t>("size", out.buffer_size());
    const std::uint64_t count = count_of(ctx);
    if (size < sizeof(Header) || size > out.buffer_size()) {
      throw sluice::Error("args.size " + std::to_string(size) + " must be between " +
                          std::to_string(sizeof(Header)) + " and the stream's buffer_size " +
                          std::to_string(out.buffer_size()));
    }
    const auto producer = static_cast<std::uint32_t>(ctx.copy_index());
    const std::int64_t start = now_ns();
    for (std::uint64_t seq = 0; seq < count; ++seq) {
      sluice::Buffer buffer = out.allocate();
      buffer.resize(size);
      const Header header{kMagic, producer, seq};
      std::memcpy(buffer.data(), &header, sizeof header);
      buffer.set_key(key_of(producer, seq));
      out.write(std::move(buffer));
    }
    const std::int64_t end = now_ns();
    append(ctx, common(ctx, "source") + " count=" + std::to_string(count) + " start_ns=" + std::to_string(start) +
                    " end_ns=" + std::to_string(end) + "\n");
  }
};

class KeyedSink : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    const auto producers = ctx.arg<std::uint32_t>("producers");
    const std::uint64_t count = count_of(ctx);
    const auto me = static_cast<std::size_t>(ctx.copy_index());
    const auto copies = static_cast<std::size_t>(ctx.copy_count());
    // next[p]: the next sequence number of producer p that by_key sends to this copy.
    auto next_for = [&](std::uint32_t p, std::uint64_t from) {
      while (from < count && copy_for(key_of(p, from), copies) != me) ++from;
      return from;
    };
    std::vector<std::uint64_t> next(producers);
    for (std::uint32_t p = 0; p < producers; ++p) next[p] = next_for(p, 0);
    std::uint64_t buffers = 0, bytes = 0;
    std::int64_t first = 0;
    while (auto buffer = in.read()) {
      if (buffers++ == 0) first = now_ns();
      bytes += buffer->size();
      Header h{};
      if (buffer->size() >= sizeof h) std::memcpy(&h, buffer->data(), sizeof h);
      if (h.magic != kMagic || h.producer >= producers || buffer->key() != key_of(h.producer, h.seq)) {
        throw sluice::Error("buffer #" + std::to_string(buffers) + " has no valid header (size " +
                            std::to_string(buffer->size()) + ", key " + std::to_string(buffer->key()) + ")");
      }
      if (h.seq != next[h.producer]) {
        const std::size_t meant = copy_for(buffer->key(), copies);
        throw sluice::Error("from producer " + std::to_string(h.producer) + " got buffer " + std::to_string(h.seq) +
                            (meant != me ? " meant for copy " + std::to_string(meant)
                                         : " where " + std::to_string(next[h.producer]) + " was due") +
                            ": lost, duplicated or reordered");
      }
      next[h.producer] = next_for(h.producer, h.seq + 1);
    }
    const std::int64_t end = now_ns();
    for (std::uint32_t p = 0; p < producers; ++p) {
      if (next[p] < count) {
        throw sluice::Error("end of work before buffer " + std::to_string(next[p]) + " of producer " +
                            std::to_string(p) + " arrived (" + std::to_string(buffers) + " received)");
      }
    }
    append(ctx, common(ctx, "sink") + " buffers=" + std::to_string(buffers) + " bytes=" + std::to_string(bytes) +
                    " first_ns=" + std::to_string(first) + " end_ns=" + std::to_string(end) + "\n");
  }
};

SLUICE_FILTER(KeyedSource)
SLUICE_FILTER(KeyedSink)
