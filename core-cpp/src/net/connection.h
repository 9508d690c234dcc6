// Connection: one data-plane TCP connection, the part its two roles share (see
// outbound_link.h, the side that sends buffers, and inbound_link.h, the side that lands
// them): the write queue with batching and inline sends, framed reading, the HELLO/AUTH
// handshake (net/handshake.h), heartbeats, and the orderly goodbye (BYE).
//
// A session in the Asio style: shared_from_this, handlers capture `self`, one write in
// flight and a queue behind it.
//
// Thread safety: send(), is_closed() and host() from any thread (producer copies send
// DATA, consumer copies send CREDIT); everything else on the data plane's I/O thread.
#ifndef SLUICE_NET_CONNECTION_H_
#define SLUICE_NET_CONNECTION_H_

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange
#include <vector>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include "buffer/slot.h"
#include "net/frame.h"
#include "net/handshake.h"
#include "net/routes.h"
#include "net/send_queue.h"
#include "sync/adaptive_mutex.h"

namespace sluice::net {

namespace asio = boost::asio;
using asio::ip::tcp;

// What a connection tells its data plane. Called on the I/O thread.
class ConnectionEvents {
 public:
  virtual ~ConnectionEvents() = default;
  // An authenticated peer broke the protocol, went silent or away: the run fails.
  virtual void link_failed(const std::string& message) = 0;
  // A connection that never authenticated was refused (a stranger, garbage, a wrong
  // key or topology): logged (rate-limited) and listed, nothing else changes.
  virtual void stranger_refused(const std::string& message) = 0;
  // Why this host's connection to `host` is not up yet (for DataPlane::connect's error).
  virtual void connect_problem(int host, const std::string& why) = 0;
  // True once the plane is shutting down: a closed connection is expected then.
  virtual bool stopping() const = 0;
};

// What every connection of one data plane shares; owned by the plane, outlives them.
struct ConnectionEnv {
  asio::io_context& io;
  const Routes& routes;
  const DataFrameDecoder& decoder;
  const std::string& key;  // the run key (net/handshake.h)
  ConnectionEvents& events;
  // A peer silent this long (no frame at all, heartbeats included) is lost.
  std::chrono::milliseconds silence_limit;
  // Send a PING when nothing was sent for this long.
  std::chrono::milliseconds ping_interval;
  // TLS for connections that carry encrypted streams (Routes::encrypted), keyed by the run
  // key; null when no connection of this host needs it.
  asio::ssl::context* tls_client;
  asio::ssl::context* tls_server;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  virtual ~Connection() = default;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  tcp::socket& socket() { return socket_; }

  // Any thread. Queues `frame` for sending; for DATA, `slot` holds the payload and one
  // reference to it, which the connection releases once the bytes are written (or it
  // closes). False when the connection is closed (the caller keeps the reference). Throws
  // std::bad_alloc when the frame cannot be queued; the reference is released then.
  //
  // On an idle connection (nothing queued or in flight, nothing sent for 10 us) the
  // calling thread writes the frame itself with one non-blocking sendmsg, header and
  // payload straight from the pooled buffer: no hand-off to the I/O thread for a
  // ping-pong. Otherwise the frame is queued (a small payload copied in by the calling
  // thread, which then releases its buffer: net/send_queue.h) and the I/O thread writes
  // everything queued in one gathered write.
  bool send(const Frame& frame, detail::Slot* slot = nullptr);

  // I/O thread: the socket is connected; say HELLO (connector) or wait for one (acceptor).
  void start(std::string remote);
  // I/O thread. Closes the socket and gives back every buffer it holds. Idempotent.
  void close();
  bool is_closed() const { return closed_flag_.load(std::memory_order_acquire); }
  // I/O thread: tells the peer this end stops on purpose.
  void say_bye();
  // I/O thread: true when nothing is queued or being written (or closed).
  bool write_idle();
  // Any thread: frames waiting to be written and whether a write is under way (for
  // DataPlane::in_flight).
  struct SendState {
    std::size_t queued = 0;
    bool writing = false;
    bool closed = false;
  };
  SendState send_state();
  // I/O thread, called periodically by the plane: sends a PING on a quiet connection and
  // fails one whose peer has been silent for too long.
  void tick(std::uint64_t now_ns);

  bool authenticated() const { return authenticated_; }
  // Whether the peer's HELLO has arrived (I/O thread): until then it has sent nothing valid.
  bool greeted() const { return handshake_ != Handshake::kAwaitHello; }
  // When start() was called (Waiter::now_ns); I/O thread.
  std::uint64_t started_ns() const { return started_ns_; }
  // The peer's host index; -1 for an accepted connection until its HELLO.
  int host() const { return host_; }
  const std::string& remote() const { return remote_; }

 protected:
  Connection(ConnectionEnv& env, Side side, int host);

