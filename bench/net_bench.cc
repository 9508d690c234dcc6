// Remote C++ -> C++ streams (two processes, each with an Engine and a DataPlane, over
// loopback) vs iperf3, ZeroMQ tcp PUSH/PULL and a TCP ping-pong, side by side in one run.
//
// The bench forks: the parent is host "a" (producers), the child is host "b" (consumers),
// each with its own Engine and DataPlane, talking over 127.0.0.1 as two app daemons would.
// A socketpair between them carries addresses and "go"/"done" per unit of work. Each
// repetition runs sluice and then the peer, so machine noise hits both alike; medians.
//   64 KiB throughput: BenchSource -> BenchSink, vs `iperf3 -c` single stream (-l 64K).
//   100 B msg/s:       BenchSource -> BenchSink, vs ZeroMQ tcp PUSH/PULL (zmq_msg_send,
//                      as ZeroMQ's remote_thr/local_thr), in this process, two threads.
//   64 B half RTT:     Pinger -> Ponger -> Pinger, one buffer in flight, vs `sockperf
//                      ping-pong --tcp` (half round trip, as sockperf reports it) and a raw
//                      TCP ping-pong written here (two processes, blocking send/recv).
// Usage: net_bench [--reps N] [--quick] [--only CASES] [--peer-netns NS --addr-a IP --addr-b IP]
//   --only CASES: run just these cases, comma-separated (64KiB, 100B, pingpong, 64KiB-tls, 100B-tls).
//
// Across a veth pair (bench/net_veth.sh, as root): run net_bench inside namespace A
// (`ip netns exec A net_bench ...`) with --peer-netns B: the forked host b enters namespace B
// (setns) before it binds, host a listens on --addr-a and host b on --addr-b, and the peers
// run across the same pair: iperf3 and sockperf servers in B (`ip netns exec B`), clients in
// A; the raw ping-pong's echo process and ZeroMQ's PULL side (a forked process) in B.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "net/data_plane.h"
#include "runtime/backends.h"
#include "runtime/engine.h"
#include "bench_common.h"
#include "sluice/sluice.h"
#include "topology/topology.h"

namespace {

using Clock = std::chrono::steady_clock;

// Where the two hosts live: loopback by default; with --peer-netns, host b (the forked
// child and every peer's server side) is in that network namespace.
std::string addr_a = "127.0.0.1";
std::string addr_b = "127.0.0.1";
std::string peer_netns;

// Moves the calling process (single-threaded: right after fork) into namespace B.
void enter_peer_netns() {
  if (peer_netns.empty()) return;
  const std::string path = "/var/run/netns/" + peer_netns;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
    std::perror(("setns " + path).c_str());
    _exit(1);
  }
  close(fd);
}

// A command prefix that runs a peer's server side in host b's namespace.
std::string in_b() { return peer_netns.empty() ? "" : "ip netns exec " + peer_netns + " "; }

using bench::BenchSink;
using bench::BenchSource;
using bench::median;
using bench::si;

// Sends one buffer, waits for it to come back (through Catcher, its neighbour in the same
// process: sluice graphs are acyclic), `count` times.
std::atomic<std::uint64_t> pongs{0};

class Pinger : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    const std::uint64_t count = ctx.arg<std::uint64_t>("count");
    const std::size_t size = ctx.arg<std::size_t>("size");
    const std::uint64_t base = pongs.load();
    for (std::uint64_t i = 0; i < count; ++i) {
      sluice::Buffer b = out.allocate();
      b.resize(size);
      std::memcpy(b.data(), &i, 8);
      out.write(std::move(b));
      // Spin, but let a thread that shares this CPU run (sched_yield), as the
      // runtime's own waits do.
      while (pongs.load(std::memory_order_acquire) != base + i + 1) std::this_thread::yield();
    }
  }
};

class Catcher : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    while (auto b = in.read()) {
      b.reset();
      pongs.fetch_add(1, std::memory_order_release);
    }
  }
};

class Ponger : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    auto& out = ctx.output("out");
    while (auto b = in.read()) out.write(std::move(*b));
  }
};

