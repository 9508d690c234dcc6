// TlsChannel: the console's end of a control connection: TLS 1.3 (tls.h) over a connected
// TCP socket, with the same framing and the same blocking interface as FdChannel (codec.h),
// so one reader thread can wait in receive() while other threads send().
//
// OpenSSL's SSL object is not safe for concurrent use, so every SSL_* call holds one mutex;
// the socket is non-blocking and a caller waits in poll() without it. A send() that cannot
// make progress for 2 s fails (a daemon that stopped reading must not freeze the console).
//
// Thread safety: handshake() first, from one thread; then receive() from one thread at a
// time, send() and shutdown() from any thread.
#ifndef SLUICE_CONTROL_TLS_CHANNEL_H_
#define SLUICE_CONTROL_TLS_CHANNEL_H_

#include <openssl/ssl.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "control/codec.h"
#include "tls/tls.h"
#include "tls/tls_errors.h"

namespace sluice::control {

class TlsChannel {
 public:
  // Takes ownership of `fd`, a connected TCP socket; `context` must be a client context.
  TlsChannel(int fd, std::shared_ptr<const tls::TlsContext> context);
  ~TlsChannel();
  TlsChannel(const TlsChannel&) = delete;
  TlsChannel& operator=(const TlsChannel&) = delete;

  // Runs the TLS handshake until `deadline`. `host` (as dialled) is what the daemon's
  // certificate must name, in certificate mode. Returns true when it completed; false on
  // a TLS failure (failure() says which) or at the deadline (failure() empty; error()).
  // Note: in TLS 1.3 the daemon checks the console's certificate after the console has
  // finished; a refusal then arrives as the first receive()'s error.
  bool handshake(const std::string& host, std::chrono::steady_clock::time_point deadline);

  using Status = FdChannel::Status;
  // As FdChannel::receive, except that `timeout` is silence: it counts from the last bytes
  // that arrived, so that a large frame on a slow link (a 16 MiB payload, a 1 MiB result
  // chunk) is not taken for a silent peer. kError: a TLS failure (failure() is set) or a
  // malformed frame.
  Status receive(Envelope* out, std::chrono::milliseconds timeout);
  // Sends one message. Returns false (error() says why) when the connection is gone.
  bool send(const Envelope& envelope);
  // Shuts the socket down both ways: a blocked receive() returns kClosed.
  void shutdown();

  // The last receive side error, as a sentence; for TLS failures the raw facts too.
  const std::string& error() const { return error_; }
  const std::optional<tls::TlsFailure>& failure() const { return failure_; }
  // The socket (still owned by the channel).
  int fd() const { return fd_; }
  // "TLS 1.3, TLS_AES_128_GCM_SHA256, PSK" after the handshake.
  std::string description();

 private:
  // Records the failure of an SSL call that returned `result` (holding mu_).
  void fail(int result, bool established);
  // Waits until the socket is readable (`write` false) or writable, up to `deadline`.
  bool wait(bool write, std::chrono::steady_clock::time_point deadline);

  int fd_;
  std::shared_ptr<const tls::TlsContext> context_;
  tls::TlsNotes notes_;
  std::mutex mu_;  // guards ssl_ (every SSL_* call) and the send side
  SSL* ssl_ = nullptr;
  bool established_ = false;
  FrameDecoder decoder_;               // receive side
  std::string error_;                  // receive side
  std::optional<tls::TlsFailure> failure_;  // receive side (and the handshake)
};

}  // namespace sluice::control

#endif  // SLUICE_CONTROL_TLS_CHANNEL_H_
