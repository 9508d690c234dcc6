// Link: one data-plane TCP connection to a peer host (see docs/protocol.md, "Data plane").
//
// Outbound: this host sends DATA/END_OF_WORK and reads CREDIT. Inbound: this host reads
// DATA/END_OF_WORK, lands the items in local channels and sends CREDIT. Both start with a
// HELLO each way and may end with BYE. A session in the Asio style: shared_from_this,
// handlers capture `self`, one write in flight and a queue behind it.
//
// Thread safety: send() from any thread (producer and consumer copies, the I/O thread);
// everything else on the DataPlane's I/O thread.
#ifndef SLUICE_NET_LINK_H_
#define SLUICE_NET_LINK_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio.hpp>

#include "buffer/slot.h"
#include "net/frame.h"

namespace sluice::net {

struct DataPlaneState;

class Link : public std::enable_shared_from_this<Link> {
 public:
  enum class Role { kOutbound, kInbound };

  Link(DataPlaneState& plane, Role role, int host);

  boost::asio::ip::tcp::socket socket;

  // Any thread. Queues a frame (taking the slot reference, if any). False when closed.
  //
  // On an idle link (nothing written for 10 us, nothing in flight) the calling thread
  // writes the frame itself with one non-blocking sendmsg (header and payload straight
  // from the pooled buffer): no hand-off to the I/O thread for a ping-pong. Otherwise, and
  // for whatever the socket does not take at once, the frame is queued; the I/O thread
  // writes everything queued in one gathered write.
  bool send(const FrameHeader& h, detail::Slot* slot);

  // I/O thread: an accepted connection; waits for the peer's HELLO.
  void start_inbound();

  // I/O thread: connected to the peer; says HELLO and waits for the answer.
  void start_outbound();
  void send_hello();

  // I/O thread. Closes the socket and gives back every queued buffer.
  void close();
  bool is_closed() const { return closed_flag_.load(std::memory_order_acquire); }
  // I/O thread: tells the peer this end stops on purpose (BYE).
  void say_bye();
  // True when nothing is queued or being written (or the link is closed).
  bool write_idle();

  void set_remote(std::string remote) { remote_ = std::move(remote); }
  int host() const { return host_; }

 private:
  struct OutFrame {
    FrameHeader h;
    detail::Slot* slot;  // DATA: one reference, released once written
    std::uint32_t skip;  // bytes of it already written (by an inline send)
  };

  const std::byte* payload_of(const FrameHeader& h, detail::Slot* slot) const;
  enum class State { kHeader, kPayload, kPaused };

  // ---- writing (I/O thread) ----
  void do_write();
  void on_write(const boost::system::error_code& ec);

  // ---- reading (I/O thread) ----
  void do_read();
  void on_read(const boost::system::error_code& ec, std::size_t n);
  void on_payload(const boost::system::error_code& ec);

  // Handles every whole frame in the staging buffer, then reads more (unless paused,
  // reading a payload directly, or closed).
  void process();
  std::byte* payload_dest();

  // A decoded header. False when reading must stop here (closed, or paused).
  bool on_header(const FrameHeader& h);
  bool begin_payload(const FrameHeader& h);
  bool on_credit(const FrameHeader& h);
  bool on_data(const FrameHeader& h);

  // Takes a pooled buffer for cur_'s payload, or pauses until one is free.
  bool acquire_and_begin();

  // The payload of cur_ is complete.
  bool finish_payload();
  bool on_hello(const std::string& name);

  // Always returns false (reading stops).
  bool protocol_error(const std::string& what);
  void connection_lost(const boost::system::error_code& ec);

  DataPlaneState& plane_;
  const Role role_;
  int host_;              // -1 for an inbound link until its HELLO
  std::string remote_;    // "addr:port" of the other end
  std::string peer_;      // for messages
  boost::asio::steady_timer timer_;

  std::mutex mu_;  // guards queue_, writing_, inline_writing_, closed_
  std::condition_variable inline_done_;
  std::vector<OutFrame> queue_;
  bool writing_ = false;  // a do_write is posted, a write is in flight, or a send writes inline
  bool inline_writing_ = false;  // a send() is in sendmsg on fd_
  std::atomic<int> fd_{-1};  // the socket's descriptor once connected; -1 when closed
  std::atomic<std::uint64_t> last_send_ns_{0};  // when send() was last called
  bool closed_ = false;
  std::atomic<bool> closed_flag_{false};  // closed_, readable without the lock

  // I/O thread only.
  std::vector<OutFrame> batch_;  // being written
  std::vector<std::byte> packed_;
  std::vector<boost::asio::const_buffer> buffers_;
  std::vector<std::byte> staging_;
  std::size_t begin_ = 0, end_ = 0;
  State state_ = State::kHeader;
  FrameHeader cur_;
  detail::Slot* cur_slot_ = nullptr;
  std::uint32_t got_ = 0;
  std::byte hello_name_[net::kMaxHostName];
  bool hello_done_ = false;
  bool bye_seen_ = false;
  bool exact_header_ = false;
};


}  // namespace sluice::net

#endif  // SLUICE_NET_LINK_H_
