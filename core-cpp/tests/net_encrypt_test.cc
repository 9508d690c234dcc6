// Encrypted streams across hosts: `encrypt: true` (or DataPlaneOptions::encrypt_all, the
// console's --encrypt) sends a connection's frames over TLS keyed by the run key. Checked
// through a recording proxy between the hosts: in clear the payload is there to read, over
// TLS it is not; and everything still arrives, in order.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio.hpp>

#include "net_cluster.h"
#include "testing/graph_test_filters.h"

namespace testing_filters {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

tcp::endpoint parse(const std::string& address) {
  const auto colon = address.rfind(':');
  return {asio::ip::make_address(address.substr(0, colon)),
          static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1)))};
}

// Forwards one connection to `upstream` and records what the client sends.
class RecordingProxy {
 public:
  explicit RecordingProxy(const std::string& upstream)
      : acceptor_(io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)), upstream_(parse(upstream)) {
    thread_ = std::thread([this] { serve(); });
  }
  ~RecordingProxy() {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    thread_.join();
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()); }
  std::string recorded() {
    std::lock_guard<std::mutex> lock(mu_);
    return recorded_;
  }

 private:
  void serve() {
    tcp::socket client(io_), server(io_);
    boost::system::error_code ec;
    acceptor_.accept(client, ec);
    if (ec) return;
    server.connect(upstream_, ec);
    if (ec) return;
    client.set_option(tcp::no_delay(true), ec);
    server.set_option(tcp::no_delay(true), ec);
    std::thread back([&] { pump(server, client, false); });
    pump(client, server, true);
    back.join();
  }
  void pump(tcp::socket& from, tcp::socket& to, bool record) {
    char buffer[65536];
    boost::system::error_code ec;
    for (;;) {
      const std::size_t n = from.read_some(asio::buffer(buffer), ec);
      if (ec) break;
      if (record) {
        std::lock_guard<std::mutex> lock(mu_);
        recorded_.append(buffer, n);
      }
      asio::write(to, asio::buffer(buffer, n), ec);
      if (ec) break;
    }
    to.shutdown(tcp::socket::shutdown_send, ec);
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  tcp::endpoint upstream_;
  std::thread thread_;
  std::mutex mu_;  // guards recorded_
  std::string recorded_;
};

// The test records' magic as it crosses the wire (little-endian).
const std::string kMagic(reinterpret_cast<const char*>(&testing_filters::kRecordMagic), 4);

std::string two_streams(const std::string& first_encrypt, const std::string& defaults = "") {
  return "defaults: {buffer_size: 256B, depth: 8" + defaults + "}\n"
         "filters:\n"
         "  src:  {class: \"testing_filters::TestSource\", args: {count: 20000, size: 200}}\n"
         "  sink: {class: \"testing_filters::TestSink\"}\n"
         "  src2:  {class: \"testing_filters::TestSource\", args: {count: 20000, size: 100}}\n"
         "  sink2: {class: \"testing_filters::TestSink\"}\n"
         "streams:\n"
         "  - {from: src.out, to: sink.in" + first_encrypt + "}\n"
         "  - {from: src2.out, to: sink2.in}\n";
}

std::map<std::string, sluice::Placement> a_to_b() {
  return {{"a", place({{"src", {0}}, {"src2", {0}}})}, {"b", place({{"sink", {0}}, {"sink2", {0}}})}};
}

