// Peers of a real DataPlane that are not what they should be: strangers who know the
// topology but not the run key, a trusted peer that sends a duplicate end of work or
// frames after its goodbye, and a peer that goes silent without closing.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "net/routes.h"
#include "net_cluster.h"
#include "net_test_util.h"
#include "testing/eventually.h"
#include "testing/graph_test_filters.h"

namespace testing_filters {
namespace {

using sluice::net::ByeFrame;
using sluice::net::CreditFrame;
using sluice::net::DataFrame;
using sluice::net::EndOfWorkFrame;
using sluice::net::test_util::FakePeer;
using sluice::net::test_util::frame;

using sluice::testing::eventually;

// Two producer copies on host a, one sink on host b: b's sink ends its unit only after an
// end of work from each of the two.
const char* kTwoToOne = R"(
defaults: {buffer_size: 256B, depth: 8}
filters:
  src:  {class: "testing_filters::TestSource", copies: 2, args: {count: 100}}
  sink: {class: "testing_filters::TestSink"}
streams:
  - {from: src.out, to: sink.in}
)";

std::map<std::string, sluice::Placement> two_to_one() {
  return {{"a", place({{"src", {0, 1}}})}, {"b", place({{"sink", {0}}})}};
}

// Host b for real (data plane and engine), host a played by the test.
class RealB {
 public:
  RealB(const std::string& yaml, std::map<std::string, sluice::Placement> placements,
        std::chrono::milliseconds silence = std::chrono::milliseconds(3000))
      : topology_(sluice::topo::parse_topology_text(yaml, "test.yaml", SLUICE_TEST_DATA_DIR)),
        placements_(std::move(placements)) {
    sluice::check_loadable(topology_);
    sluice::DataPlaneOptions plane_options;
    plane_options.key = Cluster::key();
    plane_options.silence_limit = silence;
    plane_options.heartbeat_interval = std::chrono::milliseconds(200);
    plane_ = std::make_unique<sluice::DataPlane>(topology_, placements_, "b", plane_options);
    sluice::EngineOptions options;
    options.host = "b";
    options.placement = placements_.at("b");
    options.wiring = plane_.get();
    options.abort_grace = std::chrono::milliseconds(2000);
    engine_ = std::make_unique<sluice::Engine>(topology_, options);
    plane_->set_failure_callback([this](const std::string& why) { engine_->cancel(why); });
    a_routes_ = std::make_unique<sluice::net::Routes>(topology_, placements_, "a");
  }
  ~RealB() {
    engine_->cancel("test over");
    plane_->stop();
    engine_.reset();
  }

  sluice::DataPlane& plane() { return *plane_; }
  sluice::Engine& engine() { return *engine_; }
  const sluice::net::Routes& a_routes() const { return *a_routes_; }
  // Connects `a` and waits until b took it as host a (connect on b's side: b sends nothing).
  void expect_a(FakePeer& a) {
    ASSERT_TRUE(a.connect(plane_->listen_address()));
    plane_->connect({}, std::chrono::seconds(5));
  }
  // expect_a, then starts the engine and runs unit 0 on the returned thread, which sets
  // *failure when the unit ends.
  std::thread run_unit_for(FakePeer& a, std::optional<sluice::Failure>* failure) {
    expect_a(a);
    EXPECT_FALSE(engine_->start());
    return std::thread([this, failure] { *failure = engine_->run_unit(0, ""); });
  }

 private:
  sluice::topo::Topology topology_;
  std::map<std::string, sluice::Placement> placements_;
  std::unique_ptr<sluice::DataPlane> plane_;
  std::unique_ptr<sluice::Engine> engine_;
  std::unique_ptr<sluice::net::Routes> a_routes_;
};

// A plain TCP connection to `address` ("addr:port"), from the source address `from` when
// given (127.0.0.0/8 is all loopback).
boost::asio::ip::tcp::socket raw_connect(boost::asio::io_context& io, const std::string& address,
                                         const std::string& from = "") {
  boost::asio::ip::tcp::socket s(io);
  if (!from.empty()) {
    s.open(boost::asio::ip::tcp::v4());
    s.bind({boost::asio::ip::make_address(from), 0});
  }
  const auto colon = address.rfind(':');
  s.connect({boost::asio::ip::make_address(address.substr(0, colon)),
             static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1)))});
  return s;
}

