// FrameStream: the control protocol (control/codec.h) over one Asio stream, the way sluiced
// speaks it to an app daemon (AppSupervisor, over a Unix socketpair; consoles are
// control::TlsSession's). Reads one frame at a time, checking its length before trusting
// it; writes one frame at a time, the rest queued behind it.
//
// Single-threaded: everything on the io_context's thread. Every operation takes `keep`, the
// owner's shared_from_this(), and holds it until its handler has run: the owner, and with
// it this FrameStream, outlives every operation in flight.
#ifndef SLUICE_DAEMONS_FRAME_STREAM_H_
#define SLUICE_DAEMONS_FRAME_STREAM_H_

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange
#include <vector>

#include <boost/asio.hpp>

#include "control/codec.h"

namespace sluice::sluiced {

// What one read() found.
struct FrameRead {
  enum class Status {
    kMessage,    // `message` holds it
    kClosed,     // the peer closed the connection between two frames
    kTruncated,  // the peer closed it in the middle of a frame
    kFailed,     // the read failed: `error`
    kBadLength,  // the header's length is impossible: `problem`
    kTooLarge,   // the length is above the reader's limit: `length`, `problem`
    kBadBody,    // the body is not a control Envelope: `problem`
  };
  Status status = Status::kMessage;
  control::Envelope message;
  boost::system::error_code error;
  std::string problem;
  std::uint32_t length = 0;

  static FrameRead failed(const boost::system::error_code& ec, bool mid_frame) {
    FrameRead r;
    r.status = ec != boost::asio::error::eof ? Status::kFailed : mid_frame ? Status::kTruncated : Status::kClosed;
    r.error = ec;
    return r;
  }
  static FrameRead bad(Status status, std::string problem, std::uint32_t length = 0) {
    FrameRead r;
    r.status = status;
    r.problem = std::move(problem);
    r.length = length;
    return r;
  }
};

template <typename Socket>
class FrameStream {
 public:
  // `written(ec)` runs when the write queue has drained (ec clear), or when a write failed
  // (ec set; whatever was queued is dropped). May be empty.
  using Written = std::function<void(const boost::system::error_code&)>;

  // `socket_args` construct the socket (an io_context, or a socket to move from).
  template <typename... SocketArgs>
  explicit FrameStream(Written written, SocketArgs&&... socket_args)
      : socket_(std::forward<SocketArgs>(socket_args)...), written_(std::move(written)) {}
  FrameStream(const FrameStream&) = delete;
  FrameStream& operator=(const FrameStream&) = delete;

  // The stream (a socket, or an ssl::stream over one).
  Socket& socket() { return socket_; }

  // Reads the next frame and calls `done(const FrameRead&)`. A frame longer than `limit`
  // bytes is not read (kTooLarge). REQUIRES: no other read in flight.
  template <typename Handler>
  void read(std::shared_ptr<void> keep, std::size_t limit, Handler done) {
    boost::asio::async_read(
        socket_, boost::asio::buffer(header_),
        [this, keep, limit, done = std::move(done)](boost::system::error_code ec, std::size_t) mutable {
          if (ec) return done(FrameRead::failed(ec, false));
          const std::uint32_t length = control::decode_length(header_.data());
          if (auto problem = control::check_length(length)) {
            return done(FrameRead::bad(FrameRead::Status::kBadLength, *problem, length));
          }
          if (length > limit) {
            return done(FrameRead::bad(FrameRead::Status::kTooLarge, *control::check_length(length, limit), length));
          }
          if (!socket_.lowest_layer().is_open()) return done(FrameRead::failed(boost::asio::error::operation_aborted, true));
          read_body(std::move(keep), length, std::move(done));
        });
  }

  // Queues `message` behind the frames being written. Does nothing once the socket is closed.
  void send(std::shared_ptr<void> keep, const control::Envelope& message) {
    if (!socket_.lowest_layer().is_open()) return;
    const bool idle = writes_.empty();
    writes_.push_back(control::encode(message));
    if (idle) do_write(std::move(keep));
  }

 private:
  template <typename Handler>
  void read_body(std::shared_ptr<void> keep, std::uint32_t length, Handler done) {
    body_.resize(length);
    boost::asio::async_read(socket_, boost::asio::buffer(body_),
                            [this, keep, done = std::move(done)](boost::system::error_code ec, std::size_t) mutable {
                              if (ec) return done(FrameRead::failed(ec, true));
                              FrameRead r;
                              if (auto problem = control::decode_body(body_.data(), body_.size(), &r.message)) {
                                return done(FrameRead::bad(FrameRead::Status::kBadBody, *problem));
                              }
                              done(r);
                            });
  }

  void do_write(std::shared_ptr<void> keep) {
    boost::asio::async_write(socket_, boost::asio::buffer(writes_.front()),
                             [this, keep](boost::system::error_code ec, std::size_t) {
                               if (ec) {
                                 writes_.clear();
                               } else {
                                 writes_.pop_front();
                                 if (!writes_.empty()) return do_write(keep);
                               }
                               if (written_) written_(ec);
                             });
  }

  Socket socket_;
  Written written_;
  std::array<unsigned char, control::kHeaderSize> header_{};
  std::vector<char> body_;
  std::deque<std::string> writes_;
};

}  // namespace sluice::sluiced

#endif  // SLUICE_DAEMONS_FRAME_STREAM_H_