// Runs `yaml` with a on one side of a recording proxy and b on the other; returns what a
// sent to b. Every buffer must arrive, in order.
std::string run_through_proxy(const std::string& yaml, bool encrypt_all) {
  observed().reset();
  auto topology = sluice::topo::parse_topology_text(yaml, "test.yaml", SLUICE_TEST_DATA_DIR);
  sluice::check_loadable(topology);
  const auto placements = a_to_b();
  sluice::DataPlaneOptions options;
  options.key = Cluster::key();
  options.encrypt_all = encrypt_all;
  sluice::DataPlane a(topology, placements, "a", options);
  sluice::DataPlane b(topology, placements, "b", options);
  RecordingProxy proxy(b.listen_address());
  std::string recorded;
  {
    sluice::EngineOptions ea, eb;
    ea.host = "a";
    ea.placement = placements.at("a");
    ea.wiring = &a;
    eb.host = "b";
    eb.placement = placements.at("b");
    eb.wiring = &b;
    sluice::Engine engine_a(topology, ea), engine_b(topology, eb);
    std::thread connect_b([&] { b.connect({}, std::chrono::seconds(10)); });
    a.connect({{"b", proxy.address()}}, std::chrono::seconds(10));
    connect_b.join();
    EXPECT_FALSE(engine_a.start());
    EXPECT_FALSE(engine_b.start());
    std::optional<sluice::Failure> fa, fb;
    std::thread run_b([&] { fb = engine_b.run_unit(0, ""); });
    fa = engine_a.run_unit(0, "");
    run_b.join();
    EXPECT_FALSE(fa) << fa->str();
    EXPECT_FALSE(fb) << fb->str();
    recorded = proxy.recorded();
    a.stop();
    b.stop();
  }
  std::lock_guard<std::mutex> lock(observed().mu);
  EXPECT_EQ(observed().violations, std::vector<std::string>{});
  EXPECT_EQ(observed().received["sink"][0], 20000u);
  EXPECT_EQ(observed().received["sink2"][0], 20000u);
  return recorded;
}

TEST(NetEncryptTest, InClearTheWireCarriesThePayloads) {
  const std::string wire = run_through_proxy(two_streams(""), false);
  EXPECT_GT(wire.size(), 20000u * 200u);
  EXPECT_NE(wire.find(kMagic), std::string::npos) << "the proxy did not see the payloads it should";
}

TEST(NetEncryptTest, AnEncryptedStreamPutsTheWholeConnectionOverTls) {
  const std::string wire = run_through_proxy(two_streams(", encrypt: true"), false);
  EXPECT_GT(wire.size(), 20000u * 200u);
  EXPECT_EQ(wire.find(kMagic), std::string::npos) << "a payload crossed in clear";
  EXPECT_EQ(static_cast<unsigned char>(wire[0]), 0x16) << "not a TLS handshake record";
}

TEST(NetEncryptTest, EncryptAllEncryptsStreamsThatDoNotAskForIt) {
  const std::string wire = run_through_proxy(two_streams(""), true);
  EXPECT_EQ(wire.find(kMagic), std::string::npos) << "a payload crossed in clear";
  EXPECT_EQ(static_cast<unsigned char>(wire[0]), 0x16) << "not a TLS handshake record";
}

TEST(NetEncryptTest, HostsThatDisagreeOnEncryptionRefuseEachOther) {
  auto topology = sluice::topo::parse_topology_text(two_streams(""), "test.yaml", SLUICE_TEST_DATA_DIR);
  sluice::check_loadable(topology);
  const auto placements = a_to_b();
  sluice::DataPlaneOptions plain, encrypted;
  plain.key = encrypted.key = Cluster::key();
  encrypted.encrypt_all = true;
  sluice::DataPlane a(topology, placements, "a", encrypted);
  sluice::DataPlane b(topology, placements, "b", plain);
  sluice::EngineOptions ea, eb;
  ea.host = "a";
  ea.placement = placements.at("a");
  ea.wiring = &a;
  eb.host = "b";
  eb.placement = placements.at("b");
  eb.wiring = &b;
  sluice::Engine engine_a(topology, ea), engine_b(topology, eb);
  try {
    a.connect({{"b", b.listen_address()}}, std::chrono::milliseconds(1500));
    FAIL() << "a host that encrypts connected to one that does not";
  } catch (const sluice::Error& e) {
    EXPECT_NE(std::string(e.what()).find("host 'b'"), std::string::npos) << e.what();
  }
  a.stop();
  b.stop();
}

}  // namespace
}  // namespace testing_filters
