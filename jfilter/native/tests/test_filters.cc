// JSource  args: count (per copy, default 1000), size (default 64), keys (> 0: key = seq % keys,
//                else seq), forever, record_address.
// JRelay   checks and re-stamps (C++ stage between Java ones). sleep_us.
// JSink    checks records; args transforms (expected, default: not checked), sleep_us,
//          check_aux (aux must equal the source's payload address and ours: zero copy).
// JTextSink records each buffer's text, one line per buffer (Java probes report with it).
#include "test_filters.h"

#include <chrono>
#include <cstring>
#include <thread>

#include "sequenced.h"
#include "sluice/sluice.h"

namespace jtest {

namespace {

constexpr std::uint32_t kMagic = 0x6a617661;  // "java"

struct Header {
  std::uint32_t magic;
  std::uint32_t source;
  std::uint64_t seq;
  std::uint32_t hop;
  std::uint32_t transforms;
  std::uint64_t hop_seq;
  std::uint64_t checksum;
  std::uint64_t aux;
};
static_assert(sizeof(Header) == kHeader);

std::uint64_t checksum(const Header& h, const std::byte* data, std::size_t size) {
  return sequenced::checksum(data + kHeader, size - kHeader) ^ (h.source * 0x9e3779b97f4a7c15ULL) ^
         (h.seq * 0xc2b2ae3d27d4eb4fULL) ^ h.transforms;
}

std::string where(const sluice::Context& ctx) {
  return ctx.filter_name() + "#" + std::to_string(ctx.copy_index());
}

// Checks magic, checksum, payload and hop order; returns false (after recording why) when the
// buffer is not a good record.
bool check(const sluice::Context& ctx, const sluice::Buffer& b, std::map<std::uint32_t, std::uint64_t>& next,
           Header& h) {
  if (b.size() < kHeader) {
    observed().violation(where(ctx) + ": a " + std::to_string(b.size()) + "-byte buffer");
    return false;
  }
  std::memcpy(&h, b.data(), sizeof h);
  const std::string id = where(ctx) + ": source " + std::to_string(h.source) + " seq " + std::to_string(h.seq);
  if (h.magic != kMagic) {
    observed().violation(where(ctx) + ": bad magic");
    return false;
  }
  if (checksum(h, b.data(), b.size()) != h.checksum) observed().violation(id + ": checksum mismatch");
  for (std::size_t i = 0; i < b.size() - kHeader; ++i) {
    if (static_cast<std::uint8_t>(b.data()[kHeader + i]) != static_cast<std::uint8_t>(h.seq + 7 * i + h.transforms)) {
      observed().violation(id + ": payload byte " + std::to_string(i) + " wrong after " +
                           std::to_string(h.transforms) + " transforms");
      break;
    }
  }
  auto& expected = next[h.hop];
  if (h.hop_seq < expected) {
    observed().violation(id + ": from upstream copy " + std::to_string(h.hop) + " hop seq " +
                         std::to_string(h.hop_seq) + " after " + std::to_string(expected - 1));
  }
  expected = h.hop_seq + 1;
  return true;
}

void sleep_us(int us) {
  if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
}

class JSource : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    const std::uint64_t count = ctx.arg<std::uint64_t>("count", 1000);
    const std::size_t size = ctx.arg<std::size_t>("size", 64);
    const std::uint64_t keys = ctx.arg<std::uint64_t>("keys", 0);
    const bool forever = ctx.arg<bool>("forever", false);
    const bool record_address = ctx.arg<bool>("record_address", false);
    const auto me = static_cast<std::uint32_t>(ctx.copy_index());
    for (std::uint64_t seq = 0; forever || seq < count; ++seq) {
      sluice::Buffer b = out.allocate();
      b.resize(size);
      for (std::size_t i = 0; i < size - kHeader; ++i) b.data()[kHeader + i] = std::byte((seq + 7 * i) & 0xff);
      Header h{kMagic, me, seq, me, 0, seq, 0, 0};
      h.checksum = checksum(h, b.data(), size);
      std::memcpy(b.data(), &h, sizeof h);
      b.set_key(keys > 0 ? seq % keys : seq);
      if (record_address) {
        std::lock_guard<std::mutex> lock(observed().mu);
        observed().source_address[{me, seq}] = b.data();
      }
      out.write(std::move(b));
    }
  }
};