// ---- the parent/child control line ----
void send_line(int fd, const std::string& line) {
  std::string l = line + "\n";
  if (write(fd, l.data(), l.size()) != static_cast<ssize_t>(l.size())) {
    std::perror("control write");
    std::exit(1);
  }
}
std::string read_line(int fd) {
  std::string line;
  char c;
  while (read(fd, &c, 1) == 1) {
    if (c == '\n') return line;
    line += c;
  }
  std::fprintf(stderr, "control: peer process went away\n");
  std::exit(1);
}

struct Scenario {
  std::string name;
  std::string yaml;
  std::map<std::string, sluice::Placement> placements;
};

sluice::Placement place(std::map<std::string, std::vector<int>> local) {
  sluice::Placement p;
  p.local = std::move(local);
  return p;
}

Scenario stream_scenario(const std::string& name, std::size_t size, std::uint64_t count, std::size_t depth,
                         bool encrypt = false) {
  Scenario s;
  s.name = name;
  s.yaml = "filters:\n"
           "  src:  {class: BenchSource, args: {count: " + std::to_string(count) + ", size: " + std::to_string(size) +
           "}}\n"
           "  sink: {class: BenchSink}\n"
           "streams:\n"
           "  - {from: src.out, to: sink.in, buffer_size: " + std::to_string(size) + ", depth: " +
           std::to_string(depth) + (encrypt ? ", encrypt: true" : "") + "}\n";
  s.placements = {{"a", place({{"src", {0}}})}, {"b", place({{"sink", {0}}})}};
  return s;
}

Scenario ping_scenario(std::size_t size, std::uint64_t count) {
  Scenario s;
  s.name = "pingpong";
  s.yaml = "filters:\n"
           "  ping: {class: Pinger, args: {count: " + std::to_string(count) + ", size: " + std::to_string(size) + "}}\n"
           "  pong: {class: Ponger}\n"
           "  catch: {class: Catcher}\n"
           "streams:\n"
           "  - {from: ping.out, to: pong.in, buffer_size: " + std::to_string(size) + ", depth: 16}\n"
           "  - {from: pong.out, to: catch.in, buffer_size: " + std::to_string(size) + ", depth: 16}\n";
  s.placements = {{"a", place({{"ping", {0}}, {"catch", {0}}})}, {"b", place({{"pong", {0}}})}};
  return s;
}

// Runs `reps` units of `scenario` as host `self`; the parent times each unit (from "go" to
// the child's "done") and calls between(rep) after each, to run the peer benchmark.
template <typename Between>
std::vector<double> run_scenario(const Scenario& scenario, bool parent, int fd, int reps, Between between) {
  const std::string self = parent ? "a" : "b";
  const std::string peer = parent ? "b" : "a";
  sluice::topo::Topology topology = sluice::topo::parse_topology_text(scenario.yaml, "bench.yaml", ".");
  topology.work.assign(static_cast<std::size_t>(reps), "");
  sluice::check_loadable(topology);
  std::vector<double> seconds;
  sluice::DataPlaneOptions plane_options;
  plane_options.listen = (parent ? addr_a : addr_b) + ":0";
  plane_options.key = "net-bench-run-key-0123456789";  // both processes of the benchmark
  sluice::DataPlane plane(topology, scenario.placements, self, plane_options);
  send_line(fd, plane.listen_address());
  const std::string peer_address = read_line(fd);
  {
    sluice::EngineOptions options;
    options.host = self;
    options.placement = scenario.placements.at(self);
    options.wiring = &plane;
    sluice::Engine engine(topology, options);
    plane.set_failure_callback([&engine](const std::string& why) { engine.cancel(why); });
    plane.connect({{peer, peer_address}}, std::chrono::seconds(10));
    if (auto f = engine.start()) throw sluice::Error(f->str());
    for (int rep = 0; rep < reps; ++rep) {
      if (parent) {
        const auto start = Clock::now();
        send_line(fd, "go");
        if (auto f = engine.run_unit(static_cast<std::uint64_t>(rep), "")) throw sluice::Error(f->str());
        if (read_line(fd) != "done") throw sluice::Error("child failed");
        seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
        between(rep);
      } else {
        read_line(fd);
        if (auto f = engine.run_unit(static_cast<std::uint64_t>(rep), "")) throw sluice::Error(f->str());
        send_line(fd, "done");
      }
    }
    // Both sides stop only when both are done (BYE on a quiet connection).
    send_line(fd, "stop");
    read_line(fd);
    plane.stop();
  }
  return seconds;
}