TEST(NetPeerTest, AStrangerWhoKnowsTheTopologyButNotTheKeyCannotInjectOrLockOutTheRealHost) {
  RealB b(kTwoToOne, two_to_one());
  // First an impostor that says HELLO as host a and then stalls, holding the connection
  // open without ever proving anything; then one that answers with a proof made from the
  // wrong key.
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket stalling = raw_connect(io, b.plane().listen_address());
  boost::asio::write(stalling, boost::asio::buffer(frame(sluice::net::HelloFrame{b.a_routes().fingerprint(), 1},
                                                         std::string(32, 'n') + "a")));
  FakePeer impostor(b.a_routes(), "not-the-run-key-0123456789");
  EXPECT_FALSE(impostor.connect(b.plane().listen_address()) && !impostor.closed_by_peer())
      << "a peer without the run key was not refused";
  // The real host a (the right key) gets in, after the impostor.
  FakePeer real(b.a_routes(), Cluster::key());
  ASSERT_TRUE(real.connect(b.plane().listen_address()));
  b.plane().connect({}, std::chrono::seconds(5));
  EXPECT_FALSE(b.plane().failure());
  bool refused_proof = false;
  for (const auto& r : b.plane().rejected()) refused_proof |= r.find("run's key") != std::string::npos;
  EXPECT_TRUE(refused_proof) << ::testing::PrintToString(b.plane().rejected());
}

// 127.0.0.2 to 127.0.0.9: with 8 connections from each, the 64 places for connections
// that have not authenticated are all taken (127.0.0.0/8 is all loopback).
std::vector<std::string> eight_other_addresses() {
  std::vector<std::string> out;
  for (int i = 2; i <= 9; ++i) out.push_back("127.0.0." + std::to_string(i));
  return out;
}

// A stranger's connection from `from` to the data port at `address` that says HELLO as host
// a (the topology's `fingerprint`) and then stalls; returned once the plane has answered it,
// so that it is in its handshake.
boost::asio::ip::tcp::socket stall_in_handshake(boost::asio::io_context& io, const std::string& address,
                                                std::uint64_t fingerprint, const std::string& from) {
  boost::asio::ip::tcp::socket s = raw_connect(io, address, from);
  boost::asio::write(s, boost::asio::buffer(frame(sluice::net::HelloFrame{fingerprint, 1}, std::string(32, 'n') + "a")));
  std::array<char, 1> answer{};
  s.read_some(boost::asio::buffer(answer));  // the plane's own HELLO
  return s;
}

// The real host a connects to b past what fills b's places, and b lists a refusal that
// holds `made_room` (how it made room for a).
void expect_the_real_host_in(RealB& b, const std::string& made_room) {
  FakePeer real(b.a_routes(), Cluster::key());
  ASSERT_TRUE(real.connect(b.plane().listen_address())) << ::testing::PrintToString(b.plane().rejected());
  b.plane().connect({}, std::chrono::seconds(5));
  EXPECT_FALSE(b.plane().failure());
  bool found = false;
  for (const auto& r : b.plane().rejected()) found |= r.find(made_room) != std::string::npos;
  EXPECT_TRUE(found) << ::testing::PrintToString(b.plane().rejected());
}

