// The shared token and the challenge-response handshake over it (HMAC-SHA256, OpenSSL
// libcrypto). The token never crosses the wire: each side proves it knows the token by a
// MAC over both sides' fresh nonces, with a different label per direction so one side's
// proof can never be replayed as the other's.
//
//   console -> daemon  Hello{client_nonce}
//   daemon -> console  Challenge{server_nonce}
//   console -> daemon  AuthResponse{HMAC(token, "sluice-client" || server_nonce || client_nonce)}
//   daemon -> console  AuthResult{ok, HMAC(token, "sluice-server" || client_nonce || server_nonce)}
#ifndef SLUICE_CONTROL_AUTH_H_
#define SLUICE_CONTROL_AUTH_H_

#include <cstddef>
#include <string>

namespace sluice::control {

inline constexpr std::size_t kNonceSize = 32;

// Reads a token file. Throws sluice::Error naming the file and what is wrong when it is
// missing, unreadable, empty, or readable or writable by others than its owner and group
// (mode & 007 != 0; fix with chmod 600). Trailing whitespace is not part of the token.
std::string read_token_file(const std::string& path);

// `size` cryptographically random bytes. Throws sluice::Error when none are available.
std::string random_bytes(std::size_t size);

// The client's proof and the server's proof.
std::string client_proof(const std::string& token, const std::string& server_nonce,
                         const std::string& client_nonce);
std::string server_proof(const std::string& token, const std::string& client_nonce,
                         const std::string& server_nonce);

// Constant-time comparison.
bool equal_macs(const std::string& a, const std::string& b);

}  // namespace sluice::control

#endif  // SLUICE_CONTROL_AUTH_H_
