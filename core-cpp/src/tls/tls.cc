#include "tls/tls.h"

#include <arpa/inet.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <mutex>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/x509v3.h>

#include "sluice/error.h"
#include "tls/trusted_file.h"

namespace sluice::tls {

namespace {

// Both suites hash with SHA-256, the hash the PSK is bound to.
constexpr char kPskSuites[] = "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256";
constexpr unsigned char kAes128GcmSha256[] = {0x13, 0x01};
constexpr unsigned int kPreSharedKeyExtension = 41;  // RFC 8446 4.2.11
constexpr unsigned int kSupportedVersionsExtension = 43;  // RFC 8446 4.2.1

// The ex_data slots: the TlsContext on its SSL_CTX, the TlsNotes on each SSL.
int context_index() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}
int notes_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

const TlsContext* owner(SSL* ssl) {
  return static_cast<const TlsContext*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), context_index()));
}

std::string openssl_reason() {
  const unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return "unknown error";
  const char* reason = ERR_reason_error_string(e);
  return reason != nullptr ? reason : "error " + std::to_string(e);
}

// A session that carries the PSK, for either side's callback.
SSL_SESSION* psk_session(SSL* ssl, const std::string& psk) {
  const SSL_CIPHER* cipher = SSL_CIPHER_find(ssl, kAes128GcmSha256);
  SSL_SESSION* session = SSL_SESSION_new();
  if (session == nullptr || cipher == nullptr ||
      !SSL_SESSION_set1_master_key(session, reinterpret_cast<const unsigned char*>(psk.data()), psk.size()) ||
      !SSL_SESSION_set_cipher(session, cipher) || !SSL_SESSION_set_protocol_version(session, TLS1_3_VERSION)) {
    SSL_SESSION_free(session);
    return nullptr;
  }
  return session;
}

// Server, PSK mode: the identity must be ours; its binder is then checked by OpenSSL
// against the key (a different token fails there: SSL_R_BINDER_DOES_NOT_VERIFY).
int find_psk(SSL* ssl, const unsigned char* identity, size_t length, SSL_SESSION** session) {
  *session = nullptr;
  TlsNotes* notes = TlsContext::notes(ssl);
  if (notes != nullptr) {
    notes->peer_offered_psk = true;
    notes->offered_identity.assign(reinterpret_cast<const char*>(identity), std::min<size_t>(length, 64));
  }
  const TlsContext* context = owner(ssl);
  if (context == nullptr || context->psk().empty()) return 1;  // certificate mode: note it, go on
  if (length != std::strlen(kPskIdentity) || std::memcmp(identity, kPskIdentity, length) != 0) return 1;
  *session = psk_session(ssl, context->psk());
  return *session != nullptr ? 1 : 0;
}

// A client that does not offer TLS 1.3 is left to OpenSSL's version check, whose error
// says so: a TLS 1.2 ClientHello carries no PSK either, and "offered no token" would
// send its user looking in the wrong place.
bool offers_tls13(SSL* ssl) {
  const unsigned char* ext = nullptr;
  size_t length = 0;
  if (SSL_client_hello_get0_ext(ssl, kSupportedVersionsExtension, &ext, &length) != 1 || length < 1) return false;
  const size_t listed = std::min<size_t>(ext[0], length - 1);
  for (size_t i = 0; i + 1 < listed; i += 2) {
    if (ext[1 + i] == 0x03 && ext[2 + i] == 0x04) return true;
  }
  return false;
}

// Server, PSK mode: a ClientHello without a PSK cannot succeed (we have no certificate);
// say so with the alert made for it instead of a generic handshake failure.
int check_client_hello(SSL* ssl, int* alert, void*) {
  const unsigned char* ext = nullptr;
  size_t length = 0;
  if (!offers_tls13(ssl)) return SSL_CLIENT_HELLO_SUCCESS;
  if (SSL_client_hello_get0_ext(ssl, kPreSharedKeyExtension, &ext, &length) == 1) return SSL_CLIENT_HELLO_SUCCESS;
  if (TlsNotes* notes = TlsContext::notes(ssl)) notes->peer_offered_no_psk = true;
  *alert = SSL_AD_UNKNOWN_PSK_IDENTITY;
  return SSL_CLIENT_HELLO_ERROR;
}

// Client, PSK mode: offer the PSK (once per handshake; `md` is the hash of a cipher
// chosen by a HelloRetryRequest, if any).
int use_psk(SSL* ssl, const EVP_MD* md, const unsigned char** identity, size_t* length, SSL_SESSION** session) {
  *identity = nullptr;
  *length = 0;
  *session = nullptr;
  const TlsContext* context = owner(ssl);
  if (context == nullptr || context->psk().empty()) return 1;
  if (md != nullptr && md != EVP_sha256()) return 1;
  *session = psk_session(ssl, context->psk());
  if (*session == nullptr) return 0;
  *identity = reinterpret_cast<const unsigned char*>(kPskIdentity);
  *length = std::strlen(kPskIdentity);
  return 1;
}