// Idle sockets that fill the caps on unauthenticated connections (8 per source address, 64
// in all), opened as soon as the port appears, used to keep the real host out of every run:
// the newest connection was refused. Now the oldest idle one makes room.
void the_real_host_gets_past_idle_sockets(const std::vector<std::string>& squatters) {
  RealB b(kTwoToOne, two_to_one());
  boost::asio::io_context io;
  std::vector<boost::asio::ip::tcp::socket> idle;
  for (const std::string& from : squatters) {
    for (int i = 0; i < 8; ++i) idle.push_back(raw_connect(io, b.plane().listen_address(), from));
  }
  // The listener accepts in arrival order: every idle socket is taken before the real host's.
  expect_the_real_host_in(b, "closed to make room for a newer one");
}

TEST(NetPeerTest, IdleSocketsFromTheRealHostsAddressDoNotKeepItOut) {
  the_real_host_gets_past_idle_sockets({"127.0.0.1"});
}

TEST(NetPeerTest, IdleSocketsFromManyAddressesDoNotKeepTheRealHostOut) {
  the_real_host_gets_past_idle_sockets(eight_other_addresses());
}

// Strangers who know the topology fill all 64 places for connections in their handshake
// (8 from each of 8 addresses): each says HELLO as host a and then stalls. The real host
// a's first handshake is refused at once (none is idle or has stalled for 100 ms yet). It
// used to be given up for good, failing the run; now a tries again every 250 ms, gets in once
// a stranger has stalled for 100 ms, and the run goes through.
TEST(NetPeerTest, AHandshakeRefusedWhileStrangersHoldEveryPlaceIsTriedAgain) {
  observed().reset();
  boost::asio::io_context io;
  std::vector<boost::asio::ip::tcp::socket> stalled;
  ClusterOptions options;
  options.connect_timeout = std::chrono::seconds(12);
  options.before_connect = [&](const sluice::topo::Topology& topology, const std::map<std::string, std::string>& peers) {
    const sluice::net::Routes a(topology, two_to_one(), "a");
    for (const std::string& from : eight_other_addresses()) {
      for (int i = 0; i < 8; ++i) stalled.push_back(stall_in_handshake(io, peers.at("b"), a.fingerprint(), from));
    }
  };
  Cluster cluster(kTwoToOne, two_to_one(), options);
  EXPECT_EQ(cluster.run_all(), std::nullopt);
  std::lock_guard<std::mutex> lock(observed().mu);
  EXPECT_EQ(observed().received["sink"][0], 200u);
  bool refused_at_once = false;
  for (const auto& r : cluster.host("b").plane->rejected()) refused_at_once |= r.find("closed at once") != std::string::npos;
  EXPECT_TRUE(refused_at_once) << ::testing::PrintToString(cluster.host("b").plane->rejected());
}

