// The data plane under faults: a peer that goes away mid-run, a peer that breaks the
// protocol, and strangers sending garbage to the listen port.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <boost/asio.hpp>
#include <chrono>
#include <random>
#include <thread>

#include "net/frame.h"
#include "net_cluster.h"
#include "net_test_util.h"
#include "testing/eventually.h"
#include "testing/graph_test_filters.h"

namespace testing_filters {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using sluice::net::CreditFrame;
using sluice::net::DataFrame;
using sluice::net::EndOfWorkFrame;
using sluice::net::test_util::FakePeer;
using sluice::net::test_util::frame;
using sluice::net::test_util::raw_frame;
using sluice::net::test_util::RawHeader;

tcp::endpoint parse(const std::string& address) {
  auto colon = address.rfind(':');
  return {asio::ip::make_address(address.substr(0, colon)),
          static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1)))};
}

using sluice::testing::eventually;

const char* kOneWay = R"(
defaults: {buffer_size: 1KiB, depth: 8}
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 1000000, size: 500}}
  sink: {class: "testing_filters::TestSink"}
streams:
  - {from: src.out, to: sink.in}
)";

std::map<std::string, sluice::Placement> one_way() {
  return {{"a", place({{"src", {0}}})}, {"b", place({{"sink", {0}}})}};
}

class NetFaultTest : public ::testing::Test {
 protected:
  void SetUp() override { observed().reset(); }

  static sluice::topo::Topology one_way_topology() {
    return sluice::topo::parse_topology_text(kOneWay, "test.yaml", SLUICE_TEST_DATA_DIR);
  }

  static sluice::DataPlaneOptions plane_options() {
    sluice::DataPlaneOptions options;
    options.key = Cluster::key();
    return options;
  }

  // Engine options for host a, wired to the other hosts through plane.
  static sluice::EngineOptions host_a_options(sluice::DataPlane& plane) {
    sluice::EngineOptions options;
    options.host = "a";
    options.placement = one_way().at("a");
    options.wiring = &plane;
    return options;
  }
};

TEST_F(NetFaultTest, PeerClosingMidRunIsReportedWithItsHostWithinSeconds) {
  auto topology = one_way_topology();
  sluice::DataPlane plane(topology, one_way(), "a", plane_options());
  sluice::EngineOptions options = host_a_options(plane);
  const sluice::net::Routes b_routes(topology, one_way(), "b");
  FakePeer b(b_routes, Cluster::key());
  std::optional<sluice::Failure> failure;
  std::chrono::steady_clock::time_point closed_at;
  {
    sluice::Engine engine(topology, options);
    plane.set_failure_callback([&engine](const std::string& why) { engine.cancel(why); });
    std::thread peer([&] {
      b.accept();
      // Grant credit, take a few frames, then vanish as if the host died.
      b.write(frame(CreditFrame{0, 0, 8}));
      for (int i = 0; i < 8;) {
        std::string payload;
        if (std::holds_alternative<DataFrame>(b.read_frame(&payload))) ++i;
      }
      closed_at = std::chrono::steady_clock::now();
      b.close();
    });
    try {
      plane.connect({{"b", b.address()}}, std::chrono::seconds(5));
      if (!engine.start()) failure = engine.run_unit(0, "");
    } catch (...) {
      peer.join();
      throw;
    }
    peer.join();
    const auto took = std::chrono::steady_clock::now() - closed_at;
    EXPECT_LT(took, std::chrono::seconds(3));
    plane.stop();
  }
  ASSERT_TRUE(failure);
  EXPECT_NE(failure->str().find("host 'b'"), std::string::npos) << failure->str();
  ASSERT_TRUE(plane.failure());
  EXPECT_NE(plane.failure()->find("data connection to host 'b'"), std::string::npos) << *plane.failure();
}

