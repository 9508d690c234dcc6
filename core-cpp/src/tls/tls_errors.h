// Why a control connection's TLS failed, as a sentence that says what to do. OpenSSL
// reports a reason code (and, for certificates, a verification result); together with the
// side, the mode (tls.h) and what the callbacks noted (TlsNotes) that is enough to tell a
// wrong token from a console in the other mode, a certificate from another CA, an expired
// one, a peer that does not speak TLS, and a record altered on the way.
//
// docs/operations.md lists every message.
#ifndef SLUICE_CONTROL_TLS_ERRORS_H_
#define SLUICE_CONTROL_TLS_ERRORS_H_

#include <openssl/ssl.h>

#include <string>

#include "tls/tls.h"

namespace sluice::tls {

struct TlsFailure {
  unsigned long error = 0;       // the first OpenSSL error (ERR_get_error; an Asio ssl error's value)
  long verify_result = X509_V_OK;  // SSL_get_verify_result, after a certificate failure
  bool eof = false;              // the peer closed the TCP connection without an alert
  bool established = false;      // the handshake had completed (a later record failed)
  TlsNotes notes;
  std::string peer_subject;      // the peer certificate's subject, when there was one

  // Fills `verify_result`, `notes` and `peer_subject` from the connection.
  void collect(SSL* ssl);
};

// The TLS alert a reason code stands for (1000 + alert, OpenSSL's convention), or -1.
int received_alert(unsigned long error);

// The console's view, to follow "host a (10.0.0.5:7700): ". `token_file`: where the console
// read its token (PSK mode), for the advice. `kind`: what the client expected to reach ("a
// sluiced", "a sluice serve"), for a peer that does not speak TLS.
std::string explain_client_failure(const TlsFailure& failure, const TlsOptions& options,
                                   const std::string& token_file, const std::string& kind = "a sluiced");

// Who is who in a server's explanations: sluiced hears from consoles, sluice serve from the
// programs that submit (sluice submit, sluice stop, an Application).
struct ServerRoles {
  std::string self;  // "this daemon"
  std::string peer;  // "console"
};
inline const ServerRoles kDaemonRoles{"this daemon", "console"};
inline const ServerRoles kServeRoles{"this sluice serve", "client"};

// The server's view, to follow "console #3 (10.0.0.9:41234): ".
std::string explain_server_failure(const TlsFailure& failure, const TlsOptions& options,
                                   const ServerRoles& roles = kDaemonRoles);

// True when `failure` is a record that failed its integrity check, sent or received.
bool tampered(const TlsFailure& failure);

}  // namespace sluice::tls

#endif  // SLUICE_CONTROL_TLS_ERRORS_H_
