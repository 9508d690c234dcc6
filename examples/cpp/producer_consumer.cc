// Produce -> (Forward) -> Consume: a stream exercised by buffer size and count.
//
//   Produce  args: size (bytes, default the stream's buffer_size), count (per copy,
//                  default 1000), verify (default true: sequence header and checksum).
//   Forward  passes every buffer on unchanged, zero-copy.
//   Consume  args: verify (default true). Checks, per producer copy, that sequence numbers
//                  only go up (nothing duplicated or reordered) and that checksums match;
//                  at end of work logs what it received. Throws on the first violation.
//                  order (default true): false checks checksums only, for graphs where a
//                  producer's buffers reach a consumer along several paths.
#include <algorithm>
#include <map>
#include <string>

#include <sluice/sluice.h>

#include "sequenced.h"

class Produce : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    const std::size_t size = ctx.arg<std::size_t>("size", out.buffer_size());
    const std::uint64_t count = ctx.arg<std::uint64_t>("count", 1000);
    const bool verify = ctx.arg<bool>("verify", true);
    if (size > out.buffer_size()) {
      throw sluice::Error("args.size " + std::to_string(size) + " exceeds the stream's buffer_size " +
                          std::to_string(out.buffer_size()));
    }
    const auto producer = static_cast<std::uint32_t>(ctx.copy_index());
    for (std::uint64_t seq = 0; seq < count; ++seq) {
      sluice::Buffer buffer = out.allocate();
      buffer.resize(size);
      if (verify) sequenced::fill(buffer.data(), size, producer, seq);
      buffer.set_key(seq);
      out.write(std::move(buffer));
    }
  }
};

class Forward : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    auto& out = ctx.output("out");
    while (auto buffer = in.read()) out.write(std::move(*buffer));
  }
};

class Consume : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    const bool verify = ctx.arg<bool>("verify", true);
    const bool order = ctx.arg<bool>("order", true);
    std::map<std::uint32_t, std::uint64_t> next;  // producer -> lowest acceptable seq
    std::uint64_t buffers = 0;
    std::uint64_t bytes = 0;
    std::uint64_t checked = 0;
    while (auto buffer = in.read()) {
      ++buffers;
      bytes += buffer->size();
      if (!verify) continue;
      sequenced::Header header;
      sequenced::Verdict verdict = sequenced::check(buffer->data(), buffer->size(), &header);
      if (verdict == sequenced::Verdict::kTooSmall) continue;
      if (verdict != sequenced::Verdict::kOk) {
        throw sluice::Error("corrupt buffer #" + std::to_string(buffers) + " (" +
                            (verdict == sequenced::Verdict::kBadMagic ? "bad header" : "checksum mismatch") + ")");
      }
      auto& expected = next[header.producer];
      if (order && header.seq < expected) {
        throw sluice::Error("producer " + std::to_string(header.producer) + " buffer " +
                            std::to_string(header.seq) + " arrived after " + std::to_string(expected - 1) +
                            ": duplicated or reordered");
      }
      expected = std::max(expected, header.seq + 1);
      ++checked;
    }
    ctx.log().info("received " + std::to_string(buffers) + " buffers, " + std::to_string(bytes) +
                   " bytes; " + std::to_string(checked) + (order ? " verified in order from " : " verified from ") +
                   std::to_string(next.size()) + " producer(s)");
  }
};

SLUICE_FILTER(Produce)
SLUICE_FILTER(Forward)
SLUICE_FILTER(Consume)