TEST_F(NetFaultTest, CreditBeyondTheWindowIsAProtocolViolationNamingTheHost) {
  auto topology = one_way_topology();
  sluice::DataPlane plane(topology, one_way(), "a", plane_options());
  sluice::EngineOptions options = host_a_options(plane);
  const sluice::net::Routes b_routes(topology, one_way(), "b");
  FakePeer b(b_routes, Cluster::key());
  std::optional<sluice::Failure> failure;
  {
    sluice::Engine engine(topology, options);
    plane.set_failure_callback([&engine](const std::string& why) { engine.cancel(why); });
    const std::uint32_t window = b_routes.window(0, b_routes.host_index("a"));
    std::thread peer([&] {
      b.accept();
      b.write(frame(CreditFrame{0, 0, window}));
      b.write(frame(CreditFrame{0, 0, window}));  // twice the window
    });
    try {
      // No unit runs, so no credit is spent: the second grant exceeds the window. The
      // violation may come before or after connect returns.
      plane.connect({{"b", b.address()}}, std::chrono::seconds(5));
    } catch (const sluice::Error& e) {
      EXPECT_NE(std::string(e.what()).find("host 'b'"), std::string::npos) << e.what();
    }
    peer.join();
    EXPECT_TRUE(eventually([&] { return plane.failure().has_value(); }));
    plane.stop();
  }
  ASSERT_TRUE(plane.failure());
  EXPECT_NE(plane.failure()->find("host 'b'"), std::string::npos) << *plane.failure();
  EXPECT_NE(plane.failure()->find("protocol violation: CREDIT beyond the window"), std::string::npos)
      << *plane.failure();
}

// A loopback port that was free a moment ago (bound, then closed).
std::string port_nobody_listens_on() {
  asio::io_context io;
  tcp::acceptor probe(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  return std::to_string(probe.local_endpoint().port());
}

TEST_F(NetFaultTest, ConnectNamesTheHostThatDoesNotAnswer) {
  auto topology = one_way_topology();
  sluice::DataPlane plane(topology, one_way(), "a", plane_options());
  sluice::EngineOptions options = host_a_options(plane);
  const std::string port = port_nobody_listens_on();
  sluice::Engine engine(topology, options);
  try {
    plane.connect({{"b", "127.0.0.1:" + port}}, std::chrono::milliseconds(500));
    FAIL() << "connect succeeded";
  } catch (const sluice::Error& e) {
    EXPECT_NE(std::string(e.what()).find("host 'b' at 127.0.0.1:" + port + " did not answer"), std::string::npos)
        << e.what();
  }
  plane.stop();
}

// A caller that waits for its peers while it keeps other connections alive (the console
// launching an application) is called back while connect waits, and can give up at once.
TEST_F(NetFaultTest, ConnectCallsBackWhileItWaitsAndGivesUpWhenTold) {
  auto topology = one_way_topology();
  sluice::DataPlane plane(topology, one_way(), "a", plane_options());
  sluice::EngineOptions options = host_a_options(plane);
  const std::string port = port_nobody_listens_on();
  sluice::Engine engine(topology, options);
  int calls = 0;
  const auto started = std::chrono::steady_clock::now();
  try {
    plane.connect({{"b", "127.0.0.1:" + port}}, std::chrono::seconds(60), [&] { return ++calls < 5; });
    FAIL() << "connect succeeded";
  } catch (const sluice::Error& e) {
    EXPECT_NE(std::string(e.what()).find("stopped connecting"), std::string::npos) << e.what();
  }
  EXPECT_EQ(calls, 5);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30)) << "it waited for the timeout";
  plane.stop();
}

// Both hosts real; mid-run the TCP connection from b to a is shut down under them (as a
// link that goes down): both sides report it, naming the other host, and both engines
// stop within seconds.
TEST_F(NetFaultTest, LinkShutDownMidRunStopsBothHostsNamingThePeer) {
  const std::string yaml = R"(
defaults: {buffer_size: 1KiB, depth: 16}
filters:
  src:  {class: "testing_filters::TestSource", args: {forever: true, size: 500}}
  sink: {class: "testing_filters::TestSink"}
streams:
  - {from: src.out, to: sink.in}
)";
  Cluster cluster(yaml, {{"a", place({{"sink", {0}}})}, {"b", place({{"src", {0}}})}});
  const std::uint16_t a_port = parse(cluster.host("a").plane->listen_address()).port();
  std::optional<std::string> failure;
  const auto start = std::chrono::steady_clock::now();
  std::thread run([&] { failure = cluster.run_all(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // b's socket to a's data port: find it among this process's descriptors.
  int shut = 0;
  for (int fd = 3; fd < 1024; ++fd) {
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) == 0 && peer.sin_family == AF_INET &&
        ntohs(peer.sin_port) == a_port) {
      ::shutdown(fd, SHUT_RDWR);
      ++shut;
    }
  }
  const auto shut_at = std::chrono::steady_clock::now();
  run.join();
  EXPECT_EQ(shut, 1);
  ASSERT_TRUE(failure);
  EXPECT_LT(std::chrono::steady_clock::now() - shut_at, std::chrono::seconds(5));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  auto a_failure = cluster.host("a").plane->failure();
  auto b_failure = cluster.host("b").plane->failure();
  ASSERT_TRUE(a_failure);
  ASSERT_TRUE(b_failure);
  EXPECT_NE(a_failure->find("data connection from host 'b'"), std::string::npos) << *a_failure;
  EXPECT_NE(b_failure->find("data connection to host 'a'"), std::string::npos) << *b_failure;
}