// Client, PSK mode: a server that answers with a certificate instead of the PSK is in
// certificate mode (or is not ours). Note it and fail.
int refuse_certificate(int, X509_STORE_CTX* store) {
  auto* ssl = static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  if (ssl != nullptr) {
    if (TlsNotes* notes = TlsContext::notes(ssl)) notes->peer_sent_certificate = true;
  }
  X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION);
  return 0;
}

std::string subject_of(X509* cert) {
  std::string out;
  if (cert == nullptr) return out;
  if (BIO* bio = BIO_new(BIO_s_mem())) {
    X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    if (n > 0) out.assign(data, static_cast<std::size_t>(n));
    BIO_free(bio);
  }
  return out;
}

// Certificate mode: OpenSSL decides; note whose certificate it was (a refused one is not
// kept on the connection, and the refusal should name it).
int note_subject(int preverified, X509_STORE_CTX* store) {
  auto* ssl = static_cast<SSL*>(X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()));
  TlsNotes* notes = ssl != nullptr ? TlsContext::notes(ssl) : nullptr;
  if (notes != nullptr && notes->peer_subject.empty()) {
    notes->peer_subject = subject_of(X509_STORE_CTX_get0_cert(store));  // the peer's own, not its CA's
  }
  return preverified;
}

void check_readable(const std::string& path, const char* what, const char* option) {
  if (path.empty()) throw Error(std::string(option) + " is required with --cert, --key and --ca (" + what + ")");
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) {
    throw Error(std::string(what) + " '" + path + "' (" + option + "): " + std::strerror(errno) +
                "; give the path of a PEM file");
  }
  std::fclose(f);
}

std::string time_text(const ASN1_TIME* t) {
  std::string out;
  if (BIO* bio = BIO_new(BIO_s_mem())) {
    ASN1_TIME_print(bio, t);
    char* data = nullptr;
    const long n = BIO_get_mem_data(bio, &data);
    if (n > 0) out.assign(data, static_cast<std::size_t>(n));
    BIO_free(bio);
  }
  return out;
}

}  // namespace

std::string TlsOptions::mode_name() const {
  return certificates() ? "certificates (--cert/--key/--ca)" : "a token (PSK)";
}

std::string derive_psk(const std::string& token, const std::string& label) {
  std::string key(kPskSize, '\0');
  size_t length = key.size();
  EVP_PKEY_CTX* kdf = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr);
  const bool ok = kdf != nullptr && EVP_PKEY_derive_init(kdf) > 0 &&
                  EVP_PKEY_CTX_set_hkdf_md(kdf, EVP_sha256()) > 0 &&
                  EVP_PKEY_CTX_set1_hkdf_salt(kdf, reinterpret_cast<const unsigned char*>(""), 0) > 0 &&
                  EVP_PKEY_CTX_set1_hkdf_key(kdf, reinterpret_cast<const unsigned char*>(token.data()),
                                             static_cast<int>(token.size())) > 0 &&
                  EVP_PKEY_CTX_add1_hkdf_info(kdf, reinterpret_cast<const unsigned char*>(label.data()),
                                              static_cast<int>(label.size())) > 0 &&
                  EVP_PKEY_derive(kdf, reinterpret_cast<unsigned char*>(key.data()), &length) > 0 &&
                  length == kPskSize;
  EVP_PKEY_CTX_free(kdf);
  if (!ok) throw Error("cannot derive the TLS key from the token (OpenSSL HKDF: " + openssl_reason() + ")");
  return key;
}

std::shared_ptr<TlsContext> TlsContext::create(Role role, const TlsOptions& options) {
  std::shared_ptr<TlsContext> context(new TlsContext(role, options));
  context->ctx_ = SSL_CTX_new(role == Role::kServer ? TLS_server_method() : TLS_client_method());
  SSL_CTX* ctx = context->ctx_;
  if (ctx == nullptr) throw Error("cannot create a TLS context (OpenSSL: " + openssl_reason() + ")");
  SSL_CTX_set_ex_data(ctx, context_index(), context.get());
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
  // No resumption: every connection is a full handshake, so no tickets to send or keep.
  SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  if (role == Role::kServer) SSL_CTX_set_num_tickets(ctx, 0);
  if (options.certificates()) {
    context->configure_certificates();
  } else {
    context->configure_psk();
  }
  return context;
}

TlsContext::~TlsContext() {
  SSL_CTX_free(ctx_);
  OPENSSL_cleanse(psk_.data(), psk_.size());
  OPENSSL_cleanse(options_.token.data(), options_.token.size());
}

