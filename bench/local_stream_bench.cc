// Local C++ -> C++ stream vs ZeroMQ inproc PUSH/PULL, side by side in one process and run.
//
// For each buffer size, repetitions alternate sluice and the ZeroMQ variants so that
// machine noise hits all of them alike; we report medians and ratios.
//   sluice:        BenchSource allocates a pooled buffer, writes 8 bytes, writes it on;
//                  BenchSink reads it, touches one byte, drops it (back to the pool).
//   zmq msg:       as ZeroMQ's own inproc_thr: zmq_msg_init_size + 8 bytes + zmq_msg_send;
//                  receiver zmq_msg_recv, touches one byte, zmq_msg_close.
//   zmq send:      the usual application pattern: zmq_send from the producer's own buffer
//                  (ZeroMQ copies it), zmq_recv into the receiver's buffer (copies again).
// Usage: local_stream_bench [--reps N] [--quick]
#include <zmq.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "runtime/backends.h"
#include "runtime/engine.h"
#include "bench_common.h"
#include "sluice/sluice.h"
#include "topology/size.h"
#include "topology/topology.h"

namespace {

using Clock = std::chrono::steady_clock;

using bench::BenchSink;
using bench::BenchSource;
using bench::count_for;
using bench::depth_for;
using bench::median;
using bench::si;

struct Result {
  double msgs_per_s = 0;
  double mb_per_s = 0;
};

// One sluice run: `copies` sources -> `copies` sinks, `count` buffers per source.
Result run_sluice(std::size_t size, std::uint64_t count, int copies) {
  std::string yaml =
      "filters:\n"
      "  src:  {class: BenchSource, copies: " + std::to_string(copies) +
      ", args: {count: " + std::to_string(count) + ", size: " + std::to_string(size) + "}}\n"
      "  sink: {class: BenchSink, copies: " + std::to_string(copies) + "}\n"
      "streams:\n"
      "  - {from: src.out, to: sink.in, buffer_size: " + std::to_string(std::max<std::size_t>(size, 1)) +
      ", depth: " + std::to_string(depth_for(size)) + "}\n";
  sluice::topo::Topology t = sluice::topo::parse_topology_text(yaml, "bench.yaml", ".");
  sluice::check_loadable(t);
  sluice::Engine engine(t);
  if (auto f = engine.start()) throw sluice::Error(f->str());
  auto start = Clock::now();
  if (auto f = engine.run_unit(0, "")) throw sluice::Error(f->str());
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  double msgs = static_cast<double>(count) * copies;
  return {msgs / secs, msgs * static_cast<double>(size) / secs / 1e6};
}

void check(int rc, const char* what) {
  if (rc != 0) {
    std::fprintf(stderr, "%s: %s\n", what, zmq_strerror(zmq_errno()));
    std::exit(1);
  }
}

// One ZeroMQ inproc PUSH/PULL run. copy_mode: zmq_send/zmq_recv with application buffers.
Result run_zmq(std::size_t size, std::uint64_t count, bool copy_mode) {
  void* ctx = zmq_ctx_new();
  void* pull = zmq_socket(ctx, ZMQ_PULL);
  void* push = zmq_socket(ctx, ZMQ_PUSH);
  check(zmq_bind(pull, "inproc://bench"), "bind");
  check(zmq_connect(push, "inproc://bench"), "connect");
  auto start = Clock::now();
  std::thread sender([&] {
    std::vector<char> app(std::max<std::size_t>(size, 8));
    for (std::uint64_t i = 0; i < count; ++i) {
      if (copy_mode) {
        std::memcpy(app.data(), &i, std::min<std::size_t>(size, 8));
        zmq_send(push, app.data(), size, 0);
      } else {
        zmq_msg_t msg;
        zmq_msg_init_size(&msg, size);
        std::memcpy(zmq_msg_data(&msg), &i, std::min<std::size_t>(size, 8));
        zmq_msg_send(&msg, push, 0);
      }
    }
  });
  std::uint64_t sum = 0;
  std::vector<char> app(std::max<std::size_t>(size, 8));
  for (std::uint64_t i = 0; i < count; ++i) {
    if (copy_mode) {
      zmq_recv(pull, app.data(), size, 0);
      sum += static_cast<unsigned char>(app[0]);
    } else {
      zmq_msg_t msg;
      zmq_msg_init(&msg);
      zmq_msg_recv(&msg, pull, 0);
      if (size > 0) sum += static_cast<unsigned char*>(zmq_msg_data(&msg))[0];
      zmq_msg_close(&msg);
    }
  }
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  sender.join();
  zmq_close(push);
  zmq_close(pull);
  zmq_ctx_term(ctx);
  (void)sum;
  double msgs = static_cast<double>(count);
  return {msgs / secs, msgs * static_cast<double>(size) / secs / 1e6};
}

}  // namespace

