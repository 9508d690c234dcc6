// Test filters. Arguments:
//   TestSource: count (per copy, default 1000), size (bytes, default kRecordSize; smaller
//               buffers carry no record), keys (if > 0, key = seq % keys, else seq),
//               record_address (bool), forever (bool: ignore count), throw_at (seq at which
//               to throw), throw_in (init|finalize: throw there; init_int: throw the int 42
//               in init, not a std::exception; init_long: throw a message of 1.2 MB, "long: "
//               and 600,000 two-byte characters; init_stol: std::stol("init_stol"), which throws
//               std::invalid_argument; init_out_of_range: std::string::at past the end).
//   TestRelay:  forwards, checking and re-stamping hops (a C++ stage between Java ones).
//               throw_at / throw_copy: copy throw_copy throws after throw_at buffers.
//               sleep_us: per buffer.
//   TestSink:   checks records, records arrivals. sleep_us (slow_copy: only that copy),
//               record_keys (key_copies, key_hops, per_hop), record_address, transforms
//               (expected, default: not checked), check_aux (aux must equal the source's
//               payload address and ours: zero copy), read: false to return without reading
//               (leaves input to the runtime), release_spinners, wait_for_gate (read
//               nothing until observed().gate_open; slow_copy: only that copy),
//               open_gate_after (opens it after reading that many buffers).
//   TestTextSink: records each buffer's text, one line per buffer (Java probes report with it).
//   TestAskPort: asks for input port `port` (an unconnected one, in tests).
//   TestWriteInFinalize: writes to out from finalize.
//   TestOversize: writes a buffer bigger than the stream's buffer_size.
#include "testing/graph_test_filters.h"

#include <chrono>
#include <cstring>
#include <thread>

#include "sequenced.h"
#include "testing/eventually.h"

