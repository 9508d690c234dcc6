#include "control/tls_channel.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include <openssl/err.h>

namespace sluice::control {

using Clock = std::chrono::steady_clock;

namespace {

// A send gives up once the peer has taken nothing for this long (not: once the whole frame
// took this long; a 16 MiB payload on a slow link takes longer).
constexpr auto kSendTimeout = std::chrono::seconds(2);

// A socket BIO that writes with MSG_NOSIGNAL: OpenSSL's own uses write(), and a peer that
// has closed would kill the console with SIGPIPE.
int fd_of(BIO* bio) { return static_cast<int>(reinterpret_cast<std::intptr_t>(BIO_get_data(bio))); }

bool transient(int error) { return error == EAGAIN || error == EWOULDBLOCK || error == EINTR; }

int bio_write(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  const ssize_t n = ::send(fd_of(bio), data, static_cast<std::size_t>(size), MSG_NOSIGNAL);
  if (n < 0 && transient(errno)) BIO_set_retry_write(bio);
  return static_cast<int>(n);
}

int bio_read(BIO* bio, char* data, int size) {
  BIO_clear_retry_flags(bio);
  const ssize_t n = ::recv(fd_of(bio), data, static_cast<std::size_t>(size), 0);
  if (n < 0 && transient(errno)) BIO_set_retry_read(bio);
  return static_cast<int>(n);
}

long bio_ctrl(BIO*, int command, long, void*) { return command == BIO_CTRL_FLUSH ? 1 : 0; }

int bio_puts(BIO* bio, const char* text) { return bio_write(bio, text, static_cast<int>(std::strlen(text))); }

int bio_create(BIO* bio) {
  BIO_set_init(bio, 1);
  return 1;
}

const BIO_METHOD* socket_method() {
  static BIO_METHOD* method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "sluice socket");
    BIO_meth_set_write(m, bio_write);
    BIO_meth_set_read(m, bio_read);
    BIO_meth_set_puts(m, bio_puts);
    BIO_meth_set_ctrl(m, bio_ctrl);
    BIO_meth_set_create(m, bio_create);
    return m;
  }();
  return method;
}

}  // namespace

TlsChannel::TlsChannel(int fd, std::shared_ptr<const tls::TlsContext> context) : fd_(fd), context_(std::move(context)) {
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  ssl_ = SSL_new(context_->native());
  BIO* bio = ssl_ != nullptr ? BIO_new(socket_method()) : nullptr;
  if (bio == nullptr) {  // handshake() reports it
    SSL_free(ssl_);
    ssl_ = nullptr;
    return;
  }
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<std::intptr_t>(fd_)));
  SSL_set_bio(ssl_, bio, bio);  // ssl_ owns it
  SSL_set_mode(ssl_, SSL_MODE_ENABLE_PARTIAL_WRITE);
  tls::TlsContext::attach(ssl_, &notes_);
}

TlsChannel::~TlsChannel() {
  SSL_free(ssl_);
  if (fd_ >= 0) ::close(fd_);
}

void TlsChannel::shutdown() { ::shutdown(fd_, SHUT_RDWR); }

