// libFuzzer target for the data plane's stateful reader: a real DataPlane (host b, with
// its Engine) takes a connection from "host a" and the input as its byte stream, from the
// first byte (a stranger's view: HELLO, AUTH, garbage) or after a correct handshake made
// with the run key (an authenticated peer's view: DATA, END_OF_WORK, CREDIT, PING, BYE in
// any order, with or without credit, truncated anywhere). Whatever arrives, the plane must
// not crash, leak or touch memory it does not own (ASan, UBSan), must close the
// connection, and must say why when it refuses or fails.
//
//   input[0] & 1: 0 = authenticate first, then send input[1..]; 1 = send input[1..] raw.
//
// Built and run by scripts/fuzz.sh fuzz_data_plane; `make test` runs it for a few
// seconds (ctest net.data_plane_fuzz).
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include <boost/asio.hpp>

#include "net/data_plane.h"
#include "net/frame.h"
#include "net/handshake.h"
#include "net/routes.h"
#include "runtime/backends.h"
#include "runtime/engine.h"
#include "sluice/sluice.h"
#include "topology/topology.h"

namespace {

// The filters of the fuzzed topology: they are never asked to run a unit.
class FuzzSource : public sluice::Filter {
 public:
  void process(sluice::Context&) override {}
};
class FuzzSink : public sluice::Filter {
 public:
  void process(sluice::Context&) override {}
};

const char* kTopology = R"(
filters:
  src:   {class: FuzzSource, copies: 2}
  src2:  {class: FuzzSource}
  sink:  {class: FuzzSink}
  sink2: {class: FuzzSink, copies: 2}
streams:
  - {from: src.out, to: sink.in, buffer_size: 64B, depth: 4}
  - {from: src2.out, to: sink2.in, buffer_size: 8KiB, depth: 2, policy: by_key}
)";

const std::string kKey = "data-plane-fuzz-run-key-0123456789";

struct World {
  sluice::topo::Topology topology;
  std::map<std::string, sluice::Placement> placements;
  std::unique_ptr<sluice::net::Routes> a_routes;
};

World& world() {
  static World w = [] {
    World w;
    w.topology = sluice::topo::parse_topology_text(kTopology, "fuzz.yaml", ".");
    sluice::check_loadable(w.topology);
    w.placements["a"].local = {{"src", {0, 1}}, {"src2", {0}}};
    w.placements["b"].local = {{"sink", {0}}, {"sink2", {0, 1}}};
    w.a_routes = std::make_unique<sluice::net::Routes>(w.topology, w.placements, "a");
    return w;
  }();
  return w;
}

bool read_exact(int fd, void* out, std::size_t n) {
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t got = ::read(fd, p, n);
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

void write_all(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t put = ::send(fd, p, n, MSG_NOSIGNAL);
    if (put <= 0) return;  // the plane closed the connection: fine
    p += put;
    n -= static_cast<std::size_t>(put);
  }
}

// Plays host a's side of the handshake on `fd`. False if the plane did not go along.
bool authenticate(int fd) {
  using namespace sluice::net;
  const Routes& a = *world().a_routes;
  HandshakeFacts facts;
  facts.fingerprint = a.fingerprint();
  facts.connector = "a";
  facts.connector_nonce = fresh_nonce();
  std::byte header[kFrameHeaderSize];
  encode_frame(HelloFrame{a.fingerprint(), 1}, header);
  write_all(fd, header, sizeof header);
  write_all(fd, facts.connector_nonce.data(), kNonceSize);
  write_all(fd, "a", 1);
  // The acceptor's HELLO (nonce + "b") and AUTH.
  std::byte in[kFrameHeaderSize];
  std::byte payload[kNonceSize + kMaxHostName];
  if (!read_exact(fd, in, sizeof in) || !read_exact(fd, payload, kNonceSize + 1)) return false;
  std::memcpy(facts.acceptor_nonce.data(), payload, kNonceSize);
  facts.acceptor = "b";
  if (!read_exact(fd, in, sizeof in) || !read_exact(fd, payload, kProofSize)) return false;
  if (!check_proof(kKey, Side::kAcceptor, facts, payload)) std::abort();  // the plane's own proof must hold
  const Proof proof = make_proof(kKey, Side::kConnector, facts);
  encode_frame(AuthFrame{}, header);
  write_all(fd, header, sizeof header);
  write_all(fd, proof.data(), proof.size());
  return true;
}

}  // namespace

SLUICE_FILTER(FuzzSource)
SLUICE_FILTER(FuzzSink)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  World& w = world();
  sluice::DataPlaneOptions options;
  options.key = kKey;
  sluice::DataPlane plane(w.topology, w.placements, "b", options);
  {
    sluice::EngineOptions engine_options;
    engine_options.host = "b";
    engine_options.placement = w.placements.at("b");
    engine_options.wiring = &plane;
    sluice::Engine engine(w.topology, engine_options);
    plane.set_failure_callback([&engine](const std::string& why) { engine.cancel(why); });
    if (engine.start()) std::abort();  // every filter object made (the filters cannot fail)

    const std::string address = plane.listen_address();
    const auto colon = address.rfind(':');
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket socket(io);
    socket.connect({boost::asio::ip::make_address(address.substr(0, colon)),
                    static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1)))});
    const int fd = socket.native_handle();
    timeval timeout{2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    const bool raw = (data[0] & 1) != 0;
    const bool authenticated = !raw && authenticate(fd);
    write_all(fd, data + 1, size - 1);
    ::shutdown(fd, SHUT_WR);
    // The plane ends the connection: at the first thing it refuses, or at our end of file.
    char sink[4096];
    while (::read(fd, sink, sizeof sink) > 0) {
    }
    if (authenticated && plane.failure() && plane.failure()->empty()) std::abort();  // a failure says why
    if (!authenticated && plane.failure()) std::abort();  // a stranger cannot fail the run
    plane.stop();
  }
  return 0;
}
