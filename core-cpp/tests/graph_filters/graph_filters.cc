// Filters for graphs built by tests, as a shared library (libsluice_graph_filters.so) so
// that in-process tests and real app daemons load the same code. Every filter reports,
// per input port it read, how many buffers arrived and an order-independent checksum of
// their payloads, so a test can compare the same graph run embedded and across hosts.
//
//   GSource  args: count (per copy, default 100), size (bytes, default 64, at least 16).
//            Payload: 8 bytes origin (filter name hash ^ copy), 8 bytes sequence, then
//            bytes derived from both. Key = sequence.
//   GMix     args: order (input ports, comma separated, read one after the other to the
//            end; required), outputs (output
//            ports, comma separated; default none: a sink), copy (bool: write a new buffer
//            with the same bytes instead of forwarding the one read, default false).
//            Each buffer read goes to the output chosen by its payload's hash, so how
//            many buffers each stream carries does not depend on timing.
//   Both     report (a directory): at the end of each unit of work, each copy writes
//            <report>/<filter>.<copy>.<unit> with one line per input port:
//            "<port> <buffers> <checksum>".
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <sluice/sluice.h>

namespace {

std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

std::uint64_t hash_bytes(const std::byte* data, std::size_t size) {
  std::uint64_t h = 0xcbf29ce484222325ULL ^ size;
  for (std::size_t i = 0; i < size; ++i) h = (h ^ static_cast<std::uint8_t>(data[i])) * 0x100000001b3ULL;
  return mix64(h);
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

struct PortTally {
  std::uint64_t buffers = 0;
  std::uint64_t checksum = 0;  // sum of payload hashes: the same whatever the order
};

void write_report(const sluice::Context& ctx, const std::map<std::string, PortTally>& tallies) {
  const std::string dir = ctx.arg("report", "");
  if (dir.empty()) return;
  const std::string path = dir + "/" + ctx.filter_name() + "." + std::to_string(ctx.copy_index()) + "." +
                           std::to_string(ctx.work_index());
  std::ofstream out(path);
  for (const auto& [port, tally] : tallies) out << port << " " << tally.buffers << " " << tally.checksum << "\n";
  if (!out) throw sluice::Error("cannot write the report " + path);
}

class GSource : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    const auto count = ctx.arg<std::uint64_t>("count", 100);
    const auto size = ctx.arg<std::size_t>("size", 64);
    if (size < 16 || size > out.buffer_size()) {
      throw sluice::Error("GSource: size must be 16.." + std::to_string(out.buffer_size()));
    }
    const std::uint64_t origin = hash_bytes(reinterpret_cast<const std::byte*>(ctx.filter_name().data()),
                                            ctx.filter_name().size()) ^
                                 static_cast<std::uint64_t>(ctx.copy_index());
    for (std::uint64_t seq = 0; seq < count; ++seq) {
      sluice::Buffer b = out.allocate();
      b.resize(size);
      std::memcpy(b.data(), &origin, 8);
      std::memcpy(b.data() + 8, &seq, 8);
      for (std::size_t i = 16; i < size; ++i) b.data()[i] = std::byte(mix64(origin + seq + i) & 0xff);
      b.set_key(seq);
      out.write(std::move(b));
    }
  }
  void finalize(sluice::Context& ctx) override { write_report(ctx, {}); }
};

class GMix : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    const std::vector<std::string> order = split(ctx.arg("order"));
    const std::vector<std::string> outputs = split(ctx.arg("outputs", ""));
    const bool copy = ctx.arg<bool>("copy", false);
    tallies_.clear();
    for (const std::string& port : order) {
      auto& in = ctx.input(port);
      PortTally& tally = tallies_[port];
      while (auto b = in.read()) {
        const std::uint64_t h = hash_bytes(b->data(), b->size());
        ++tally.buffers;
        tally.checksum += h;
        if (outputs.empty()) continue;
        auto& out = ctx.output(outputs[h % outputs.size()]);
        if (copy) {
          sluice::Buffer fresh = out.allocate();
          fresh.resize(b->size());
          std::memcpy(fresh.data(), b->data(), b->size());
          fresh.set_key(b->key());
          out.write(std::move(fresh));
        } else {
          out.write(std::move(*b));
        }
      }
    }
  }
  void finalize(sluice::Context& ctx) override { write_report(ctx, tallies_); }

 private:
  std::map<std::string, PortTally> tallies_;
};

}  // namespace

SLUICE_FILTER(GSource)
SLUICE_FILTER(GMix)