bool TlsChannel::wait(bool write, Clock::time_point deadline) {
  for (;;) {
    int timeout_ms = -1;  // the deadline may be time_point::max(): wait for ever
    if (deadline != Clock::time_point::max()) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return false;
      timeout_ms = static_cast<int>(std::min<long long>(left, 60'000));
    }
    pollfd pfd{fd_, static_cast<short>(write ? POLLOUT : POLLIN), 0};
    const int r = ::poll(&pfd, 1, timeout_ms);
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return true;  // let the SSL call report the socket's error
  }
}

void TlsChannel::fail(int result, bool established) {
  tls::TlsFailure f;
  f.established = established;
  const int kind = SSL_get_error(ssl_, result);
  const int saved_errno = errno;
  f.error = ERR_get_error();
  ERR_clear_error();
  if (kind == SSL_ERROR_ZERO_RETURN || (kind == SSL_ERROR_SYSCALL && f.error == 0) ||
      (f.error != 0 && ERR_GET_REASON(f.error) == SSL_R_UNEXPECTED_EOF_WHILE_READING)) {
    f.eof = true;
    f.error = 0;
  }
  f.collect(ssl_);
  failure_ = f;
  if (f.eof) {
    error_ = established ? "the connection was closed" : "the daemon closed the connection during the TLS handshake";
  } else if (f.error == 0) {
    error_ = std::string("TLS: ") + std::strerror(saved_errno);
  } else {
    const char* reason = ERR_reason_error_string(f.error);
    error_ = std::string("TLS: ") + (reason != nullptr ? reason : "error " + std::to_string(f.error));
  }
}

bool TlsChannel::handshake(const std::string& host, Clock::time_point deadline) {
  std::lock_guard<std::mutex> lock(mu_);
  if (ssl_ == nullptr) {
    error_ = "cannot create a TLS connection (OpenSSL: out of memory?)";
    return false;
  }
  if (context_->certificates() && !tls::TlsContext::expect_peer_name(ssl_, host)) {
    error_ = "cannot check the daemon's certificate against '" + host + "'";
    return false;
  }
  for (;;) {
    ERR_clear_error();
    const int r = SSL_connect(ssl_);
    if (r == 1) {
      established_ = true;
      return true;
    }
    const int kind = SSL_get_error(ssl_, r);
    if (kind == SSL_ERROR_WANT_READ || kind == SSL_ERROR_WANT_WRITE) {
      if (!wait(kind == SSL_ERROR_WANT_WRITE, deadline)) {
        error_ = "no answer to the TLS handshake within the timeout; is it a sluiced?";
        return false;
      }
      continue;
    }
    fail(r, false);
    return false;
  }
}

TlsChannel::Status TlsChannel::receive(Envelope* out, std::chrono::milliseconds timeout) {
  auto deadline = timeout.count() >= 0 ? Clock::now() + timeout : Clock::time_point::max();
  for (;;) {
    switch (decoder_.next(out)) {
      case FrameDecoder::Status::kMessage: return Status::kMessage;
      case FrameDecoder::Status::kError: error_ = decoder_.error(); return Status::kError;
      case FrameDecoder::Status::kNeedMore: break;
    }
    bool want_write = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ERR_clear_error();
      char chunk[16384];
      const int n = SSL_read(ssl_, chunk, sizeof chunk);
      if (n > 0) {
        decoder_.feed(chunk, static_cast<std::size_t>(n));
        if (timeout.count() >= 0) deadline = Clock::now() + timeout;  // the peer is not silent
        continue;
      }
      const int kind = SSL_get_error(ssl_, n);
      if (kind == SSL_ERROR_WANT_WRITE) {
        want_write = true;
      } else if (kind != SSL_ERROR_WANT_READ) {
        fail(n, established_);
        if (failure_->eof) {
          if (decoder_.buffered() > 0) {
            error_ = "the connection was closed in the middle of a message";
            return Status::kError;
          }
          return Status::kClosed;
        }
        return Status::kError;
      }
    }
    if (!wait(want_write, deadline)) return Status::kTimeout;
  }
}

bool TlsChannel::send(const Envelope& envelope) {
  const std::string frame = encode(envelope);
  std::lock_guard<std::mutex> lock(mu_);
  if (!established_ || ssl_ == nullptr) return false;
  auto deadline = Clock::now() + kSendTimeout;
  std::size_t done = 0;
  while (done < frame.size()) {
    ERR_clear_error();
    std::size_t written = 0;
    const int r = SSL_write_ex(ssl_, frame.data() + done, frame.size() - done, &written);
    if (r == 1) {
      done += written;
      deadline = Clock::now() + kSendTimeout;
      continue;
    }
    const int kind = SSL_get_error(ssl_, r);
    if ((kind == SSL_ERROR_WANT_WRITE || kind == SSL_ERROR_WANT_READ) && wait(kind == SSL_ERROR_WANT_WRITE, deadline)) {
      continue;
    }
    ERR_clear_error();
    return false;
  }
  return true;
}

std::string TlsChannel::description() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!established_) return "not established";
  const SSL_CIPHER* cipher = SSL_get_current_cipher(ssl_);
  return std::string(SSL_get_version(ssl_)) + ", " + (cipher != nullptr ? SSL_CIPHER_get_name(cipher) : "?") + ", " +
         (context_->certificates() ? "certificates" : "PSK");
}

}  // namespace sluice::control