void TlsContext::configure_psk() {
  if (options_.token.empty()) throw Error("no token: give --token-file, or --cert, --key and --ca");
  psk_ = derive_psk(options_.token, options_.psk_label);
  if (SSL_CTX_set_ciphersuites(ctx_, kPskSuites) != 1) {
    throw Error("OpenSSL refuses the TLS 1.3 suites " + std::string(kPskSuites) + ": " + openssl_reason());
  }
  if (role_ == Role::kServer) {
    SSL_CTX_set_psk_find_session_callback(ctx_, find_psk);
    SSL_CTX_set_client_hello_cb(ctx_, check_client_hello, nullptr);
  } else {
    SSL_CTX_set_psk_use_session_callback(ctx_, use_psk);
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, refuse_certificate);
  }
}

void TlsContext::configure_certificates() {
  check_readable(options_.cert_file, "certificate", "--cert");
  check_readable(options_.key_file, "private key", "--key");
  check_readable(options_.ca_file, "CA certificate", "--ca");
  // Like a token file: whoever may replace the key or the CA could make the daemon (or the
  // console) trust them; the key must also stay unread by others.
  check_trusted_file(options_.key_file, "private key (--key)", /*secret=*/true);
  check_trusted_file(options_.ca_file, "CA certificate (--ca)", /*secret=*/false);
  check_trusted_file(options_.cert_file, "certificate (--cert)", /*secret=*/false);
  if (SSL_CTX_use_certificate_chain_file(ctx_, options_.cert_file.c_str()) != 1) {
    throw Error("cannot use certificate '" + options_.cert_file + "' (--cert): " + openssl_reason() +
                "; it must be a PEM certificate (chain)");
  }
  if (SSL_CTX_use_PrivateKey_file(ctx_, options_.key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) {
      ERR_clear_error();
      throw Error("private key '" + options_.key_file + "' does not match certificate '" + options_.cert_file +
                  "'; give the key the certificate was issued for");
    }
    throw Error("cannot use private key '" + options_.key_file + "' (--key): " + openssl_reason() +
                "; it must be an unencrypted PEM key");
  }
  if (SSL_CTX_check_private_key(ctx_) != 1) {
    throw Error("private key '" + options_.key_file + "' does not match certificate '" + options_.cert_file +
                "'; give the key the certificate was issued for");
  }
  if (SSL_CTX_load_verify_locations(ctx_, options_.ca_file.c_str(), nullptr) != 1) {
    throw Error("cannot use CA certificate '" + options_.ca_file + "' (--ca): " + openssl_reason() +
                "; it must be the PEM certificate of the CA that signs the consoles' and daemons' certificates");
  }
  if (role_ == Role::kServer) {
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, note_subject);
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(options_.ca_file.c_str())) {
      SSL_CTX_set_client_CA_list(ctx_, names);
    }
    // A console in PSK mode offers one: note it, so its refusal can say why.
    SSL_CTX_set_psk_find_session_callback(ctx_, find_psk);
  } else {
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, note_subject);
  }
}

std::string TlsContext::certificate_problem() const {
  X509* cert = certificates() ? SSL_CTX_get0_certificate(ctx_) : nullptr;
  if (cert == nullptr) return "";
  const std::string which = "certificate '" + options_.cert_file + "' (--cert)";
  if (X509_cmp_current_time(X509_get0_notAfter(cert)) < 0) {
    return which + " expired on " + time_text(X509_get0_notAfter(cert)) + "; peers will refuse it: renew it";
  }
  if (X509_cmp_current_time(X509_get0_notBefore(cert)) > 0) {
    return which + " is not valid before " + time_text(X509_get0_notBefore(cert)) +
           "; peers will refuse it until then (is this host's clock right?)";
  }
  return "";
}

void TlsContext::attach(SSL* ssl, TlsNotes* notes) { SSL_set_ex_data(ssl, notes_index(), notes); }

TlsNotes* TlsContext::notes(SSL* ssl) { return static_cast<TlsNotes*>(SSL_get_ex_data(ssl, notes_index())); }

bool TlsContext::expect_peer_name(SSL* ssl, const std::string& host) {
  unsigned char ip[16];
  const bool literal = inet_pton(AF_INET, host.c_str(), ip) == 1 || inet_pton(AF_INET6, host.c_str(), ip) == 1;
  if (literal) return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str()) == 1;
  SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  return SSL_set1_host(ssl, host.c_str()) == 1 && SSL_set_tlsext_host_name(ssl, host.c_str()) == 1;
}

std::string peer_subject(SSL* ssl) {
  X509* cert = SSL_get1_peer_certificate(ssl);
  std::string out = subject_of(cert);
  X509_free(cert);
  if (out.empty()) {
    if (const TlsNotes* n = TlsContext::notes(ssl)) out = n->peer_subject;
  }
  return out;
}

}  // namespace sluice::tls