  // After the handshake, for every frame but PING and BYE (which this class handles).
  // For a DATA frame the role calls expect_payload() with where its bytes go, or returns
  // false. Returns false when reading must stop (the connection was closed).
  virtual bool on_frame(const Frame& frame) = 0;
  // The payload announced by the last expect_payload() is complete. False: stop reading.
  virtual bool on_payload() = 0;
  // The handshake succeeded; the role may refuse (e.g. a second connection from the same
  // host) by calling protocol_error and returning false.
  virtual bool on_authenticated() = 0;
  // The connection closed; give back what the role holds for the frame being read.
  virtual void on_close() {}

  // The next `size` payload bytes go to `dest` (which must stay valid until on_payload).
  void expect_payload(std::byte* dest, std::uint32_t size);
  // Reports what went wrong (a run failure once authenticated, a refusal before), closes
  // the connection, and returns false.
  bool protocol_error(const std::string& what);
  // An authenticated connection is lost for `why` (not the peer's fault as far as we can
  // tell: it went silent): a run failure naming the peer. Closes the connection.
  void lost(const std::string& why);
  // "data connection from host 'a' (127.0.0.1:40112)", for messages.
  const std::string& peer() const { return peer_; }

  ConnectionEnv& env_;

 private:
  enum class State { kHeader, kPayload };
  enum class Handshake { kAwaitHello, kAwaitAuth, kDone };
  using TlsStream = asio::ssl::stream<tcp::socket&>;

  // After TLS (if any) is up: say HELLO (connector), then read.
  void begin();
  // Acceptor: looks at the first byte (a TLS ClientHello starts with 0x16) to tell a TLS
  // connection from a plain one before reading anything.
  void sniff();
  void start_tls(asio::ssl::stream_base::handshake_type side);
  // Socket I/O through TLS when the connection has it.
  template <typename Buffers, typename Handler>
  void write_all(const Buffers& buffers, Handler&& handler);
  template <typename Buffer, typename Handler>
  void read_some(const Buffer& buffer, Handler&& handler);
  template <typename Buffer, typename Handler>
  void read_exactly(const Buffer& buffer, Handler&& handler);

  // Queues (or, on an idle connection, writes) one frame; `slot` as for send().
  bool enqueue(const std::array<std::byte, kFrameHeaderSize>& header, const std::byte* payload, std::uint32_t size,
               detail::Slot* slot, bool may_write_inline);
  void do_write();
  void on_write(const boost::system::error_code& ec);
  void do_read();
  void on_read(const boost::system::error_code& ec, std::size_t n);
  // The rest of a large payload, read straight into its block, a piece at a time.
  void read_direct();
  void on_direct_payload(const boost::system::error_code& ec, std::size_t n);
  // Handles every whole frame in the staging buffer, then reads more.
  void process();
  bool on_header(const Frame& frame);
  bool finish_payload();
  bool on_hello();
  bool on_auth();
  void send_hello();
  void send_auth();
  void connection_lost(const boost::system::error_code& ec);

  const Side side_;
  int host_;
  std::string remote_;  // "addr:port" of the other end
  std::string peer_;
  tcp::socket socket_;
  std::unique_ptr<TlsStream> tls_;  // set before the first byte is read or written; I/O thread
  std::uint8_t sniffed_ = 0;
  asio::steady_timer hello_timer_;

  AdaptiveMutex mu_;  // guards queued_, writing_, inline_writing_, closed_
  std::condition_variable_any inline_done_;
  SendQueue queued_;
  bool writing_ = false;         // a do_write is posted, a write is in flight, or a send writes inline
  bool inline_writing_ = false;  // a send() is in sendmsg on fd_
  bool closed_ = false;
  std::atomic<int> fd_{-1};      // the socket's descriptor once started; -1 when closed
  std::atomic<bool> closed_flag_{false};
  std::atomic<std::uint64_t> last_send_ns_{0};

  // I/O thread only.
  SendQueue batch_;  // being written
  std::vector<asio::const_buffer> buffers_;
  std::vector<std::byte> staging_;
  std::size_t begin_ = 0, end_ = 0;
  State state_ = State::kHeader;
  std::byte* payload_dest_ = nullptr;
  std::uint32_t payload_size_ = 0;
  std::uint32_t got_ = 0;
  bool exact_header_ = false;  // read the next header on its own (after a big payload)
  Handshake handshake_ = Handshake::kAwaitHello;
  bool authenticated_ = false;
  bool bye_seen_ = false;
  Frame current_;  // the handshake frame whose payload is being read
  std::array<std::byte, kNonceSize + kMaxHostName> handshake_payload_{};
  HandshakeFacts facts_;
  std::uint64_t last_heard_ns_ = 0;
  std::uint64_t started_ns_ = 0;
};

}  // namespace sluice::net

#endif  // SLUICE_NET_CONNECTION_H_
