#include "tls/tls_errors.h"

#include <openssl/err.h>
#include <openssl/x509.h>

namespace sluice::tls {

namespace {

int reason(const TlsFailure& f) { return f.error == 0 ? 0 : ERR_GET_REASON(f.error); }

std::string alert_text(int alert) { return SSL_alert_desc_string_long(alert); }

std::string openssl_text(unsigned long error) {
  if (error == 0) return "no error code";
  const char* text = ERR_reason_error_string(error);
  return text != nullptr ? text : "OpenSSL error " + std::to_string(error);
}

std::string verify_text(long result) { return X509_verify_cert_error_string(result); }

bool not_tls(int r) {
  return r == SSL_R_WRONG_VERSION_NUMBER || r == SSL_R_PACKET_LENGTH_TOO_LONG || r == SSL_R_RECORD_LENGTH_MISMATCH ||
         r == SSL_R_UNKNOWN_PROTOCOL || r == SSL_R_HTTP_REQUEST || r == SSL_R_HTTPS_PROXY_REQUEST ||
         r == SSL_R_WRONG_SSL_VERSION || r == SSL_R_UNEXPECTED_MESSAGE || r == SSL_R_UNEXPECTED_RECORD;
}

bool unknown_issuer(long v) {
  return v == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY || v == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT ||
         v == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT || v == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN ||
         v == X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE || v == X509_V_ERR_CERT_SIGNATURE_FAILURE;
}

bool certificate_alert(int alert) {
  return alert == SSL_AD_BAD_CERTIFICATE || alert == SSL_AD_UNSUPPORTED_CERTIFICATE ||
         alert == SSL_AD_CERTIFICATE_REVOKED || alert == SSL_AD_CERTIFICATE_EXPIRED ||
         alert == SSL_AD_CERTIFICATE_UNKNOWN || alert == SSL_AD_UNKNOWN_CA || alert == SSL_AD_CERTIFICATE_REQUIRED;
}

}  // namespace

void TlsFailure::collect(SSL* ssl) {
  if (ssl == nullptr) return;
  verify_result = SSL_get_verify_result(ssl);
  if (const TlsNotes* n = TlsContext::notes(ssl)) notes = *n;
  peer_subject = tls::peer_subject(ssl);
}

int received_alert(unsigned long error) {
  const int r = error == 0 ? 0 : ERR_GET_REASON(error);
  return r >= SSL_AD_REASON_OFFSET && r < SSL_AD_REASON_OFFSET + 256 ? r - SSL_AD_REASON_OFFSET : -1;
}

bool tampered(const TlsFailure& f) {
  return reason(f) == SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC || received_alert(f.error) == SSL_AD_BAD_RECORD_MAC;
}

std::string explain_client_failure(const TlsFailure& f, const TlsOptions& options, const std::string& token_file,
                                   const std::string& kind) {
  const int r = reason(f);
  const int alert = received_alert(f.error);
  if (r == SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC) {
    return "a message from the daemon failed its integrity check (TLS: bad record MAC): the traffic was altered on "
           "the way, so the console closed the connection; find what sits between the console and this host";
  }
  if (alert == SSL_AD_BAD_RECORD_MAC) {
    return "the daemon rejected a message from this console that failed its integrity check (TLS alert: bad record "
           "MAC): the traffic was altered on the way and the daemon closed the connection, acting on nothing it "
           "carried; find what sits between the console and this host";
  }
  if (f.established && f.eof) return "the daemon closed the connection";
  if (!options.certificates()) {
    // The daemon fails the handshake when the console's PSK binder does not verify: with
    // decrypt_error, or illegal_parameter in OpenSSL 3.0.
    if (!f.established && (alert == SSL_AD_DECRYPT_ERROR || alert == SSL_AD_ILLEGAL_PARAMETER)) {
      // A sluice serve holds the token its --token-file names (or ~/.config/sluice/token).
      const std::string whose =
          kind == "a sluiced" ? "the daemon's token file" : "the token file " + kind.substr(2) + " uses (its --token-file)";
      return "refused the connection: the TLS handshake failed because the tokens differ; pass " + whose +
             " with --token-file (or copy it to " + token_file + ")";
    }
    if (f.notes.peer_sent_certificate) {
      return "refused the connection: the daemon uses certificates (sluiced --cert/--key/--ca) and this console a "
             "token; run the console with --cert, --key and --ca from the same CA";
    }
    if (alert == SSL_AD_UNKNOWN_PSK_IDENTITY) {
      return "refused the connection: the daemon did not accept this console's TLS-PSK identity; run a console and a "
             "sluiced of the same version";
    }
  } else {
    if (alert == SSL_AD_UNKNOWN_PSK_IDENTITY) {
      return "refused the connection: the daemon uses a token (TLS-PSK) and this console certificates; run the "
             "console with --token-file instead of --cert/--key/--ca (or start sluiced with --cert/--key/--ca)";
    }
    if (r == SSL_R_CERTIFICATE_VERIFY_FAILED) {
      const long v = f.verify_result;
      const std::string who = "the daemon's certificate" + (f.peer_subject.empty() ? "" : " (" + f.peer_subject + ")");
      if (v == X509_V_ERR_HOSTNAME_MISMATCH || v == X509_V_ERR_IP_ADDRESS_MISMATCH) {
        return "refused the daemon: " + who + " is not issued for the address in hosts:; give sluiced a "
               "certificate whose subjectAltName names that host or IP address, or use the name it names";
      }
      if (v == X509_V_ERR_CERT_HAS_EXPIRED || v == X509_V_ERR_CERT_NOT_YET_VALID) {
        return "refused the daemon: " + who + " " + (v == X509_V_ERR_CERT_HAS_EXPIRED ? "has expired" : "is not yet valid") +
               "; renew sluiced's --cert";
      }
      if (unknown_issuer(v)) {
        return "refused the daemon: " + who + " is not signed by this console's --ca (" + options.ca_file + "): " +
               verify_text(v) + "; give the console and the daemons certificates from the same CA";
      }
      if (v == X509_V_ERR_INVALID_PURPOSE) {
        return "refused the daemon: " + who + " may not serve: its extendedKeyUsage lacks serverAuth; issue "
               "sluiced's --cert with extendedKeyUsage=serverAuth (or without an extendedKeyUsage)";
      }
      return "refused the daemon: " + who + " did not verify: " + verify_text(v);
    }
    if (certificate_alert(alert)) {
      if (alert == SSL_AD_CERTIFICATE_EXPIRED) {
        return "refused the connection: the daemon refused this console's certificate because it has expired (TLS "
               "alert: certificate expired); renew " + options.cert_file;
      }
      if (alert == SSL_AD_UNKNOWN_CA) {
        return "refused the connection: the daemon refused this console's certificate because it is not signed by "
               "the daemon's --ca (TLS alert: unknown CA); get a certificate from the CA the daemons trust";
      }
      // OpenSSL answers a certificate whose purpose does not fit (X509_V_ERR_INVALID_PURPOSE) so.
      if (alert == SSL_AD_UNSUPPORTED_CERTIFICATE) {
        return "refused the connection: the daemon refused this console's certificate (TLS alert: unsupported "
               "certificate), most likely because its extendedKeyUsage lacks clientAuth; issue " + options.cert_file +
               " with extendedKeyUsage=clientAuth (or without an extendedKeyUsage)";
      }
      return "refused the connection: the daemon refused this console's certificate (TLS alert: " + alert_text(alert) +
             "); check that " + options.cert_file + " is valid and signed by the daemon's --ca";
    }
  }
  if (kind != "a sluiced" && (f.eof || (r == 0 && !f.established))) {
    return "the service at that address closed the connection during the TLS handshake (tried again for 5 s): it "
           "is busy with too many connections authenticating at once (try again), or it is not " + kind +
           " of this version (check the address: " + kind + " prints the address it serves at); its log says which";
  }
  if (kind != "a sluiced" && not_tls(r)) {
    return "the service at that address does not speak TLS 1.3 (" + openssl_text(f.error) + "): not " + kind +
           " of this version; check the address (" + kind + " prints the address it serves at)";
  }
  if (f.eof || (r == 0 && !f.established)) {
    return "the daemon closed the connection during the TLS handshake (tried again for 5 s): it is busy with too "
           "many connections authenticating at once (try again), or does not speak TLS (an older sluiced?); its "
           "log says which";
  }
  if (not_tls(r)) {
    return "the service at that address does not speak TLS 1.3 (" + openssl_text(f.error) +
           "): an older sluiced (plain-text control protocol) or not a sluiced; run a sluiced of this version there";
  }
  if (r == SSL_R_UNSUPPORTED_PROTOCOL || r == SSL_R_TLSV1_ALERT_PROTOCOL_VERSION) {
    return "the daemon does not speak TLS 1.3; run a sluiced of this version there";
  }
  if (alert >= 0) return "the daemon ended the TLS session (alert: " + alert_text(alert) + ")";
  return "TLS failed: " + openssl_text(f.error);
}

std::string explain_server_failure(const TlsFailure& f, const TlsOptions& options, const ServerRoles& roles) {
  const std::string& peer = roles.peer;  // "console"
  const std::string& self = roles.self;  // "this daemon"
  const int r = reason(f);
  const int alert = received_alert(f.error);
  if (r == SSL_R_DECRYPTION_FAILED_OR_BAD_RECORD_MAC) {
    return "a message from the " + peer + " failed its integrity check (TLS: bad record MAC): the traffic was altered on "
           "the way; nothing it carried was acted on";
  }
  if (alert == SSL_AD_BAD_RECORD_MAC) {
    return "the " + peer + " rejected a message from " + self + " that failed its integrity check (TLS alert: bad record "
           "MAC): the traffic was altered on the way";
  }
  if (f.established && f.eof) return "the " + peer + " closed the connection";
  // Before the mode's checks: a TLS 1.2 ClientHello carries no PSK either.
  if (r == SSL_R_UNSUPPORTED_PROTOCOL || alert == SSL_AD_PROTOCOL_VERSION) {
    return "refused: the client does not speak TLS 1.3 (an older " + peer + ", or not a sluice " + peer + ")";
  }
  if (!options.certificates()) {
    if (r == SSL_R_BINDER_DOES_NOT_VERIFY) {
      return "refused: the " + peer + "'s token differs from " + self + "'s (its TLS-PSK binder does not verify)";
    }
    if (f.notes.peer_offered_no_psk) {
      return "refused: the client offered no token (TLS-PSK): a " + peer + " with --cert (" + self +
             " uses a token), or not a sluice " + peer;
    }
    if (f.notes.peer_offered_psk && f.notes.offered_identity != kPskIdentity) {
      return "refused: the client offered the unknown TLS-PSK identity '" + f.notes.offered_identity +
             "' (expected '" + kPskIdentity + "')";
    }
  } else {
    if (f.notes.peer_offered_psk) {
      return "refused: the " + peer + " uses a token (TLS-PSK) and " + self + " certificates; the " + peer +
             " needs --cert, --key and --ca from the same CA";
    }
    if (r == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE) {
      return "refused: the " + peer + " sent no certificate; it needs --cert and --key signed by " + self + "'s --ca";
    }
    if (r == SSL_R_CERTIFICATE_VERIFY_FAILED) {
      const long v = f.verify_result;
      const std::string who = "the " + peer + "'s certificate" + (f.peer_subject.empty() ? "" : " (" + f.peer_subject + ")");
      if (unknown_issuer(v)) {
        return "refused " + who + ": it is not signed by " + self + "'s --ca (" + verify_text(v) + ")";
      }
      if (v == X509_V_ERR_INVALID_PURPOSE) {
        return "refused " + who + ": it may not be used by a client: its extendedKeyUsage lacks clientAuth";
      }
      return "refused " + who + ": " + verify_text(v);
    }
    if (alert == SSL_AD_UNSUPPORTED_CERTIFICATE) {
      return "the " + peer + " refused " + self + "'s certificate (TLS alert: unsupported certificate), most likely "
             "because its extendedKeyUsage lacks serverAuth; issue " + options.cert_file +
             " with extendedKeyUsage=serverAuth (or without an extendedKeyUsage)";
    }
    if (certificate_alert(alert)) {
      return "the " + peer + " refused " + self + "'s certificate (TLS alert: " + alert_text(alert) +
             "); the " + peer + "'s --ca must have signed " + options.cert_file +
             ", and its subjectAltName must name the address " + peer + "s dial";
    }
  }
  if (f.eof || (r == 0 && !f.established)) return "the client closed the connection during the TLS handshake";
  if (alert >= 0) return "the client ended the TLS session (alert: " + alert_text(alert) + ")";
  return "TLS failed: " + openssl_text(f.error);
}

}  // namespace sluice::tls
