#include "control/codec.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <functional>
#include <cstring>
#include <mutex>

#include <google/protobuf/stubs/logging.h>

namespace sluice::control {

std::string payload_too_large(const std::string& what, std::size_t size) {
  return what + " is " + std::to_string(size) + " bytes; a unit's payload may be at most " + std::to_string(kMaxPayload) +
         " bytes across hosts and to sluice serve (it travels in one control message): pass a file's path or a key "
         "in it instead of its content";
}

const char* kind(const Envelope& e) {
  switch (e.body_case()) {
    case Envelope::kHello: return "hello";
    case Envelope::kAuthResult: return "auth_result";
    case Envelope::kLaunch: return "launch";
    case Envelope::kAppReady: return "app_ready";
    case Envelope::kWiring: return "wiring";
    case Envelope::kStarted: return "started";
    case Envelope::kStartUnit: return "start_unit";
    case Envelope::kUnitDone: return "unit_done";
    case Envelope::kProgress: return "progress";
    case Envelope::kFailure: return "failure";
    case Envelope::kAbort: return "abort";
    case Envelope::kShutdown: return "shutdown";
    case Envelope::kHeartbeat: return "heartbeat";
    case Envelope::kExitReport: return "exit_report";
    case Envelope::kError: return "error";
    case Envelope::kFilterLog: return "filter_log";
    case Envelope::kSubmit: return "submit";
    case Envelope::kAccepted: return "accepted";
    case Envelope::kResultChunk: return "result_chunk";
    case Envelope::kUnitEnded: return "unit_ended";
    case Envelope::kStop: return "stop";
    case Envelope::kStopping: return "stopping";
    case Envelope::BODY_NOT_SET: break;
  }
  return "empty";
}

std::string encode(const Envelope& envelope) {
  const std::size_t size = envelope.ByteSizeLong();
  std::string frame(kHeaderSize + size, '\0');
  const auto n = static_cast<std::uint32_t>(size);
  frame[0] = static_cast<char>(n >> 24);
  frame[1] = static_cast<char>(n >> 16);
  frame[2] = static_cast<char>(n >> 8);
  frame[3] = static_cast<char>(n);
  envelope.SerializeToArray(frame.data() + kHeaderSize, static_cast<int>(size));
  return frame;
}

std::uint32_t decode_length(const unsigned char* h) {
  return (std::uint32_t{h[0]} << 24) | (std::uint32_t{h[1]} << 16) | (std::uint32_t{h[2]} << 8) |
         std::uint32_t{h[3]};
}

std::optional<std::string> check_length(std::uint32_t length, std::size_t max_frame) {
  if (length == 0) return std::string("frame of length 0; every frame carries one message");
  if (length > max_frame) {
    return "frame of " + std::to_string(length) + " bytes exceeds the limit of " +
           std::to_string(max_frame) + " bytes";
  }
  return std::nullopt;
}

std::optional<std::string> decode_body(const void* data, std::size_t size, Envelope* out) {
  // libprotobuf logs each invalid string it meets to stderr; hostile input must not fill
  // the daemon's log. The caller logs one clear line per rejected frame instead.
  static std::once_flag quiet;
  std::call_once(quiet, [] { google::protobuf::SetLogHandler(nullptr); });
  out->Clear();
  if (!out->ParseFromArray(data, static_cast<int>(size))) {
    return "malformed message (" + std::to_string(size) + " bytes that are not a control Envelope)";
  }
  if (out->body_case() == Envelope::BODY_NOT_SET) {
    return std::string("message with no known body (unknown or missing message type)");
  }
  return std::nullopt;
}

namespace {
std::atomic<std::size_t> g_large_frames_held{0};  // of kLargeFrameBudget
}  // namespace

FrameDecoder::~FrameDecoder() { release_budget(); }

void FrameDecoder::release_budget() {
  if (reserved_ != 0) g_large_frames_held.fetch_sub(reserved_, std::memory_order_relaxed);
  reserved_ = 0;
}

void FrameDecoder::feed(const void* data, std::size_t size) {
  if (!error_.empty()) return;
  if (offset_ > 0 && offset_ == buffer_.size()) {
    buffer_.clear();
    offset_ = 0;
  }
  buffer_.append(static_cast<const char*>(data), size);
}

FrameDecoder::Status FrameDecoder::next(Envelope* out) {
  if (!error_.empty()) return Status::kError;
  const std::size_t available = buffer_.size() - offset_;
  if (available < kHeaderSize) return Status::kNeedMore;
  const auto* p = reinterpret_cast<const unsigned char*>(buffer_.data() + offset_);
  const std::uint32_t length = decode_length(p);
  if (auto problem = check_length(length, max_frame_)) {
    error_ = *problem;
    return Status::kError;
  }
  if (available - kHeaderSize < length) {
    if (length > kLargeFrame && reserved_ == 0) {
      const std::size_t need = kHeaderSize + length;
      if (budgeted_) {
        const std::size_t held = g_large_frames_held.fetch_add(need, std::memory_order_relaxed);
        if (held + need > kLargeFrameBudget) {
          g_large_frames_held.fetch_sub(need, std::memory_order_relaxed);
          busy_ = true;
          error_ = "busy: other connections are sending " + std::to_string(held >> 20) + " MiB of large messages at "
                   "once (at most " + std::to_string(kLargeFrameBudget >> 20) + " MiB); send this one again shortly";
          return Status::kError;
        }
        reserved_ = need;
      }
      buffer_.reserve(offset_ + need);  // once, not doubling its way there
    }
    return Status::kNeedMore;
  }
  if (auto problem = decode_body(p + kHeaderSize, length, out)) {
    error_ = *problem;
    return Status::kError;
  }
  release_budget();
  offset_ += kHeaderSize + length;
  if (offset_ == buffer_.size() && buffer_.capacity() > kLargeFrame) {
    // All taken: a large frame's memory goes now, not when the connection does (a peer with
    // the token kept 16 MiB per connection it left open).
    std::string().swap(buffer_);
    offset_ = 0;
    return Status::kMessage;
  }
  if (offset_ > (std::size_t{1} << 20) && offset_ * 2 > buffer_.size()) {
    buffer_.erase(0, offset_);
    offset_ = 0;
  }
  return Status::kMessage;
}

FdChannel::~FdChannel() {
  if (fd_ >= 0) ::close(fd_);
}

void FdChannel::shutdown() { ::shutdown(fd_, SHUT_RDWR); }

FdChannel::Status FdChannel::receive(Envelope* out, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    switch (decoder_.next(out)) {
      case FrameDecoder::Status::kMessage: return Status::kMessage;
      case FrameDecoder::Status::kError: error_ = decoder_.error(); return Status::kError;
      case FrameDecoder::Status::kNeedMore: break;
    }
    int wait_ms = -1;
    if (timeout.count() >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return Status::kTimeout;
      wait_ms = static_cast<int>(left.count());
    }
    pollfd pfd{fd_, POLLIN, 0};
    int r = ::poll(&pfd, 1, wait_ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      error_ = std::string("poll: ") + std::strerror(errno);
      return Status::kError;
    }
    if (r == 0) return Status::kTimeout;
    char chunk[65536];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n == 0) return Status::kClosed;
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == ECONNRESET) return Status::kClosed;
      error_ = std::string("read: ") + std::strerror(errno);
      return Status::kError;
    }
    decoder_.feed(chunk, static_cast<std::size_t>(n));
  }
}