// ---- peers ----
std::string run_command(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

bool have(const char* tool) { return std::system((std::string("command -v ") + tool + " >/dev/null 2>&1").c_str()) == 0; }

int free_port() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len);
  close(s);
  return ntohs(addr.sin_port);
}

// iperf3 single stream, 64 KiB writes, `secs` seconds: MB/s received (0 if unavailable).
double iperf3_mb_per_s(double secs) {
  const int port = free_port();
  std::system((in_b() + "iperf3 -s -1 -B " + addr_b + " -p " + std::to_string(port) + " >/dev/null 2>&1 &").c_str());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  char t[32];
  std::snprintf(t, sizeof t, "%.1f", secs);
  const std::string json =
      run_command("iperf3 -c " + addr_b + " -p " + std::to_string(port) + " -l 64K -t " + t + " -J 2>/dev/null");
  // "sum_received": {... "bits_per_second": X ...}
  auto at = json.find("\"sum_received\"");
  if (at == std::string::npos) return 0;
  at = json.find("\"bits_per_second\"", at);
  if (at == std::string::npos) return 0;
  at = json.find(':', at);
  return std::strtod(json.c_str() + at + 1, nullptr) / 8 / 1e6;
}

// sockperf TCP ping-pong, `size` bytes: the average half round trip in microseconds.
double sockperf_half_rtt_us(std::size_t size, double secs) {
  const int port = free_port();
  const std::string p = std::to_string(port);
  std::system((in_b() + "sockperf sr --tcp -i " + addr_b + " -p " + p + " >/dev/null 2>&1 & echo $! > /tmp/sluice_sockperf.pid").c_str());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  char t[32];
  std::snprintf(t, sizeof t, "%.0f", std::max(1.0, secs));
  const std::string out = run_command("sockperf pp --tcp -i " + addr_b + " -p " + p + " -m " + std::to_string(size) +
                                      " -t " + t + " 2>&1");
  std::system("kill $(cat /tmp/sluice_sockperf.pid) 2>/dev/null; rm -f /tmp/sluice_sockperf.pid");
  auto at = out.find("avg-latency=");
  if (at == std::string::npos) at = out.find("avg-lat=");
  if (at == std::string::npos) return 0;
  return std::strtod(out.c_str() + out.find('=', at) + 1, nullptr);
}

// A raw TCP ping-pong between two processes (blocking send/recv, TCP_NODELAY).
// The echo side is a forked process on host b (in namespace B with --peer-netns): it binds,
// tells the parent its port through a pipe, and echoes.
double raw_half_rtt_us(std::size_t size, int count) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  inet_pton(AF_INET, addr_b.c_str(), &addr.sin_addr);
  const int one = 1;
  int ready[2];
  if (pipe(ready) != 0) return 0;
  auto exchange = [&](int fd, bool first) {
    std::vector<char> buf(size);
    for (int i = 0; i < count; ++i) {
      if (first) send(fd, buf.data(), size, 0);
      for (std::size_t got = 0; got < size;) {
        ssize_t n = recv(fd, buf.data() + got, size - got, 0);
        if (n <= 0) return;
        got += static_cast<std::size_t>(n);
      }
      if (!first) send(fd, buf.data(), size, 0);
    }
  };
  pid_t child = fork();
  if (child == 0) {
    close(ready[0]);
    enter_peer_netns();
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
    listen(listener, 1);
    const std::uint16_t port = addr.sin_port;
    if (write(ready[1], &port, sizeof port) != sizeof port) _exit(1);
    int fd = accept(listener, nullptr, nullptr);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    exchange(fd, false);
    _exit(0);
  }
  close(ready[1]);
  std::uint16_t port = 0;
  if (read(ready[0], &port, sizeof port) != sizeof port) return 0;
  close(ready[0]);
  addr.sin_port = port;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const auto start = Clock::now();
  exchange(fd, true);
  const double secs = std::chrono::duration<double>(Clock::now() - start).count();
  close(fd);
  waitpid(child, nullptr, 0);
  return secs / count / 2 * 1e6;
}

