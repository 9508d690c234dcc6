// Filters for the Application tests (libsluice_app_filters.so), loaded by path in process and
// by real app daemons alike. Every result carries who made it, so a client can check order,
// integrity and that filter objects live across units, embedded or across hosts.
//
//   AppSource  Per unit: reads the payload "count=N size=B [fail=source|stage] [sleep_ms=M]"
//              and writes N buffers of B bytes (at least 40) per copy:
//              u64 object id (random per filter object), u64 units this object ran before,
//              u64 copy, u64 sequence (0..N-1), u64 unit index, then bytes derived from
//              (unit, copy, sequence). Key = sequence. fail=source throws after N/2 buffers
//              (fail=source#K: in copy K only).
//   AppStage   Forwards every buffer (a sink without an `out` stream); fail=stage throws at
//              the first buffer; crash=stage dies of SIGSEGV there (across hosts only: it ends
//              the process it runs in).
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <thread>

#include <sluice/sluice.h>

namespace {

std::uint64_t field(const std::string& work, const std::string& name, std::uint64_t fallback) {
  const std::string key = name + "=";
  std::size_t at = work.find(key);
  if (at == std::string::npos) return fallback;
  return std::stoull(work.substr(at + key.size()));
}

bool wants_failure(const std::string& work, const std::string& who) {
  return work.find("fail=" + who) != std::string::npos;
}

class AppSource : public sluice::Filter {
 public:
  AppSource() : id_(std::random_device{}() | (std::uint64_t{std::random_device{}()} << 32)) {}

  void process(sluice::Context& ctx) override {
    const std::string& work = ctx.work();
    const std::uint64_t count = field(work, "count", 10);
    const std::uint64_t size = std::max<std::uint64_t>(40, field(work, "size", 64));
    const std::uint64_t sleep_ms = field(work, "sleep_ms", 0);
    auto& out = ctx.output("out");
    for (std::uint64_t seq = 0; seq < count; ++seq) {
      if (seq == count / 2 && (wants_failure(work, "source#" + std::to_string(ctx.copy_index())) ||
                               (wants_failure(work, "source") && !wants_failure(work, "source#")))) {
        throw sluice::Error("AppSource was told to fail");
      }
      if (sleep_ms != 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
      sluice::Buffer b = out.allocate();
      b.resize(size);
      const std::uint64_t head[5] = {id_, units_, static_cast<std::uint64_t>(ctx.copy_index()), seq, ctx.work_index()};
      std::memcpy(b.data(), head, sizeof head);
      for (std::uint64_t i = sizeof head; i < size; ++i) {
        b.data()[i] = static_cast<std::byte>((ctx.work_index() * 131 + ctx.copy_index() * 31 + seq * 7 + i) & 0xff);
      }
      b.set_key(seq);
      out.write(std::move(b));
    }
  }
  void finalize(sluice::Context&) override { ++units_; }

 private:
  const std::uint64_t id_;
  std::uint64_t units_ = 0;
};

class AppStage : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    sluice::OutputStream* out = ctx.has_output("out") ? &ctx.output("out") : nullptr;  // none: a sink
    while (auto b = in.read()) {
      if (wants_failure(ctx.work(), "stage")) throw sluice::Error("AppStage was told to fail");
      if (ctx.work().find("crash=stage") != std::string::npos) {
        volatile int* nowhere = nullptr;
        *nowhere = 1;  // a real SIGSEGV, as a filter's bug makes one
      }
      if (out != nullptr) out->write(std::move(*b));
    }
  }
};

}  // namespace

SLUICE_FILTER(AppSource)
SLUICE_FILTER(AppStage)
