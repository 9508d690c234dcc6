// The client's end of a control connection's opening, shared by the console's connections
// to sluiced (console/host_client.h) and the clients of `sluice serve`
// (console/serve_client.h): on a connected TCP socket, the TLS 1.3 handshake (TlsChannel,
// tls_channel.h: the token's PSK, or certificates), then the hello and the server's
// auth_result; and what a failure of the channel means, as a sentence for the user.
//
// Thread safety: open_client() from one thread, before the channel is shared;
// channel_error() from the channel's receiving thread.
#ifndef SLUICE_CONTROL_CLIENT_OPENING_H_
#define SLUICE_CONTROL_CLIENT_OPENING_H_

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "control/codec.h"
#include "control/tls_channel.h"
#include "tls/tls.h"

namespace sluice::control {

// How a client proves who it is: a TLS client context (the token's PSK, or certificates),
// and where the token came from, for advice.
struct Credentials {
  std::shared_ptr<const tls::TlsContext> tls;
  std::string token_file;  // PSK mode: the file the token was read from
};

// What a sluice serve gives as its host in auth_result (AuthResult.host); a sluiced gives its
// machine's hostname, which has no space, so a console can tell a serve port it was pointed
// at by mistake from a host daemon.
inline constexpr char kServeAuthHost[] = "sluice serve";

// How a client names the server in what it says when the opening fails. Static strings.
struct ServerNames {
  const char* server;  // "the daemon": "the daemon closed the connection after the TLS handshake"
  const char* kind;    // "a sluiced": "is it a sluiced of this version?"
  // After "cannot connect: Connection refused", or "": "; is sluice serve running there?"
  const char* not_listening;
};

// Runs the TLS handshake on `channel` (`host`, as dialled, is what the server's certificate
// must name, in certificate mode), says hello as `client` (free text: "sluice pid 1234")
// and reads the answer, all before `deadline`. Returns why it failed ("refused: protocol
// version mismatch: ...", "no answer to the hello within the timeout; is it a sluiced of
// this version?", a TLS failure explained), or nullopt when the server opened the session;
// `*answer` is then its auth_result. `channel` was made with `credentials.tls`. When
// `closed_unanswered` is given, it says whether the failure was the server closing the
// connection without a word before it answered the hello (what a server whose caps on
// connections authenticating at once are full does: worth trying again).
std::optional<std::string> open_client(TlsChannel& channel, const std::string& host, const std::string& client,
                                       const Credentials& credentials, const ServerNames& names,
                                       std::chrono::steady_clock::time_point deadline, AuthResult* answer,
                                       bool* closed_unanswered = nullptr);

// The channel's last error, as a sentence: a TLS failure explained (`*explained` true:
// "the TLS handshake failed because the tokens differ; ..."), else as the channel says it.
// `kind`: what was expected at the other end (ServerNames::kind).
std::string channel_error(const TlsChannel& channel, const Credentials& credentials, bool* explained = nullptr,
                          const char* kind = "a sluiced");

}  // namespace sluice::control

#endif  // SLUICE_CONTROL_CLIENT_OPENING_H_
