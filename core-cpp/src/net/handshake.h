// The data plane's handshake: both ends of a data connection prove that they know the run
// key (a secret the console makes for each run and hands every app daemon over the
// protected control channel), over fresh nonces from both sides. See docs/protocol.md,
// "Data plane", for the exchange.
//
//   connector -> acceptor   HELLO {fingerprint, nonce_c, name_c}
//   acceptor  -> connector  HELLO {fingerprint, nonce_s, name_s}, AUTH {proof_s}
//   connector -> acceptor   AUTH {proof_c}
//
//   proof_x = HMAC-SHA256(run key, label_x || fingerprint || name_c || 0 || name_s || 0 ||
//                         nonce_c || nonce_s), label_s = "sluice data acceptor v2",
//                         label_c = "sluice data connector v2"
//
// The labels differ per direction, so a proof cannot be reflected; the nonces are fresh per
// connection, so it cannot be replayed; the names and fingerprint are bound in, so a proof
// for one pair of hosts or one run's placement is worth nothing for another.
#ifndef SLUICE_NET_HANDSHAKE_H_
#define SLUICE_NET_HANDSHAKE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "net/frame.h"

namespace sluice::net {

using Nonce = std::array<std::byte, kNonceSize>;
using Proof = std::array<std::byte, kProofSize>;

// Where the two HELLOs of one connection agree.
struct HandshakeFacts {
  std::uint64_t fingerprint = 0;
  std::string connector;  // host names
  std::string acceptor;
  Nonce connector_nonce{};
  Nonce acceptor_nonce{};
};

enum class Side { kConnector, kAcceptor };

// A fresh nonce from the operating system's random source. Throws sluice::Error if it has none.
Nonce fresh_nonce();

// The proof `side` sends. `key` is the run key (raw bytes, at least 16).
Proof make_proof(const std::string& key, Side side, const HandshakeFacts& facts);

// True when `proof` is what `side` must have sent (compared in constant time).
bool check_proof(const std::string& key, Side side, const HandshakeFacts& facts, const std::byte* proof);

}  // namespace sluice::net

#endif  // SLUICE_NET_HANDSHAKE_H_