namespace testing_filters {

namespace {

struct Record {
  std::uint32_t magic;
  std::uint32_t source;
  std::uint64_t seq;
  std::uint32_t hop;
  std::uint32_t transforms;
  std::uint64_t hop_seq;
  std::uint64_t checksum;
  std::uint64_t aux;
};
static_assert(sizeof(Record) == kRecordSize);

std::uint64_t checksum(const Record& r, const std::byte* data, std::size_t size) {
  return sequenced::checksum(data + kRecordSize, size - kRecordSize) ^ (r.source * 0x9e3779b97f4a7c15ULL) ^
         (r.seq * 0xc2b2ae3d27d4eb4fULL) ^ r.transforms;
}

void sleep_us(int us) {
  if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
}

std::string where(const sluice::Context& ctx) { return ctx.filter_name() + "#" + std::to_string(ctx.copy_index()); }

// Checks a received record's magic, checksum, payload and hop order; `next` tracks, per
// immediate producer, the lowest acceptable hop sequence number. Returns false for a buffer
// that is no record (too short: silently; bad magic: after recording a violation).
bool check_record(const sluice::Context& ctx, const sluice::Buffer& b,
                  std::map<std::uint32_t, std::uint64_t>& next, Record& r) {
  if (b.size() < kRecordSize) return false;
  std::memcpy(&r, b.data(), sizeof r);
  if (r.magic != kRecordMagic) {
    observed().violation(where(ctx) + ": bad magic");
    return false;
  }
  const auto id = [&] { return where(ctx) + ": source " + std::to_string(r.source) + " seq " + std::to_string(r.seq); };
  if (checksum(r, b.data(), b.size()) != r.checksum) observed().violation(id() + ": checksum mismatch");
  for (std::size_t i = 0; i < b.size() - kRecordSize; ++i) {
    if (static_cast<std::uint8_t>(b.data()[kRecordSize + i]) != static_cast<std::uint8_t>(r.seq + 7 * i + r.transforms)) {
      observed().violation(id() + ": payload byte " + std::to_string(i) + " wrong after " +
                           std::to_string(r.transforms) + " transforms");
      break;
    }
  }
  auto& expected = next[r.hop];
  if (r.hop_seq < expected) {
    observed().violation(id() + ": from upstream copy " + std::to_string(r.hop) + " hop seq " +
                         std::to_string(r.hop_seq) + " after " + std::to_string(expected - 1));
  }
  expected = r.hop_seq + 1;
  return true;
}

void stamp_hop(sluice::Buffer& b, std::uint32_t hop, std::uint64_t hop_seq) {
  if (b.size() < kRecordSize) return;
  Record r;
  std::memcpy(&r, b.data(), sizeof r);
  r.hop = hop;
  r.hop_seq = hop_seq;
  std::memcpy(b.data(), &r, sizeof r);
}

template <typename T>
struct Counted {
  Counted() {
    std::lock_guard<std::mutex> lock(observed().mu);
    ++observed().constructed[T::kName];
  }
};

}  // namespace

void Observations::reset() {
  std::lock_guard<std::mutex> lock(mu);
  violations.clear();
  arrivals.clear();
  received.clear();
  key_copies.clear();
  key_hops.clear();
  per_hop.clear();
  units_seen.clear();
  constructed.clear();
  spinners_released.store(false);
  gate_open.store(false);
  spinning.store(0);
  slow_constructor_ms.store(300);
  slow_constructed.store(0);
  slow_destroyed.store(0);
  inits.clear();
  source_address.clear();
  sink_address.clear();
  address_checks = 0;
  lines.clear();
}

void Observations::violation(const std::string& what) {
  std::lock_guard<std::mutex> lock(mu);
  if (violations.size() < 20) violations.push_back(what);
}

Observations& observed() {
  static Observations instance;
  return instance;
}

class TestSource : public sluice::Filter, Counted<TestSource> {
 public:
  static constexpr const char* kName = "TestSource";
  void init(sluice::Context& ctx) override {
    {
      std::lock_guard<std::mutex> lock(observed().mu);
      ++observed().inits[ctx.filter_name()];
    }
    if (ctx.arg("throw_in", "") == std::string("init")) throw std::runtime_error("boom in init");
    if (ctx.arg("throw_in", "") == std::string("init_int")) throw 42;
    if (ctx.arg("throw_in", "") == std::string("init_stol")) (void)std::stol(ctx.arg("throw_in", ""));  // std::invalid_argument
    if (ctx.arg("throw_in", "") == std::string("init_out_of_range")) (void)std::string("ab").at(7);
    if (ctx.arg("throw_in", "") == std::string("init_long")) {
      std::string message = "long: ";
      for (int i = 0; i < 600000; ++i) message += "\xc3\xa9";  // é
      throw std::runtime_error(message);
    }
  }
  void process(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    const std::uint64_t count = ctx.arg<std::uint64_t>("count", 1000);
    const std::size_t size = ctx.arg<std::size_t>("size", kRecordSize);
    const std::uint64_t keys = ctx.arg<std::uint64_t>("keys", 0);
    const bool forever = ctx.arg<bool>("forever", false);
    const bool record_address = ctx.arg<bool>("record_address", false);
    const std::int64_t throw_at = ctx.arg<std::int64_t>("throw_at", -1);
    const auto me = static_cast<std::uint32_t>(ctx.copy_index());
    for (std::uint64_t seq = 0; forever || seq < count; ++seq) {
      if (static_cast<std::int64_t>(seq) == throw_at) throw sluice::Error("source gave up at " + std::to_string(seq));
      sluice::Buffer b = out.allocate();
      b.resize(size);
      if (size >= kRecordSize) {
        for (std::size_t i = 0; i < size - kRecordSize; ++i) b.data()[kRecordSize + i] = std::byte((seq + 7 * i) & 0xff);
        Record r{kRecordMagic, me, seq, me, 0, seq, 0, 0};
        r.checksum = checksum(r, b.data(), size);
        std::memcpy(b.data(), &r, sizeof r);
      }
      b.set_key(keys > 0 ? seq % keys : seq);
      if (record_address) {
        std::lock_guard<std::mutex> lock(observed().mu);
        observed().source_address[{me, seq}] = b.data();
      }
      out.write(std::move(b));
    }
  }
  void finalize(sluice::Context& ctx) override {
    if (ctx.arg("throw_in", "") == std::string("finalize")) throw std::runtime_error("boom in finalize");
  }
};

class TestRelay : public sluice::Filter, Counted<TestRelay> {
 public:
  static constexpr const char* kName = "TestRelay";
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    auto& out = ctx.output("out");
    const int sleep = ctx.arg<int>("sleep_us", 0);
    const std::int64_t throw_at = ctx.arg<std::int64_t>("throw_at", -1);
    const int throw_copy = ctx.arg<int>("throw_copy", 0);
    const auto me = static_cast<std::uint32_t>(ctx.copy_index());
    std::map<std::uint32_t, std::uint64_t> next;
    std::uint64_t seq = 0;
    while (auto b = in.read()) {
      if (ctx.copy_index() == throw_copy && static_cast<std::int64_t>(seq) == throw_at) {
        throw sluice::Error("relay copy " + std::to_string(me) + " refuses buffer " + std::to_string(seq));
      }
      Record r;
      check_record(ctx, *b, next, r);
      stamp_hop(*b, me, seq++);
      sleep_us(sleep);
      out.write(std::move(*b));
    }
  }
};