class JRelay : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    auto& out = ctx.output("out");
    const int sleep = ctx.arg<int>("sleep_us", 0);
    const auto me = static_cast<std::uint32_t>(ctx.copy_index());
    std::map<std::uint32_t, std::uint64_t> next;
    std::uint64_t seq = 0;
    while (auto b = in.read()) {
      Header h;
      if (check(ctx, *b, next, h)) {
        h.hop = me;
        h.hop_seq = seq++;
        std::memcpy(b->data(), &h, sizeof h);
      }
      sleep_us(sleep);
      out.write(std::move(*b));
    }
  }
};

class JSink : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    const std::int64_t transforms = ctx.arg<std::int64_t>("transforms", -1);
    const int sleep = ctx.arg<int>("sleep_us", 0);
    const bool check_aux = ctx.arg<bool>("check_aux", false);
    std::map<std::uint32_t, std::uint64_t> next;
    std::map<std::uint32_t, std::vector<std::uint64_t>> seen;  // merged at the end: no lock per buffer
    std::map<std::uint64_t, std::set<std::uint32_t>> key_hops;
    std::map<std::uint32_t, std::uint64_t> per_hop;
    std::vector<std::pair<std::pair<std::uint32_t, std::uint64_t>, std::pair<const void*, std::uint64_t>>> addresses;
    std::uint64_t count = 0;
    while (auto b = in.read()) {
      ++count;
      Header h;
      if (check(ctx, *b, next, h)) {
        seen[h.source].push_back(h.seq);
        if (transforms >= 0 && h.transforms != transforms) {
          observed().violation(where(ctx) + ": seq " + std::to_string(h.seq) + " went through " +
                               std::to_string(h.transforms) + " transforms, not " + std::to_string(transforms));
        }
        key_hops[b->key()].insert(h.hop);
        ++per_hop[h.hop];
        if (check_aux) addresses.push_back({{h.source, h.seq}, {b->data(), h.aux}});
      }
      sleep_us(sleep);
    }
    std::lock_guard<std::mutex> lock(observed().mu);
    auto& o = observed();
    for (auto& [source, seqs] : seen) {
      auto& counts = o.arrivals[source];
      for (std::uint64_t s : seqs) {
        if (counts.size() <= s) counts.resize(s + 1, 0);
        ++counts[s];
      }
    }
    o.received += count;
    for (auto& [key, hops] : key_hops) o.key_hops[key].insert(hops.begin(), hops.end());
    for (auto& [hop, n] : per_hop) o.per_hop[hop] += n;
    for (auto& [id, seen_at] : addresses) {
      auto found = o.source_address.find(id);
      const void* java = reinterpret_cast<const void*>(static_cast<std::uintptr_t>(seen_at.second));
      if (found == o.source_address.end() || found->second != seen_at.first || java != seen_at.first) {
        if (o.violations.size() < 20) {
          o.violations.push_back("zero copy: seq " + std::to_string(id.second) + " at source " +
                                 std::to_string(reinterpret_cast<std::uintptr_t>(
                                     found == o.source_address.end() ? nullptr : found->second)) +
                                 ", in Java " + std::to_string(seen_at.second) + ", at sink " +
                                 std::to_string(reinterpret_cast<std::uintptr_t>(seen_at.first)));
        }
      } else {
        ++o.address_checks;
      }
    }
  }
};

class JTextSink : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    while (auto b = in.read()) {
      std::lock_guard<std::mutex> lock(observed().mu);
      observed().lines.emplace_back(b->text());
    }
  }
};

}  // namespace

void Observations::reset() {
  std::lock_guard<std::mutex> lock(mu);
  violations.clear();
  arrivals.clear();
  received = 0;
  key_hops.clear();
  per_hop.clear();
  source_address.clear();
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

}  // namespace jtest

SLUICE_FILTER(jtest::JSource)
SLUICE_FILTER(jtest::JRelay)
SLUICE_FILTER(jtest::JSink)
SLUICE_FILTER(jtest::JTextSink)