bool FdChannel::send(const Envelope& envelope, std::chrono::milliseconds timeout, std::string* why,
                     const std::function<bool()>& alive) {
  const std::string frame = encode(envelope);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto fail = [why](std::string what) {
    if (why != nullptr) *why = std::move(what);
    return false;
  };
  std::lock_guard<std::mutex> lock(send_mu_);
  std::size_t done = 0;
  while (done < frame.size()) {
    ssize_t n = ::send(fd_, frame.data() + done, frame.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      done += static_cast<std::size_t>(n);
      deadline = std::chrono::steady_clock::now() + timeout;  // it took something
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return fail(std::string("write: ") + std::strerror(errno));
    int wait_ms = -1;
    if (timeout.count() >= 0) {
      const auto now = std::chrono::steady_clock::now();
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
      if (left.count() <= 0 && alive && alive()) left = timeout;
      if (left.count() <= 0) {
        return fail("the peer took nothing for " + std::to_string(timeout.count()) + " ms");
      }
      deadline = now + left;
      wait_ms = static_cast<int>(left.count());
    }
    pollfd pfd{fd_, POLLOUT, 0};
    if (::poll(&pfd, 1, wait_ms) < 0 && errno != EINTR) return fail(std::string("poll: ") + std::strerror(errno));
  }
  return true;
}

}  // namespace sluice::control
