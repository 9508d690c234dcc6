// Test-only helpers for the data-plane tests: raw frames, and FakePeer, a hand-driven host
// that speaks the protocol (handshake included) over a blocking socket, so a test can play
// a well-behaved, misbehaving or hostile peer of a real DataPlane.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio.hpp>

#include "net/frame.h"
#include "net/handshake.h"
#include "net/routes.h"
#include "sluice/error.h"

namespace sluice::net::test_util {

// A header with any field values, well-formed or not.
struct RawHeader {
  std::uint8_t kind = 0;
  std::uint32_t stream = 0;
  std::uint32_t producer = 0;
  std::uint32_t consumer = 0;
  std::uint64_t word = 0;
  std::uint32_t size = 0;
};

inline std::vector<std::byte> raw_frame(const RawHeader& h, const std::string& payload = "") {
  std::vector<std::byte> out(kFrameHeaderSize + payload.size());
  // Encode a valid DATA header, then overwrite the fields with the raw values.
  encode_frame(DataFrame{}, out.data());
  auto put = [&](std::size_t at, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out[at + static_cast<std::size_t>(i)] = std::byte((v >> (8 * i)) & 0xff);
  };
  out[3] = std::byte(h.kind);
  put(4, h.stream, 4);
  put(8, h.producer, 4);
  put(12, h.consumer, 4);
  put(16, h.word, 8);
  put(24, h.size, 4);
  std::memcpy(out.data() + kFrameHeaderSize, payload.data(), payload.size());
  return out;
}

// `f` encoded, followed by `payload`'s bytes.
inline std::vector<std::byte> frame(const Frame& f, const std::string& payload = "") {
  std::vector<std::byte> out(kFrameHeaderSize + payload.size());
  encode_frame(f, out.data());
  std::memcpy(out.data() + kFrameHeaderSize, payload.data(), payload.size());
  return out;
}

inline std::string bytes_of(const void* data, std::size_t size) {
  return std::string(static_cast<const char*>(data), size);
}

class FakePeer {
 public:
  // Plays host `self` of the run described by `routes` (build it for `self`), with `key`.
  FakePeer(const Routes& routes, std::string key)
      : routes_(routes), key_(std::move(key)),
        acceptor_(io_, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)),
        socket_(io_) {}

  std::string address() const { return "127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()); }

  // Accepts the data plane's connection and answers its handshake as the acceptor.
  void accept() {
    acceptor_.accept(socket_);
    std::string payload;
    Frame hello = read_frame(&payload);
    if (!std::holds_alternative<HelloFrame>(hello)) throw Error("fake peer: expected HELLO");
    facts_.fingerprint = routes_.fingerprint();
    std::memcpy(facts_.connector_nonce.data(), payload.data(), kNonceSize);
    facts_.connector = payload.substr(kNonceSize);
    facts_.acceptor = routes_.self_name();
    facts_.acceptor_nonce = fresh_nonce();
    write(hello_frame(facts_.acceptor_nonce));
    const Proof proof = make_proof(key_, Side::kAcceptor, facts_);
    write(frame(AuthFrame{}, bytes_of(proof.data(), proof.size())));
    Frame auth = read_frame(&payload);
    if (!std::holds_alternative<AuthFrame>(auth)) throw Error("fake peer: expected AUTH");
  }

  // Connects to a data plane at `address` and runs the handshake as the connector. With
  // the wrong key the plane closes the connection: returns false then.
  bool connect(const std::string& address) {
    const auto colon = address.rfind(':');
    socket_.connect({boost::asio::ip::make_address(address.substr(0, colon)),
                     static_cast<std::uint16_t>(std::stoi(address.substr(colon + 1)))});
    facts_.fingerprint = routes_.fingerprint();
    facts_.connector = routes_.self_name();
    facts_.connector_nonce = fresh_nonce();
    write(hello_frame(facts_.connector_nonce));
    std::string payload;
    try {
      Frame hello = read_frame(&payload);
      if (!std::holds_alternative<HelloFrame>(hello)) throw Error("fake peer: expected HELLO");
      std::memcpy(facts_.acceptor_nonce.data(), payload.data(), kNonceSize);
      facts_.acceptor = payload.substr(kNonceSize);
      Frame auth = read_frame(&payload);
      if (!std::holds_alternative<AuthFrame>(auth)) throw Error("fake peer: expected AUTH");
    } catch (const boost::system::system_error&) {
      return false;
    }
    const Proof proof = make_proof(key_, Side::kConnector, facts_);
    write(frame(AuthFrame{}, bytes_of(proof.data(), proof.size())));
    return true;
  }

  // The next frame, its payload in *payload. Throws on a malformed one.
  Frame read_frame(std::string* payload) {
    std::byte raw[kFrameHeaderSize];
    boost::asio::read(socket_, boost::asio::buffer(raw));
    static const DataFrameDecoder any(std::vector<StreamLimits>(64, StreamLimits{1000, 1000, 1u << 30, 1u << 16}));
    Frame f;
    std::string error;
    if (!any.decode(raw, &f, &error)) throw Error("fake peer: " + error);
    payload->assign(payload_size(f), '\0');
    boost::asio::read(socket_, boost::asio::buffer(*payload));
    return f;
  }
  // Reads frames until a CREDIT; returns it (PINGs and the like are skipped).
  CreditFrame read_credit() {
    for (;;) {
      std::string payload;
      Frame f = read_frame(&payload);
      if (const auto* c = std::get_if<CreditFrame>(&f)) return *c;
    }
  }
  void write(const std::vector<std::byte>& bytes) { boost::asio::write(socket_, boost::asio::buffer(bytes)); }
  // True once the other end closed the connection (reads until EOF, bounded by `frames`).
  bool closed_by_peer(int frames = 1000) {
    try {
      for (int i = 0; i < frames; ++i) {
        std::string payload;
        read_frame(&payload);
      }
    } catch (const boost::system::system_error&) {
      return true;
    }
    return false;
  }
  void close() {
    boost::system::error_code ignored;
    socket_.close(ignored);
  }

 private:
  std::vector<std::byte> hello_frame(const Nonce& nonce) {
    const std::string& name = routes_.self_name();
    return frame(HelloFrame{routes_.fingerprint(), static_cast<std::uint32_t>(name.size())},
                 bytes_of(nonce.data(), nonce.size()) + name);
  }

  const Routes& routes_;
  const std::string key_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::ip::tcp::socket socket_;
  HandshakeFacts facts_;
};

}  // namespace sluice::net::test_util