// Strangers send garbage to host b's data port while a real run goes on: each is
// refused with a clear reason, and the run is not disturbed.
TEST_F(NetFaultTest, HostileFramesAreRefusedAndTheRunGoesOn) {
  const std::string yaml = R"(
defaults: {buffer_size: 1KiB, depth: 16}
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 200000, size: 300}}
  sink: {class: "testing_filters::TestSink", args: {sleep_us: 0}}
streams:
  - {from: src.out, to: sink.in}
)";
  Cluster cluster(yaml, one_way());
  sluice::DataPlane& b = *cluster.host("b").plane;
  const tcp::endpoint target = parse(b.listen_address());

  const std::string nonce(32, 'n');
  std::vector<std::vector<std::byte>> attacks;
  attacks.push_back(frame(DataFrame{0, 0, 0, 0, 100}, std::string(100, 'x')));  // no HELLO
  {
    auto bad_magic = frame(sluice::net::HelloFrame{0, 1}, nonce + "b");
    bad_magic[0] = std::byte{'G'};
    bad_magic[1] = std::byte{'E'};
    attacks.push_back(bad_magic);
  }
  attacks.push_back(raw_frame(RawHeader{4, 0, 0, 0, 0, 1u << 30}));                      // oversized HELLO
  attacks.push_back(frame(sluice::net::HelloFrame{12345, 1}, nonce + "a"));              // wrong fingerprint
  attacks.push_back(raw_frame(RawHeader{0x81, 0, 0, 0, 0, 0}));                          // unknown kind
  {
    std::mt19937 rng(42);
    std::vector<std::byte> noise(4096);
    for (auto& byte : noise) byte = std::byte(rng() & 0xff);
    attacks.push_back(noise);
  }
  {
    auto truncated = frame(sluice::net::HelloFrame{0, 1}, nonce + "a");
    truncated.resize(20);  // then EOF
    attacks.push_back(truncated);
  }

  std::optional<std::string> failure;
  std::thread run([&] { failure = cluster.run_all(); });
  asio::io_context io;
  for (const auto& bytes : attacks) {
    tcp::socket s(io);
    s.connect(target);
    boost::system::error_code ec;
    asio::write(s, asio::buffer(bytes), ec);
    s.shutdown(tcp::socket::shutdown_send, ec);
    // The data plane closes the connection: read until EOF (bounded).
    char sink[256];
    for (int i = 0; i < 100 && !ec; ++i) s.read_some(asio::buffer(sink), ec);
  }
  run.join();
  ASSERT_FALSE(failure) << *failure;
  EXPECT_FALSE(b.failure());
  {
    std::lock_guard<std::mutex> lock(observed().mu);
    EXPECT_EQ(observed().violations, std::vector<std::string>{});
    EXPECT_EQ(observed().received["sink"][0], 200000u);
  }
  ASSERT_TRUE(eventually([&] { return b.rejected().size() >= attacks.size(); }));
  const auto rejected = b.rejected();
  auto has = [&](const std::string& what) {
    for (const auto& r : rejected) {
      if (r.find(what) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("expected HELLO, got DATA")) << ::testing::PrintToString(rejected);
  EXPECT_TRUE(has("bad magic")) << ::testing::PrintToString(rejected);
  EXPECT_TRUE(has("HELLO with a 1073741824-byte payload")) << ::testing::PrintToString(rejected);
  EXPECT_TRUE(has("topology fingerprint differs")) << ::testing::PrintToString(rejected);
  EXPECT_TRUE(has("unknown frame kind 129")) << ::testing::PrintToString(rejected);
  EXPECT_TRUE(has("closed before authenticating")) << ::testing::PrintToString(rejected);
}

}  // namespace
}  // namespace testing_filters