class TestSink : public sluice::Filter, Counted<TestSink> {
 public:
  static constexpr const char* kName = "TestSink";
  void init(sluice::Context& ctx) override {
    std::lock_guard<std::mutex> lock(observed().mu);
    ++observed().inits[ctx.filter_name()];
    observed().units_seen.push_back(ctx.filter_name() + "#" + std::to_string(ctx.copy_index()) + ":" +
                                    std::to_string(ctx.work_index()) + ":" + ctx.work());
  }
  void process(sluice::Context& ctx) override {
    if (!ctx.arg<bool>("read", true)) return;
    auto& in = ctx.input("in");
    // sleep_us applies to every copy, or only to copy `slow_copy` when that is given.
    const int slow_copy = ctx.arg<int>("slow_copy", -1);
    const bool slow = slow_copy < 0 || slow_copy == ctx.copy_index();
    const int sleep = slow ? ctx.arg<int>("sleep_us", 0) : 0;
    const auto open_gate_after = ctx.arg<std::uint64_t>("open_gate_after", 0);
    const bool record_keys = ctx.arg<bool>("record_keys", false);
    const bool record_address = ctx.arg<bool>("record_address", false);
    const std::int64_t transforms = ctx.arg<std::int64_t>("transforms", -1);
    const bool check_aux = ctx.arg<bool>("check_aux", false);
    std::map<std::uint32_t, std::uint64_t> next;
    std::map<std::uint32_t, std::vector<std::uint64_t>> seen;  // merged at the end: no lock per buffer
    std::map<std::uint64_t, bool> keys;
    std::map<std::uint64_t, std::set<std::uint32_t>> key_hops;
    std::map<std::uint32_t, std::uint64_t> per_hop;
    std::vector<std::pair<std::pair<std::uint32_t, std::uint64_t>, const void*>> addresses;
    std::vector<std::pair<std::pair<std::uint32_t, std::uint64_t>, std::pair<const void*, std::uint64_t>>> aux;
    if (slow && ctx.arg<bool>("wait_for_gate", false)) {
      // At most two minutes, so that a test that never opens it does not leave a copy behind.
      sluice::testing::eventually([] { return observed().gate_open.load(); }, std::chrono::minutes(2));
    }
    std::uint64_t count = 0;
    while (auto b = in.read()) {
      if (++count == open_gate_after) observed().gate_open.store(true);
      Record r;
      if (check_record(ctx, *b, next, r)) {
        seen[r.source].push_back(r.seq);
        if (transforms >= 0 && r.transforms != transforms) {
          observed().violation(where(ctx) + ": seq " + std::to_string(r.seq) + " went through " +
                               std::to_string(r.transforms) + " transforms, not " + std::to_string(transforms));
        }
        if (record_address) addresses.push_back({{r.source, r.seq}, b->data()});
        if (check_aux) aux.push_back({{r.source, r.seq}, {b->data(), r.aux}});
        if (record_keys) {
          key_hops[b->key()].insert(r.hop);
          ++per_hop[r.hop];
        }
      }
      if (record_keys) keys[b->key()] = true;
      sleep_us(sleep);
    }
    std::lock_guard<std::mutex> lock(observed().mu);
    auto& arrivals = observed().arrivals[ctx.filter_name()];
    for (auto& [source, seqs] : seen) {
      auto& counts = arrivals[source];
      for (std::uint64_t s : seqs) {
        if (counts.size() <= s) counts.resize(s + 1, 0);
        ++counts[s];
      }
    }
    observed().received[ctx.filter_name()][ctx.copy_index()] += count;
    if (ctx.arg<bool>("release_spinners", false)) observed().spinners_released.store(true);
    for (auto& [key, unused] : keys) observed().key_copies[ctx.filter_name()][key].push_back(ctx.copy_index());
    for (auto& [id, address] : addresses) observed().sink_address[id].push_back(address);
    for (auto& [key, hops] : key_hops) observed().key_hops[key].insert(hops.begin(), hops.end());
    for (auto& [hop, n] : per_hop) observed().per_hop[hop] += n;
    check_zero_copy(aux);
  }

