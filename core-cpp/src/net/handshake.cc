#include "net/handshake.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "sluice/error.h"

namespace sluice::net {

Nonce fresh_nonce() {
  Nonce nonce;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(nonce.data()), static_cast<int>(nonce.size())) != 1) {
    throw Error("data plane: the system has no random source for the handshake's nonce");
  }
  return nonce;
}

Proof make_proof(const std::string& key, Side side, const HandshakeFacts& facts) {
  std::string message = side == Side::kAcceptor ? "sluice data acceptor v2" : "sluice data connector v2";
  for (int i = 0; i < 8; ++i) message += static_cast<char>((facts.fingerprint >> (8 * i)) & 0xff);
  message += facts.connector;
  message += '\0';
  message += facts.acceptor;
  message += '\0';
  message.append(reinterpret_cast<const char*>(facts.connector_nonce.data()), facts.connector_nonce.size());
  message.append(reinterpret_cast<const char*>(facts.acceptor_nonce.data()), facts.acceptor_nonce.size());
  Proof proof;
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(message.data()),
           message.size(), reinterpret_cast<unsigned char*>(proof.data()), &length) == nullptr ||
      length != proof.size()) {
    throw Error("data plane: HMAC-SHA256 failed");
  }
  return proof;
}

bool check_proof(const std::string& key, Side side, const HandshakeFacts& facts, const std::byte* proof) {
  const Proof expected = make_proof(key, side, facts);
  return CRYPTO_memcmp(expected.data(), proof, expected.size()) == 0;
}

}  // namespace sluice::net
