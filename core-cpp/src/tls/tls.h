// TLS 1.3 for the control connections (console <-> sluiced), through OpenSSL. Two ways to
// key it, one per deployment:
//
// - PSK (the default): both sides hold the shared token (auth.h's token file). Each derives
//   a 32-byte external pre-shared key from it, HKDF-SHA256(salt "", ikm token, info
//   "sluice control psk v1"), offered under the identity "sluice" with the psk_dhe_ke mode
//   (an ECDHE exchange on top: forward secrecy) and the SHA-256 suites
//   TLS_AES_128_GCM_SHA256 and TLS_CHACHA20_POLY1305_SHA256. Neither the token nor the key
//   crosses the wire; a peer that does not know the token cannot finish the handshake, in
//   either direction (the PSK binder and the Finished messages prove it).
// - Certificates (--cert, --key, --ca): mutual X.509 verification against the CA; the
//   console also checks that the daemon's certificate names the host or IP address it
//   dialled. Any certificate the CA signed is a valid console.
//
// A side in one mode refuses a peer in the other, and each failure is explained in a
// sentence that says what to do (tls_errors.h).
//
// Thread safety: a TlsContext is immutable after create() and may be shared by any number
// of connections on any threads. TlsNotes belong to one connection.
#ifndef SLUICE_CONTROL_TLS_H_
#define SLUICE_CONTROL_TLS_H_

#include <openssl/ssl.h>

#include <memory>
#include <string>

namespace sluice::tls {

// The PSK identity and the HKDF label (docs/protocol.md, "Control messages").
inline constexpr char kPskIdentity[] = "sluice";
inline constexpr char kPskLabel[] = "sluice control psk v1";
inline constexpr std::size_t kPskSize = 32;

// What keys the TLS: the token (PSK mode), or a certificate, its key and the CA.
struct TlsOptions {
  std::string token;      // PSK mode: the shared secret (not the key: see derive_psk)
  // PSK mode: the HKDF label, so that one secret keys different channels differently (the
  // data plane's connections use "sluice data psk v1" with the run key).
  std::string psk_label = kPskLabel;
  std::string cert_file;  // certificate mode: PEM, this side's certificate (chain)
  std::string key_file;   //   PEM, its private key
  std::string ca_file;    //   PEM, the CA that signs every console's and daemon's certificate
  bool certificates() const { return !cert_file.empty(); }
  // "token (PSK)" or "certificates (--cert ...)", for messages.
  std::string mode_name() const;
};

// The 32-byte PSK for `token`: HKDF-SHA256(salt = "", ikm = token, info = label).
std::string derive_psk(const std::string& token, const std::string& label = kPskLabel);

// What happened during one connection's handshake that OpenSSL's error code alone does
// not say; filled in by the callbacks, read by tls_errors.h. Attach before the handshake.
struct TlsNotes {
  bool peer_offered_psk = false;       // server: the client offered a PSK identity
  bool peer_offered_no_psk = false;    // server in PSK mode: the client offered none
  std::string offered_identity;        // server: the identity it offered
  bool peer_sent_certificate = false;  // client in PSK mode: the server sent a certificate
  std::string peer_subject;            // certificate mode: the peer certificate's subject
};

class TlsContext {
 public:
  enum class Role { kServer, kClient };

  // A TLS 1.3-only context for `role` keyed as `options` says. Throws sluice::Error that
  // names the file and what to do when a certificate, key or CA cannot be used.
  static std::shared_ptr<TlsContext> create(Role role, const TlsOptions& options);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // Owned by this object; alive as long as it is (or longer, for those who SSL_CTX_up_ref).
  SSL_CTX* native() const { return ctx_; }
  Role role() const { return role_; }
  const TlsOptions& options() const { return options_; }
  bool certificates() const { return options_.certificates(); }

  // Attaches `notes` (owned by the caller, outliving `ssl`) to a connection of this context.
  static void attach(SSL* ssl, TlsNotes* notes);
  static TlsNotes* notes(SSL* ssl);
  // Client, certificate mode: the daemon's certificate must name `host` (a DNS name or an
  // IP address literal). Also sets SNI for DNS names. Returns false when OpenSSL refuses.
  static bool expect_peer_name(SSL* ssl, const std::string& host);

  // Certificate mode: why this side's own certificate will be refused ("certificate
  // 'daemon.pem' (--cert) expired on Nov 22 11:01:36 2026 GMT; renew it"), or "".
  std::string certificate_problem() const;

  // The PSK (PSK mode; empty otherwise). For the callbacks.
  const std::string& psk() const { return psk_; }

 private:
  TlsContext(Role role, TlsOptions options) : role_(role), options_(std::move(options)) {}
  void configure_psk();
  void configure_certificates();

  Role role_;
  TlsOptions options_;
  std::string psk_;
  SSL_CTX* ctx_ = nullptr;
};

// The peer's certificate subject ("CN=alice,O=lab"), or "" without one.
std::string peer_subject(SSL* ssl);

}  // namespace sluice::tls

#endif  // SLUICE_CONTROL_TLS_H_
