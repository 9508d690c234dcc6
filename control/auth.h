// The shared token: the secret in a token file that every console and host daemon of a
// cluster holds. It never crosses the wire: the control connections derive their TLS key
// from it (tls.h, TLS-PSK).
#ifndef SLUICE_CONTROL_AUTH_H_
#define SLUICE_CONTROL_AUTH_H_

#include <cstddef>
#include <string>

namespace sluice::control {

// Who reads the token file: the fix for a missing one differs. A host daemon may start a
// cluster's token (create one); a console must hold the token the running daemons already
// use (copy theirs: a new one could never match).
enum class TokenReader { kDaemon, kConsole };

// The shortest token read_token_file accepts (trailing whitespace aside).
inline constexpr std::size_t kMinTokenBytes = 16;

// Reads a token file. Throws sluice::Error naming the file and what is wrong when it is
// missing (with the fix for `reader`), unreadable, empty, shorter than kMinTokenBytes, or
// readable or writable by others than its owner and group (mode & 007 != 0; fix with
// chmod 600). Trailing whitespace is not
// part of the token.
std::string read_token_file(const std::string& path, TokenReader reader = TokenReader::kDaemon);

// `size` cryptographically random bytes. Throws sluice::Error when none are available.
std::string random_bytes(std::size_t size);
// The same as lowercase hex (2 × size characters): run ids, tokens in files.
std::string random_hex(std::size_t size);

}  // namespace sluice::control

#endif  // SLUICE_CONTROL_AUTH_H_