SLUICE_FILTER(BenchSource)
SLUICE_FILTER(BenchSink)

int main(int argc, char** argv) {
  bench::Options options;
  CLI::App app{"local_stream_bench: a local C++ -> C++ stream against ZeroMQ inproc PUSH/PULL"};
  bench::add_common_options(app, &options);
  bench::parse_or_exit(app, argc, argv);
  const int reps = options.reps;
  const bool quick = options.quick;
  int major, minor, patch;
  zmq_version(&major, &minor, &patch);
  const bench::Hogs hogs(options.hogs);
  const std::string under = options.hogs > 0 ? ", " + std::to_string(options.hogs) + " CPU hogs running" : "";
  std::printf("## Local C++ -> C++ stream vs ZeroMQ %d.%d.%d inproc PUSH/PULL%s\n\n", major, minor, patch,
              under.c_str());
  std::printf("Medians of %d interleaved repetitions; one producer copy, one consumer copy (ZeroMQ: one thread each).\n"
              "sluice depth: 256 buffers up to 1 KiB, 16 above. ratio = sluice / best ZeroMQ variant.\n\n", reps);
  std::printf("| size | sluice msg/s | zmq msg (inproc_thr) msg/s | zmq_send msg/s | msg/s ratio | sluice MB/s | best zmq MB/s | MB/s ratio | sluice ns/buffer |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (std::size_t size : {10, 100, 1000, 10000, 65536, 1048576}) {
    std::uint64_t count = count_for(size, quick);
    std::vector<double> s_msgs, s_mb, zm_msgs, zm_mb, zs_msgs, zs_mb;
    for (int r = 0; r < reps; ++r) {
      Result a = run_sluice(size, count, 1);
      Result b = run_zmq(size, count, false);
      Result c = run_zmq(size, count, true);
      s_msgs.push_back(a.msgs_per_s); s_mb.push_back(a.mb_per_s);
      zm_msgs.push_back(b.msgs_per_s); zm_mb.push_back(b.mb_per_s);
      zs_msgs.push_back(c.msgs_per_s); zs_mb.push_back(c.mb_per_s);
    }
    double sm = median(s_msgs), zm = std::max(median(zm_msgs), median(zs_msgs));
    double smb = median(s_mb), zmb = std::max(median(zm_mb), median(zs_mb));
    std::printf("| %s | %s | %s | %s | **%.2fx** | %.0f | %.0f | **%.2fx** | %.0f |\n",
                sluice::topo::format_size(size).c_str(), si(sm).c_str(), si(median(zm_msgs)).c_str(),
                si(median(zs_msgs)).c_str(), sm / zm, smb, zmb, smb / zmb, 1e9 / sm);
    std::fflush(stdout);
  }

  if (options.hogs > 0) return 0;  // the scaling table is for a quiet machine
  std::printf("\n### Scaling with copies (N sources -> N sinks, round_robin), sluice only\n\n");
  std::printf("| copies | 100 B msg/s | 64 KiB MB/s |\n|---:|---:|---:|\n");
  for (int copies : {1, 2, 4}) {
    std::vector<double> small, large;
    for (int r = 0; r < reps; ++r) {
      small.push_back(run_sluice(100, count_for(100, quick) / copies, copies).msgs_per_s);
      large.push_back(run_sluice(65536, count_for(65536, quick) / copies, copies).mb_per_s);
    }
    std::printf("| %d | %s | %.0f |\n", copies, si(median(small)).c_str(), median(large));
    std::fflush(stdout);
  }
  return 0;
}