 private:
  // Each record's payload address at the source, in Java (aux) and here must be one.
  // REQUIRES: observed().mu held.
  static void check_zero_copy(
      const std::vector<std::pair<std::pair<std::uint32_t, std::uint64_t>, std::pair<const void*, std::uint64_t>>>& aux) {
    auto& o = observed();
    for (auto& [id, seen_at] : aux) {
      auto found = o.source_address.find(id);
      const void* java = reinterpret_cast<const void*>(static_cast<std::uintptr_t>(seen_at.second));
      if (found != o.source_address.end() && found->second == seen_at.first && java == seen_at.first) {
        ++o.address_checks;
      } else if (o.violations.size() < 20) {
        o.violations.push_back("zero copy: seq " + std::to_string(id.second) + " at source " +
                               std::to_string(reinterpret_cast<std::uintptr_t>(
                                   found == o.source_address.end() ? nullptr : found->second)) +
                               ", in Java " + std::to_string(seen_at.second) + ", at sink " +
                               std::to_string(reinterpret_cast<std::uintptr_t>(seen_at.first)));
      }
    }
  }
};

class TestTextSink : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    while (auto b = in.read()) {
      std::lock_guard<std::mutex> lock(observed().mu);
      observed().lines.emplace_back(b->text());
    }
  }
};

class TestAskPort : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override { ctx.input(ctx.arg("port")); }
};

class TestWriteInFinalize : public sluice::Filter {
 public:
  void process(sluice::Context&) override {}
  void finalize(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    out.write(out.allocate());
  }
};

class TestOversize : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    sluice::Buffer b = out.allocate();
    b.resize(b.capacity() + 1);  // throws: bigger than the buffer
  }
};

// Throws from its constructor: creation failures must be reported too.
class TestBadConstructor : public sluice::Filter {
 public:
  TestBadConstructor() { throw std::runtime_error("cannot construct"); }
  void process(sluice::Context&) override {}
};

// Takes observed().slow_constructor_ms to construct and counts its destructions: for an
// Engine destroyed while its copies are still creating their filters.
class TestSlowConstructor : public sluice::Filter {
 public:
  TestSlowConstructor() {
    std::this_thread::sleep_for(std::chrono::milliseconds(observed().slow_constructor_ms.load()));
    ++observed().slow_constructed;
  }
  ~TestSlowConstructor() override { ++observed().slow_destroyed; }
  void process(sluice::Context&) override {}
};

// Spins in user code without ever blocking on a stream: for `ms` milliseconds, or with
// until_released: true until a TestSink with release_spinners: true has read everything
// (at most `ms`, default 1000, then 60000 with until_released).
class TestSpinner : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    ++observed().spinning;
    struct Leave {
      ~Leave() { --observed().spinning; }
    } leave;
    const bool until_released = ctx.arg<bool>("until_released", false);
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(ctx.arg<int>("ms", until_released ? 60000 : 1000));
    while (std::chrono::steady_clock::now() < deadline) {
      if (until_released && observed().spinners_released.load()) return;
    }
    if (until_released) throw sluice::Error("never released: the copies it shares a worker with starved");
  }
};

}  // namespace testing_filters

SLUICE_FILTER(testing_filters::TestSource)
SLUICE_FILTER(testing_filters::TestRelay)
SLUICE_FILTER(testing_filters::TestSink)
SLUICE_FILTER(testing_filters::TestTextSink)
SLUICE_FILTER(testing_filters::TestAskPort)
SLUICE_FILTER(testing_filters::TestWriteInFinalize)
SLUICE_FILTER(testing_filters::TestOversize)
SLUICE_FILTER(testing_filters::TestBadConstructor)
SLUICE_FILTER(testing_filters::TestSlowConstructor)
SLUICE_FILTER(testing_filters::TestSpinner)
