// The control protocol's framing: every message is one Envelope (control.proto), sent as a
// 4-byte big-endian length followed by that many bytes of protobuf.
//
// Decoders trust nothing: a length of 0 or above the maximum, bytes that are not a valid
// Envelope, or an Envelope with no message in it are errors, reported as a sentence for the
// log; the connection is then closed by the caller.
//
// Thread safety: FrameDecoder and FdChannel's receive side are used by one thread;
// FdChannel::send may be called from any thread.
#ifndef SLUICE_CONTROL_CODEC_H_
#define SLUICE_CONTROL_CODEC_H_

#include <chrono>
#include <functional>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "control.pb.h"

namespace sluice::control {

// 2: inside TLS 1.3 (tls.h); 1 was plain text with an HMAC challenge.
inline constexpr std::uint32_t kProtocolVersion = 2;
inline constexpr std::size_t kHeaderSize = 4;
// The largest frame: a launch message carries the topology text.
inline constexpr std::size_t kMaxFrame = std::size_t{16} << 20;
// The largest unit-of-work payload that crosses to host daemons (start_unit) or to sluice
// serve (submit): one frame, with room for the message around it.
inline constexpr std::size_t kMaxPayload = kMaxFrame - 64;
// What a payload over kMaxPayload is told: "<what> is N bytes; ...".
std::string payload_too_large(const std::string& what, std::size_t size);

// "hello", "launch", ... for logs; "empty" when no message is set.
const char* kind(const Envelope& envelope);

// The frame for `envelope`: header and body.
std::string encode(const Envelope& envelope);

// The body length in a 4-byte header.
std::uint32_t decode_length(const unsigned char* header);
// Why `length` is not acceptable, or nullopt when it is.
std::optional<std::string> check_length(std::uint32_t length, std::size_t max_frame = kMaxFrame);
// Parses a frame's body. Returns why it is malformed, or nullopt on success.
std::optional<std::string> decode_body(const void* data, std::size_t size, Envelope* out);

// Incremental decoder for a byte stream (the fuzzer's entry point, and the blocking
// channels' reader).
// What every server-side decoder of a process may hold of frames larger than
// kLargeFrame that are still arriving (share_large_frame_budget): a peer with the token
// could otherwise make a server hold 16 MiB per connection, as many as it opened.
inline constexpr std::size_t kLargeFrame = std::size_t{64} << 10;
inline constexpr std::size_t kLargeFrameBudget = std::size_t{256} << 20;

class FrameDecoder {
 public:
  enum class Status { kNeedMore, kMessage, kError };

  explicit FrameDecoder(std::size_t max_frame = kMaxFrame) : max_frame_(max_frame) {}
  ~FrameDecoder();
  FrameDecoder(const FrameDecoder&) = delete;
  FrameDecoder& operator=(const FrameDecoder&) = delete;
  // Frames after this call may be up to `max_frame` bytes (e.g. more once authenticated).
  void set_max_frame(std::size_t max_frame) { max_frame_ = max_frame; }
  // From now on a frame over kLargeFrame is taken in only while the process's decoders that
  // share the budget hold at most kLargeFrameBudget of such frames together (the one in
  // arrival counts in full from its header on); past it, next() fails with an error that says
  // the server is busy. A server's decoders call it; a client's trust their server.
  void share_large_frame_budget() { budgeted_ = true; }
  void feed(const void* data, std::size_t size);
  // The next complete message. After kError, error() says why and the decoder stays failed.
  Status next(Envelope* out);
  const std::string& error() const { return error_; }
  // The error was the shared budget's (share_large_frame_budget): the server is busy, the
  // frame was not wrong; worth a reply before the connection closes.
  bool busy() const { return busy_; }
  std::size_t buffered() const { return buffer_.size() - offset_; }

 private:
  // Gives back the budget of the frame in arrival, if it holds any.
  void release_budget();

  std::size_t max_frame_;
  bool budgeted_ = false;
  bool busy_ = false;
  std::size_t reserved_ = 0;  // of the shared budget, for the large frame in arrival
  std::string buffer_;
  std::size_t offset_ = 0;
  std::string error_;
};

// A blocking control channel over a connected socket (TCP or a socketpair). Owns the fd.
class FdChannel {
 public:
  explicit FdChannel(int fd) : fd_(fd) {}
  ~FdChannel();
  FdChannel(const FdChannel&) = delete;
  FdChannel& operator=(const FdChannel&) = delete;

  enum class Status { kMessage, kTimeout, kClosed, kError };
  // Waits up to `timeout` (negative: forever) for the next message. kClosed: the peer
  // closed; kError: an I/O error or a malformed frame (error() says which).
  Status receive(Envelope* out, std::chrono::milliseconds timeout);
  // Sends one message, waiting while the peer takes it. Returns false when the connection
  // is gone or the peer took nothing for `timeout` (negative: wait for ever), with why in
  // *why (when given); the channel may have sent part of the frame then, so send nothing
  // more on it. `alive`, when given, is asked each time the peer has taken nothing for
  // `timeout`: true when the peer is known to be alive, only holding this side back, which
  // starts the `timeout` again.
  bool send(const Envelope& envelope, std::chrono::milliseconds timeout = std::chrono::milliseconds(-1),
            std::string* why = nullptr, const std::function<bool()>& alive = {});
  // Shuts the socket down both ways: a blocked receive() returns kClosed.
  void shutdown();
  const std::string& error() const { return error_; }
  int fd() const { return fd_; }

 private:
  int fd_;
  FrameDecoder decoder_;
  std::string error_;     // receive side
  std::mutex send_mu_;    // guards writes to fd_ (one frame at a time)
};

}  // namespace sluice::control

#endif  // SLUICE_CONTROL_CODEC_H_
