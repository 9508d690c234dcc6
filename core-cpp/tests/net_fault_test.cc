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
#include "test_filters.h"

namespace testing_filters {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using sluice::net::FrameHeader;

using sluice::net::test_util::frame;
using sluice::net::test_util::header;

tcp::endpoint parse(const std::string& address) {
  auto colon = address.rfind(':');
  return {asio::ip::make_address(address.substr(0, colon)),
          static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1)))};
}

// Waits up to `seconds` for `pred`.
template <typename Pred>
bool eventually(Pred pred, double seconds = 5) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

// A hand-driven "host b": listens, accepts host a's data connection, answers its HELLO.
class FakePeer {
 public:
  FakePeer() : acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)), socket_(io_) {}
  std::string address() const { return "127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()); }

  // Accepts and completes the handshake as `name` (echoing the fingerprint).
  void accept_as(const std::string& name) {
    acceptor_.accept(socket_);
    FrameHeader hello = read_header();
    std::string peer(hello.size, '\0');
    asio::read(socket_, asio::buffer(peer));
    write(frame(header(sluice::net::kHello, 0, 0, 0, hello.key, static_cast<std::uint32_t>(name.size())), name));
  }
  FrameHeader read_header() {
    std::byte raw[sluice::net::kHeaderSize];
    asio::read(socket_, asio::buffer(raw));
    sluice::net::FrameDecoder any({{1000, 1000, 1u << 30, 1u << 16}});
    FrameHeader h;
    std::string error;
    if (!any.decode(raw, &h, &error)) throw sluice::Error("fake peer: " + error);
    return h;
  }
  void skip(std::size_t n) {
    std::vector<char> sink(n);
    asio::read(socket_, asio::buffer(sink));
  }
  void write(const std::vector<std::byte>& bytes) { asio::write(socket_, asio::buffer(bytes)); }
  void close() {
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

 private:
  asio::io_context io_;
  tcp::acceptor acceptor_;
  tcp::socket socket_;
};

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
  sluice::DataPlane plane(topology, one_way(), "a");
  sluice::EngineOptions options = host_a_options(plane);
  FakePeer b;
  std::optional<sluice::Failure> failure;
  std::chrono::steady_clock::time_point closed_at;
  {
    sluice::Engine engine(topology, options);
    plane.set_failure_callback([&engine](const std::string& why) { engine.cancel(why); });
    std::thread peer([&] {
      b.accept_as("b");
      // Grant credit, take a few frames, then vanish as if the host died.
      b.write(frame(header(sluice::net::kCredit, 0, 0, 0, 8)));
      for (int i = 0; i < 8; ++i) {
        FrameHeader h = b.read_header();
        b.skip(h.size);
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
  sluice::DataPlane plane(topology, one_way(), "a");
  sluice::EngineOptions options = host_a_options(plane);
  FakePeer b;
  std::optional<sluice::Failure> failure;
  {
    sluice::Engine engine(topology, options);
    plane.set_failure_callback([&engine](const std::string& why) { engine.cancel(why); });
    std::thread peer([&] {
      b.accept_as("b");
      b.write(frame(header(sluice::net::kCredit, 0, 0, 0, 8)));
      b.write(frame(header(sluice::net::kCredit, 0, 0, 0, 8)));  // 16 > window of 8
    });
    try {
      plane.connect({{"b", b.address()}}, std::chrono::seconds(5));
      // The violation may come before or after connect returns.
      if (!engine.start()) failure = engine.run_unit(0, "");
    } catch (const sluice::Error& e) {
      EXPECT_NE(std::string(e.what()).find("host 'b'"), std::string::npos) << e.what();
    }
    peer.join();
    plane.stop();
  }
  ASSERT_TRUE(plane.failure());
  EXPECT_NE(plane.failure()->find("host 'b'"), std::string::npos) << *plane.failure();
  EXPECT_NE(plane.failure()->find("protocol violation: CREDIT beyond the window"), std::string::npos)
      << *plane.failure();
}

TEST_F(NetFaultTest, ConnectNamesTheHostThatDoesNotAnswer) {
  auto topology = one_way_topology();
  sluice::DataPlane plane(topology, one_way(), "a");
  sluice::EngineOptions options = host_a_options(plane);
  std::string port;
  {
    // A port nobody listens on.
    asio::io_context io;
    tcp::acceptor probe(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = std::to_string(probe.local_endpoint().port());
  }
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

  std::vector<std::vector<std::byte>> attacks;
  attacks.push_back(frame(header(sluice::net::kData, 0, 0, 0, 0, 100), std::string(100, 'x')));  // no HELLO
  {
    auto bad_magic = frame(header(sluice::net::kHello, 0, 0, 0, 0, 1), "b");
    bad_magic[0] = std::byte{'G'};
    bad_magic[1] = std::byte{'E'};
    attacks.push_back(bad_magic);
  }
  attacks.push_back(frame(header(sluice::net::kHello, 0, 0, 0, 0, 1u << 30)));           // oversized name
  attacks.push_back(frame(header(sluice::net::kHello, 0, 0, 0, 12345, 1), "a"));        // wrong fingerprint
  attacks.push_back(frame(header(0x81, 0, 0, 0, 0, 0)));                                // bad flags
  {
    std::mt19937 rng(42);
    std::vector<std::byte> noise(4096);
    for (auto& byte : noise) byte = std::byte(rng() & 0xff);
    attacks.push_back(noise);
  }
  {
    auto truncated = frame(header(sluice::net::kHello, 0, 0, 0, 0, 1), "a");
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
  EXPECT_TRUE(has("expected HELLO as the first frame")) << ::testing::PrintToString(rejected);
  EXPECT_TRUE(has("bad magic")) << ::testing::PrintToString(rejected);
  EXPECT_TRUE(has("HELLO with a 1073741824-byte host name")) << ::testing::PrintToString(rejected);
  EXPECT_TRUE(has("topology fingerprint differs")) << ::testing::PrintToString(rejected);
  EXPECT_TRUE(has("bad flags 0x81")) << ::testing::PrintToString(rejected);
  EXPECT_TRUE(has("closed before HELLO")) << ::testing::PrintToString(rejected);
}

}  // namespace
}  // namespace testing_filters