// Strangers who say HELLO and stall, renewing each connection as soon as the 5 s to
// authenticate run out, kept every place taken at a cost of 13 connections a second: the
// real host, refused each time, lost the run. A connection that has been in its handshake
// for over 100 ms (a host's takes milliseconds) is now closed to make room for a new one.
void the_real_host_gets_past_stalled_handshakes(const std::vector<std::string>& squatters) {
  RealB b(kTwoToOne, two_to_one());
  boost::asio::io_context io;
  std::vector<boost::asio::ip::tcp::socket> stalled;
  for (const std::string& from : squatters) {
    for (int i = 0; i < 8; ++i) {
      stalled.push_back(stall_in_handshake(io, b.plane().listen_address(), b.a_routes().fingerprint(), from));
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // each has stalled for over 100 ms
  expect_the_real_host_in(b, "ms, which takes a host milliseconds");
}

TEST(NetPeerTest, HandshakesStalledFor100MsMakeRoomForTheRealHost) {
  the_real_host_gets_past_stalled_handshakes(eight_other_addresses());
}

TEST(NetPeerTest, HandshakesStalledFromTheRealHostsAddressMakeRoomForIt) {
  the_real_host_gets_past_stalled_handshakes({"127.0.0.1"});
}

TEST(NetPeerTest, AnImpostorsDataNeverReachesTheConsumer) {
  RealB b(kTwoToOne, two_to_one());
  observed().reset();
  // The impostor knows the topology (so the fingerprint) but not the key: it says HELLO
  // as host a and sends DATA and END_OF_WORK frames without waiting for anything.
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket s = raw_connect(io, b.plane().listen_address());
  const std::string name = "a";
  std::vector<std::byte> bytes =
      frame(sluice::net::HelloFrame{b.a_routes().fingerprint(), 1}, std::string(32, 'n') + name);
  for (std::uint32_t p = 0; p < 2; ++p) {
    auto data = frame(DataFrame{0, p, 0, 7, 48}, std::string(48, 'x'));
    bytes.insert(bytes.end(), data.begin(), data.end());
    auto end = frame(EndOfWorkFrame{0, p, 0});
    bytes.insert(bytes.end(), end.begin(), end.end());
  }
  boost::system::error_code ec;
  boost::asio::write(s, boost::asio::buffer(bytes), ec);
  ASSERT_TRUE(eventually([&] { return !b.plane().rejected().empty(); }));
  EXPECT_NE(b.plane().rejected().back().find("expected AUTH, got DATA"), std::string::npos)
      << b.plane().rejected().back();
  // b's sink never saw a buffer: a unit would wait for the real host (none here).
  std::lock_guard<std::mutex> lock(observed().mu);
  EXPECT_TRUE(observed().received["sink"].empty());
}

// A stranger's HELLO names a host with a newline and a forged log line in it: refused, and
// the refusal is one line (the newline written as \x0a), so no log reader sees the forgery.
TEST(NetPeerTest, AHostNameWithANewlineCannotForgeALogLine) {
  RealB b(kTwoToOne, two_to_one());
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket s = raw_connect(io, b.plane().listen_address());
  const std::string name = "zz\n2026-11-25T00:00:00.000Z sluiced[1] [error] FORGED LINE";
  const std::vector<std::byte> bytes = frame(
      sluice::net::HelloFrame{b.a_routes().fingerprint(), static_cast<std::uint32_t>(name.size())}, std::string(32, 'n') + name);
  boost::system::error_code ec;
  boost::asio::write(s, boost::asio::buffer(bytes), ec);
  ASSERT_TRUE(eventually([&] { return !b.plane().rejected().empty(); }));
  const std::string refused = b.plane().rejected().back();
  EXPECT_NE(refused.find("HELLO from unknown host 'zz\\x0a2026"), std::string::npos) << refused;
  EXPECT_EQ(refused.find('\n'), std::string::npos) << refused;
}

TEST(NetPeerTest, ADuplicateEndOfWorkFailsTheUnitInsteadOfEndingItEarly) {
  RealB b(kTwoToOne, two_to_one());
  observed().reset();
  FakePeer a(b.a_routes(), Cluster::key());
  std::optional<sluice::Failure> failure;
  std::thread unit = b.run_unit_for(a, &failure);
  // depth 8, but across hosts the window is a MiB's worth of 256 B buffers, at most 1024
  // (net/routes.h remote_window): depth 8 would make every 8 buffers a round trip. That for
  // each of a's two producer copies, as embedded each has a lane of its own (Routes::window).
  EXPECT_EQ(a.read_credit().credits, 2048u);
  // Producer 0 sends one buffer and ends; then its end of work again, as if it were
  // producer 1's. Counting marks, the sink would end the unit with producer 1 unheard.
  a.write(frame(DataFrame{0, 0, 0, 7, 0}));
  a.write(frame(EndOfWorkFrame{0, 0, 0}));
  a.write(frame(EndOfWorkFrame{0, 0, 0}));
  unit.join();
  ASSERT_TRUE(failure) << "the unit finished although producer 1 never ended it";
  EXPECT_EQ(failure->filter, "sink");
  EXPECT_NE(failure->message.find("a second end of work from producer copy 0"), std::string::npos)
      << failure->str();
  a.close();
}

TEST(NetPeerTest, FramesAfterAPeersByeAreAProtocolViolation) {
  RealB b(kTwoToOne, two_to_one());
  FakePeer a(b.a_routes(), Cluster::key());
  b.expect_a(a);
  ASSERT_FALSE(b.engine().start());
  EXPECT_EQ(a.read_credit().credits, 2048u);  // 1024 for each of a's two copies
  a.write(frame(ByeFrame{}));
  a.write(frame(DataFrame{0, 0, 0, 7, 0}));
  ASSERT_TRUE(eventually([&] { return b.plane().failure().has_value(); }));
  EXPECT_NE(b.plane().failure()->find("DATA after BYE"), std::string::npos) << *b.plane().failure();
  EXPECT_NE(b.plane().failure()->find("host 'a'"), std::string::npos) << *b.plane().failure();
}

TEST(NetPeerTest, APeerThatFallsSilentWithoutClosingIsLostNamingBothHosts) {
  RealB b(kTwoToOne, two_to_one(), std::chrono::milliseconds(1000));
  FakePeer a(b.a_routes(), Cluster::key());
  std::optional<sluice::Failure> failure;
  std::thread unit = b.run_unit_for(a, &failure);
  // a authenticates, takes its credit, and then neither sends nor closes (a firewall that
  // drops the data port would look the same to b).
  const auto quiet_since = std::chrono::steady_clock::now();
  unit.join();
  EXPECT_LT(std::chrono::steady_clock::now() - quiet_since, std::chrono::seconds(5));
  ASSERT_TRUE(failure);
  ASSERT_TRUE(b.plane().failure());
  const std::string why = *b.plane().failure();
  EXPECT_NE(why.find("nothing (no data, credit or heartbeat) arrived from host 'a'"), std::string::npos) << why;
  EXPECT_NE(why.find("between host 'b' and host 'a'"), std::string::npos) << why;
  a.close();
}

// One source copy on a (played by the test) to a sink on b that records each payload as text
// (observed()), the stream's `defaults` as given.
std::string source_on_a_to_text_sink_on_b(const std::string& defaults) {
  return "defaults: " + defaults + "\n"
         "filters:\n"
         "  src:  {class: \"testing_filters::TestSource\", args: {count: 1}}\n"
         "  sink: {class: \"testing_filters::TestTextSink\"}\n"
         "streams:\n"
         "  - {from: src.out, to: sink.in}\n";
}

std::map<std::string, sluice::Placement> source_on_a_sink_on_b() {
  return {{"a", place({{"src", {0}}})}, {"b", place({{"sink", {0}}})}};
}

// A payload that takes longer to arrive than the silence limit, on a slow link that carries
// its bytes all the while, is not silence: bytes in the middle of a payload count as heard
// (a 32 MiB buffer over an 80 Mbit/s link took ~3.4 s and the unit failed as "nothing arrived
// for 3.1 s", naming a firewall). Here 1 MiB trickles in over ~2 s against a limit of 1 s.
TEST(NetPeerTest, APayloadSlowerThanTheSilenceLimitIsNotSilence) {
  RealB b(source_on_a_to_text_sink_on_b("{buffer_size: 1MiB, depth: 2}"), source_on_a_sink_on_b(), std::chrono::milliseconds(1000));
  observed().reset();
  FakePeer a(b.a_routes(), Cluster::key());
  std::optional<sluice::Failure> failure;
  std::thread unit = b.run_unit_for(a, &failure);
  ASSERT_GE(a.read_credit().credits, 1u);
  std::string payload(1 << 20, 'p');
  for (std::size_t i = 0; i < payload.size(); i += 4096) payload[i] = static_cast<char>('a' + (i / 4096) % 26);
  const auto data = frame(DataFrame{0, 0, 0, 0, static_cast<std::uint32_t>(payload.size())}, payload);
  const auto end = frame(EndOfWorkFrame{0, 0, 0});
  constexpr std::size_t kPieces = 40;  // 40 x 50 ms: twice the limit, never 1 s without a byte
  const std::size_t piece = data.size() / kPieces + 1;
  try {
    for (std::size_t at = 0; at < data.size(); at += piece) {
      const std::size_t to = std::min(data.size(), at + piece);
      a.write(std::vector<std::byte>(data.begin() + static_cast<std::ptrdiff_t>(at),
                                     data.begin() + static_cast<std::ptrdiff_t>(to)));
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    a.write(end);
  } catch (const boost::system::system_error& e) {
    ADD_FAILURE() << "host b closed the connection: " << e.what();  // the unit fails too
  }
  unit.join();
  EXPECT_FALSE(failure) << failure->str();
  std::lock_guard<std::mutex> lock(observed().mu);
  ASSERT_EQ(observed().lines.size(), 1u);
  EXPECT_TRUE(observed().lines[0] == payload) << "the payload arrived changed";
  a.close();
}

// A big payload is read straight into its pool block, and the next frame's header, which TCP
// may deliver in pieces, after it. Here every frame arrives cut at a different point of the
// next header (0 to all 32 bytes of it): each payload must land whole and in order.
TEST(NetPeerTest, BigPayloadsFollowedByAnyPartOfTheNextHeaderLandWhole) {
  RealB b(source_on_a_to_text_sink_on_b("{buffer_size: 8KiB, depth: 64}"), source_on_a_sink_on_b());
  observed().reset();
  FakePeer a(b.a_routes(), Cluster::key());
  std::optional<sluice::Failure> failure;
  std::thread unit = b.run_unit_for(a, &failure);
  constexpr std::uint32_t kFrames = 40;  // within the 64 credits of the window
  ASSERT_GE(a.read_credit().credits, kFrames);
  std::vector<std::string> sent;
  std::vector<std::byte> wire;
  for (std::uint32_t i = 0; i < kFrames; ++i) {
    std::string payload(8192, static_cast<char>('A' + i % 26));
    std::memcpy(payload.data(), &i, sizeof i);  // no two alike
    auto data = frame(DataFrame{0, 0, 0, i, static_cast<std::uint32_t>(payload.size())}, payload);
    wire.insert(wire.end(), data.begin(), data.end());
    sent.push_back(std::move(payload));
  }
  auto end = frame(EndOfWorkFrame{0, 0, 0});
  wire.insert(wire.end(), end.begin(), end.end());
  // Frame i's bytes go out with the first (i mod 33) bytes of frame i + 1's header, then a
  // pause, so that the receiver's read of payload i finds exactly those behind it.
  const std::size_t frame_bytes = sluice::net::kFrameHeaderSize + 8192;
  auto piece = [&](std::size_t from, std::size_t to) {
    return std::vector<std::byte>(wire.begin() + static_cast<std::ptrdiff_t>(from),
                                  wire.begin() + static_cast<std::ptrdiff_t>(to));
  };
  try {
    std::size_t at = 0;
    for (std::uint32_t i = 0; i < kFrames; ++i) {
      const std::size_t upto = (i + 1) * frame_bytes + i % (sluice::net::kFrameHeaderSize + 1);
      a.write(piece(at, upto));
      at = upto;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    a.write(piece(at, wire.size()));
  } catch (const boost::system::system_error& e) {
    ADD_FAILURE() << "host b closed the connection: " << e.what();  // the unit fails too
  }
  unit.join();
  EXPECT_FALSE(failure) << failure->str();
  std::lock_guard<std::mutex> lock(observed().mu);
  ASSERT_EQ(observed().lines.size(), sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i) {
    EXPECT_TRUE(observed().lines[i] == sent[i]) << "payload " << i << " arrived changed";
  }
  a.close();
}

}  // namespace
}  // namespace testing_filters