// ZeroMQ tcp PUSH/PULL, `count` messages of `size` bytes: messages per second.
double zmq_tcp_msgs_per_s(std::size_t size, std::uint64_t count) {
  void* ctx = zmq_ctx_new();
  void* pull = zmq_socket(ctx, ZMQ_PULL);
  void* push = zmq_socket(ctx, ZMQ_PUSH);
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(free_port());
  zmq_bind(pull, endpoint.c_str());
  zmq_connect(push, endpoint.c_str());
  // Warm the connection up: the first message waits for the TCP handshake.
  zmq_send(push, "x", 1, 0);
  char warm[8];
  zmq_recv(pull, warm, sizeof warm, 0);
  const auto start = Clock::now();
  std::thread sender([&] {
    for (std::uint64_t i = 0; i < count; ++i) {
      zmq_msg_t msg;
      zmq_msg_init_size(&msg, size);
      std::memcpy(zmq_msg_data(&msg), &i, std::min<std::size_t>(size, 8));
      zmq_msg_send(&msg, push, 0);
    }
  });
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    zmq_msg_recv(&msg, pull, 0);
    sum += static_cast<unsigned char*>(zmq_msg_data(&msg))[0];
    zmq_msg_close(&msg);
  }
  const double secs = std::chrono::duration<double>(Clock::now() - start).count();
  sender.join();
  int zero = 0;
  zmq_setsockopt(push, ZMQ_LINGER, &zero, sizeof zero);
  zmq_close(push);
  zmq_close(pull);
  zmq_ctx_term(ctx);
  (void)sum;
  return static_cast<double>(count) / secs;
}

// As above, with the PULL side in a forked process on host b (in namespace B): it binds on
// addr_b, takes the warm-up message, then times `count` messages from the first to the last
// and reports the seconds through a pipe. Used with --peer-netns.
double zmq_tcp_msgs_per_s_split(std::size_t size, std::uint64_t count) {
  int up[2];
  if (pipe(up) != 0) return 0;
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    close(up[0]);
    enter_peer_netns();
    const int port = free_port();
    void* ctx = zmq_ctx_new();
    void* pull = zmq_socket(ctx, ZMQ_PULL);
    const std::string endpoint = "tcp://" + addr_b + ":" + std::to_string(port);
    if (zmq_bind(pull, endpoint.c_str()) != 0) _exit(1);
    double secs = port;
    if (write(up[1], &secs, sizeof secs) != sizeof secs) _exit(1);
    char warm[8];
    zmq_recv(pull, warm, sizeof warm, 0);
    const auto start = Clock::now();
    for (std::uint64_t i = 0; i < count; ++i) {
      zmq_msg_t msg;
      zmq_msg_init(&msg);
      zmq_msg_recv(&msg, pull, 0);
      zmq_msg_close(&msg);
    }
    secs = std::chrono::duration<double>(Clock::now() - start).count();
    if (write(up[1], &secs, sizeof secs) != sizeof secs) _exit(1);
    zmq_close(pull);
    zmq_ctx_term(ctx);
    _exit(0);
  }
  close(up[1]);
  double value = 0;
  if (read(up[0], &value, sizeof value) != sizeof value) {
    waitpid(child, nullptr, 0);
    return 0;
  }
  void* ctx = zmq_ctx_new();
  void* push = zmq_socket(ctx, ZMQ_PUSH);
  const std::string endpoint = "tcp://" + addr_b + ":" + std::to_string(static_cast<int>(value));
  zmq_connect(push, endpoint.c_str());
  zmq_send(push, "x", 1, 0);
  for (std::uint64_t i = 0; i < count; ++i) {
    zmq_msg_t msg;
    zmq_msg_init_size(&msg, size);
    std::memcpy(zmq_msg_data(&msg), &i, std::min<std::size_t>(size, 8));
    zmq_msg_send(&msg, push, 0);
  }
  const bool ok = read(up[0], &value, sizeof value) == sizeof value;
  close(up[0]);
  waitpid(child, nullptr, 0);
  int zero = 0;
  zmq_setsockopt(push, ZMQ_LINGER, &zero, sizeof zero);
  zmq_close(push);
  zmq_ctx_term(ctx);
  return ok && value > 0 ? static_cast<double>(count) / value : 0;
}

}  // namespace

SLUICE_FILTER(BenchSource)
SLUICE_FILTER(BenchSink)
SLUICE_FILTER(Pinger)
SLUICE_FILTER(Ponger)
SLUICE_FILTER(Catcher)

// --only: a case runs when its name is in the comma-separated list (all of them when empty).
bool wanted(const Scenario& scenario, const std::string& only) {
  return only.empty() || ("," + only + ",").find("," + scenario.name + ",") != std::string::npos;
}

int main(int argc, char** argv) {
  bench::Options options;
  CLI::App app{"net_bench: a remote C++ -> C++ stream (two processes, DataPlane over TCP) against its peers"};
  bench::add_common_options(app, &options);
  app.add_option("--peer-netns", peer_netns, "run host b and the peers' servers in this network namespace")
      ->type_name("NAME");
  app.add_option("--addr-a", addr_a, "host a's IPv4 address")
      ->type_name("IPV4")
      ->capture_default_str()
      ->check(CLI::ValidIPV4.description(""));
  app.add_option("--addr-b", addr_b, "host b's IPv4 address")
      ->type_name("IPV4")
      ->capture_default_str()
      ->check(CLI::ValidIPV4.description(""));
  std::string only;
  app.add_option("--only", only, "run only these cases, comma-separated: 64KiB, 100B, pingpong, 64KiB-tls, 100B-tls")
      ->type_name("CASES");
  bench::parse_or_exit(app, argc, argv);
  const int reps = options.reps;
  const bool quick = options.quick;
  const std::uint64_t big_count = quick ? 5000 : 40000;        // 64 KiB buffers
  const std::uint64_t small_count = quick ? 200000 : 2000000;  // 100 B buffers
  const std::uint64_t pings = quick ? 2000 : 20000;
  const std::vector<Scenario> scenarios = {stream_scenario("64KiB", 65536, big_count, 32),
                                           stream_scenario("100B", 100, small_count, 1024),
                                           ping_scenario(64, pings),
                                           stream_scenario("64KiB-tls", 65536, big_count, 32, true),
                                           stream_scenario("100B-tls", 100, small_count, 1024, true)};
  // A misspelt case would run nothing and print an empty table: name the ones there are.
  for (std::size_t from = 0; !only.empty() && from <= only.size();) {
    const std::size_t comma = std::min(only.find(',', from), only.size());
    const std::string name = only.substr(from, comma - from);
    bool known = false;
    for (const Scenario& s : scenarios) known = known || s.name == name;
    if (!known) {
      std::fprintf(stderr, "net_bench: --only: no case '%s'; the cases are 64KiB, 100B, pingpong, 64KiB-tls, 100B-tls\n",
                   name.c_str());
      return 2;
    }
    from = comma + 1;
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) {
    std::perror("socketpair");
    return 1;
  }
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    enter_peer_netns();
    try {
      for (const Scenario& s : scenarios) {
        if (wanted(s, only)) run_scenario(s, false, fds[1], reps, [](int) {});
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "net_bench (host b): %s\n", e.what());
      _exit(1);
    }
    _exit(0);
  }
  close(fds[1]);
  const int fd = fds[0];
  const bool iperf = have("iperf3");
  const bool sockperf = have("sockperf");
  std::vector<double> iperf_mb, zmq_msgs, sockperf_us, raw_us;
  std::vector<double> big, small, ping, big_tls, small_tls;
  try {
    if (wanted(scenarios[0], only)) {
      big = run_scenario(scenarios[0], true, fd, reps, [&](int) {
        if (iperf) iperf_mb.push_back(iperf3_mb_per_s(quick ? 1 : 2));
      });
    }
    if (wanted(scenarios[1], only)) {
      small = run_scenario(scenarios[1], true, fd, reps, [&](int) {
        zmq_msgs.push_back(peer_netns.empty() ? zmq_tcp_msgs_per_s(100, small_count)
                                              : zmq_tcp_msgs_per_s_split(100, small_count));
      });
    }
    if (wanted(scenarios[2], only)) {
      ping = run_scenario(scenarios[2], true, fd, reps, [&](int) {
        if (sockperf) sockperf_us.push_back(sockperf_half_rtt_us(64, quick ? 1 : 2));
        raw_us.push_back(raw_half_rtt_us(64, static_cast<int>(pings)));
      });
    }
    if (wanted(scenarios[3], only)) big_tls = run_scenario(scenarios[3], true, fd, reps, [](int) {});
    if (wanted(scenarios[4], only)) small_tls = run_scenario(scenarios[4], true, fd, reps, [](int) {});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "net_bench: %s\n", e.what());
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    return 1;
  }
  int status = 0;
  waitpid(child, &status, 0);

  for (auto* v : {&big, &big_tls}) {
    for (double& s : *v) s = static_cast<double>(big_count) * 65536 / s / 1e6;
  }
  for (auto* v : {&small, &small_tls}) {
    for (double& s : *v) s = static_cast<double>(small_count) / s;
  }
  for (double& s : ping) s = s / static_cast<double>(pings) / 2 * 1e6;
  int major, minor, patch;
  zmq_version(&major, &minor, &patch);
  if (peer_netns.empty()) {
    std::printf("## Remote C++ -> C++ stream over loopback (two processes, DataPlane over TCP)\n\n");
  } else {
    std::printf("## Remote C++ -> C++ stream across a veth pair (two network namespaces, %s -> %s)\n\n",
                addr_a.c_str(), addr_b.c_str());
    std::printf("Host a and every peer's client side run in one namespace, host b and every peer's\n"
                "server side (iperf3 -s, sockperf sr, the raw echo, ZeroMQ's PULL in its own process)\n"
                "in the other; all traffic crosses the veth pair.\n\n");
  }
  std::printf("Medians of %d interleaved repetitions. Host a (parent process) runs the producer, host b\n"
              "(forked child) the consumer; each has its own Engine, DataPlane and I/O thread.\n"
              "64 KiB: depth 32; 100 B: depth 1024 (ZeroMQ's default high-water mark is 1000).\n\n", reps);
  std::printf("| what | sluice | peer | ratio (sluice / peer) | bar |\n|---|---:|---:|---:|---|\n");
  const double b = median(big), ip = median(iperf_mb);
  if (!big.empty() && iperf) {
    std::printf("| 64 KiB throughput, MB/s | %.0f | %.0f (iperf3 -l 64K, single stream) | **%.2f** | >= 0.90 |\n", b, ip,
                ip > 0 ? b / ip : 0);
  } else if (!big.empty()) {
    std::printf("| 64 KiB throughput, MB/s | %.0f | iperf3 not installed | - | >= 0.90 |\n", b);
  }
  const double sm = median(small), zm = median(zmq_msgs);
  if (!small.empty()) {
    std::printf("| 100 B buffers/s | %s | %s (ZeroMQ %d.%d.%d tcp PUSH/PULL) | **%.2f** | >= 1.0 |\n", si(sm).c_str(),
                si(zm).c_str(), major, minor, patch, zm > 0 ? sm / zm : 0);
  }
  const double pg = median(ping), sp = median(sockperf_us), raw = median(raw_us);
  if (!ping.empty() && sockperf) {
    std::printf("| 64 B half round trip, us | %.1f | %.1f (sockperf ping-pong --tcp) | **%.2f** | <= 1.2 |\n", pg, sp,
                sp > 0 ? pg / sp : 0);
  }
  if (!ping.empty()) {
    std::printf("| 64 B half round trip, us | %.1f | %.1f (raw TCP ping-pong, blocking send/recv) | **%.2f** | <= 1.2 |\n",
                pg, raw, raw > 0 ? pg / raw : 0);
  }
  if (!big_tls.empty() || !small_tls.empty()) {
    std::printf("\nWhat encryption costs (`encrypt: true` on the stream: TLS 1.3 keyed by the run key, "
                "AES-128-GCM), medians of %d runs after the plain ones:\n\n", reps);
    std::printf("| what | encrypted | plain (above) | ratio (encrypted / plain) |\n|---|---:|---:|---:|\n");
    const double bt = median(big_tls), st = median(small_tls);
    if (!big_tls.empty()) std::printf("| 64 KiB throughput, MB/s | %.0f | %.0f | **%.2f** |\n", bt, b, b > 0 ? bt / b : 0);
    if (!small_tls.empty()) {
      std::printf("| 100 B buffers/s | %s | %s | **%.2f** |\n", si(st).c_str(), si(sm).c_str(), sm > 0 ? st / sm : 0);
    }
  }
  std::printf("\n");
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
