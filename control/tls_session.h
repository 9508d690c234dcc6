// TlsSession: one peer's connection to a control server (TlsServer, tls_server.h): what
// sluiced's console sessions (daemons/console_session.h) and `sluice serve`'s client
// sessions (console/serve_session.h) share. A subclass adds what its server does with the
// requests, through its own ServerProtocol (server_protocol.h).
//
// The connection must be TLS 1.3 (tls/tls.h), which authenticates both sides (the token's
// PSK, or certificates); then the peer says hello (ServerProtocol checks it), and the
// session answers auth_result{ok: true, host}. Handshake and hello must be done within
// 5 s. Once open, the session heartbeats the peer every 500 ms and drops it when it goes
// (closed connection, or 3 s without a word), breaks the protocol, or sends a record that
// fails TLS's integrity check. Writes go one at a time, the rest queued behind, small frames
// joined into one write (outgoing_frames.h; a heartbeat goes ahead of the queue: a peer
// behind a long queue still hears one in time);
// a subclass that feeds the queue faster than the peer reads watches queued_bytes() and
// hears queue_shrank() as frames leave.
// A refusal, or the subclass's last word (close_after_queue), closes once what is queued
// is written; with Style::linger the session then shuts its end down and waits for the peer
// to close its own (5 s at most once it takes nothing more of what was sent), so that nothing
// sent is lost to a reset.
//
// Until the hello the connection holds an Admission ticket (the server's caps on
// unauthenticated connections) and logs through the server's rate-limited log.
//
// An Asio session: enable_shared_from_this, start()/stop(), handlers hold `self`.
// Single-threaded: everything runs on the TlsServer's io_context thread.
#ifndef SLUICE_CONTROL_TLS_SESSION_H_
#define SLUICE_CONTROL_TLS_SESSION_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include "control/admission.h"
#include "control/outgoing_frames.h"
#include "control/server_protocol.h"
#include "daemons/log.h"
#include "tls/tls.h"

namespace sluice::control {

class TlsServer;

class TlsSession : public std::enable_shared_from_this<TlsSession>, protected ServerProtocol::Session {
 public:
  // How one server's sessions speak and close. Outlives them.
  struct Style {
    std::string peer;      // "console": labels ("console #3 (10.0.0.5:41234)"), "the console did not close..."
    std::string host;      // auth_result's host: the machine's name, "sluice serve"
    std::string silence;   // why a silent peer is dropped: "no word from the client for 3 s"
    daemon::Level authenticated_log = daemon::Level::kInfo;  // the "authenticated (TLSv1.3, ...)" line
    // A failure after the hello (a TLS record that fails its check, a broken protocol) is
    // logged as a warning with its whole reason; stop() then has the short one ("TLS
    // failure"), or again the whole one (false).
    bool short_reasons = false;
    // The last word: shut our end down and wait for the peer to close its own (true), or
    // close once it is written.
    bool linger = false;
    // Who speaks TLS 1.3 to this server, for a peer that does not: "consoles ...".
    std::string tls_speakers;
  };

  // The peer's time to finish the TLS handshake and say hello.
  static constexpr auto kAuthTimeout = std::chrono::seconds(5);
  // Once open: a heartbeat to the peer this often, and the peer dropped after this long
  // without a word.
  static constexpr auto kHeartbeatEvery = std::chrono::milliseconds(500);
  static constexpr auto kSilence = std::chrono::milliseconds(3000);
  // Style::linger: how long the peer gets to close its end, from the last time it took some
  // of what was sent.
  static constexpr auto kLinger = std::chrono::seconds(5);

  // `id` numbers the session in log lines. `server` and `style` outlive the session.
  // `ticket` counts the connection against the server's caps until the peer has
  // authenticated.
  TlsSession(boost::asio::ip::tcp::socket socket, TlsServer& server, std::uint64_t id, Admission::Ticket ticket,
             const Style& style);
  ~TlsSession() override = default;

  // Starts: the peer has 5 s to finish the TLS handshake and say hello.
  void start();
  // Closes the connection now; logs `why` (the subclass logs an authenticated peer's, in
  // ending()). Idempotent.
  void stop(const std::string& why);
  // Closes once everything queued is written (as close_after_queue), unless closing already;
  // with `linger`, as Style::linger says whatever the style (a last word that must be read).
  void finish(const std::string& why, bool linger = false);
  // As stop(why), without a log line: the server closes a connection that has not
  // authenticated to make room for a new one, and says so in its own (rate-limited) log.
  void evict(const std::string& why);
  // The peer has authenticated (TLS and hello).
  bool authenticated() const { return opened_; }
  // Not authenticated and not closed: it holds an Admission ticket.
  bool authenticating() const { return !opened_ && phase_ != Phase::kClosed; }
  // The peer has sent nothing yet (its first byte is awaited).
  bool sent_nothing() const { return phase_ == Phase::kStart; }
  // When the connection was admitted.
  std::chrono::steady_clock::time_point admitted_at() const { return admitted_at_; }
  // The peer's address ("127.0.0.1"), as the caps count it.
  const std::string& peer_address() const { return peer_address_; }
  // "client #3 (127.0.0.1:41234)", for logs.
  const std::string& label() const { return label_; }

 protected:
  using TlsStream = boost::asio::ssl::stream<boost::asio::ip::tcp::socket>;

  // The subclass's protocol, fed what the peer sends.
  virtual ServerProtocol& protocol() = 0;
  // What start() does after arming the 5 s deadline: looks at the peer's first byte, then
  // runs the TLS handshake (default).
  virtual void begin() { await_first_byte(); }
  // The peer's first byte is not the start of a TLS handshake. By default logs what it looks
  // like (plain HTTP, say) and who speaks TLS here (Style::tls_speakers), and stops.
  virtual void not_tls(unsigned char first);
  // stop() is under way (the connection still open): log an authenticated peer's `why`, and
  // let go of what the session holds.
  virtual void ending(const std::string& why) = 0;
  // `results` bytes, given to write(), were written or dropped.
  virtual void written(std::size_t /*results*/) {}
  // A frame was written: queued_bytes() are left. Not called once stopped.
  virtual void queue_shrank() {}
  // How long an authenticated peer may take none of what waits to be written to it before
  // it is dropped (zero, the default: no limit). For a subclass whose peer holds others up
  // when it stops reading (serve's client, whose unit holds back the units behind it).
  virtual std::chrono::steady_clock::duration write_stall_limit() const { return {}; }

  // Runs the TLS handshake, then reads.
  void handshake();
  // Queues `frame`; `results` is passed to written() once it is out (or dropped).
  void write(std::string frame, std::size_t results = 0);
  // Closes after a failure: an authenticated peer's is a warning of its own (`why`); the
  // session then stops with `short_why` (Style::short_reasons) or `why`.
  void fail(const std::string& why, const std::string& short_why);
  // The last word was said: closes once what is queued is written (Style::linger).
  void close_after_queue(const std::string& why);
  bool stopped() const { return phase_ == Phase::kClosed; }
  // The bytes of the frames queued and not yet written (the one being written included).
  std::size_t queued_bytes() const { return writes_.bytes(); }
  TlsStream& stream() { return stream_; }
  TlsServer& server() { return server_; }
  const Style& style() const { return style_; }
  template <typename T>
  std::shared_ptr<T> self() {
    return std::static_pointer_cast<T>(shared_from_this());
  }

  // ServerProtocol::Session; close() is the subclass's (fail or close_after_queue).
  void send(const Envelope& message) override;
  void opened(const std::string& client) override;
  void heard() override;

 private:
  enum class Phase { kStart, kHandshake, kTls, kClosing, kClosed };

  // Before TLS: is it a TLS client at all? Peeks at the first byte without taking it.
  void await_first_byte();
  void on_first_byte();
  void on_handshake(const boost::system::error_code& ec);
  void read_next();
  void on_read(const boost::system::error_code& ec, std::size_t n);
  // A TLS-level failure, as the server explains it (tls/tls_errors.h).
  std::string tls_failure(const boost::system::error_code& ec, bool established);
  void do_write();
  // Queues a heartbeat ahead of what waits (the peer counts its silence; the order of the
  // rest does not matter to it).
  void write_heartbeat();
  void arm_deadline(std::chrono::steady_clock::duration after, std::string what);
  void heartbeat();
  void linger();
  // One look, about every second, at whether the lingering peer still takes what was sent.
  void linger_look(int last_unsent, std::chrono::steady_clock::time_point until);
  // Bytes the kernel still holds for the peer: not sent yet, or not acknowledged.
  int unsent();
  // One look, about every second, at whether the peer took some of what waits for it (a
  // write ended, or the kernel holds less for it): drops it after write_stall_limit()
  // without. Nothing waiting counts as taken.
  void watch_writes(std::chrono::steady_clock::duration limit);

  TlsServer& server_;
  const Style& style_;
  Admission::Ticket ticket_;
  tls::TlsNotes notes_;  // before stream_: its SSL object points here
  TlsStream stream_;
  std::string label_;
  std::string peer_address_;
  const std::chrono::steady_clock::time_point admitted_at_ = std::chrono::steady_clock::now();
  Phase phase_ = Phase::kStart;
  bool opened_ = false;
  std::string closing_reason_;  // kClosing: stop with it once the queue is written
  bool lingering_ = false;      // our end is shut down; waiting for the peer's
  bool linger_once_ = false;    // finish(why, true): linger this time
  bool evicted_ = false;        // evict(): stop() logs nothing
  std::array<char, 16384> read_buffer_{};
  OutgoingFrames writes_;  // the front one is being written
  boost::asio::steady_timer deadline_;
  boost::asio::steady_timer heartbeat_;
  std::uint64_t heartbeat_sequence_ = 0;
  // watch_writes: writes ended so far; what the last look saw; when the peer last took some.
  boost::asio::steady_timer write_watch_;
  std::uint64_t writes_done_ = 0;
  std::uint64_t looked_writes_done_ = 0;
  int looked_unsent_ = 0;
  std::chrono::steady_clock::time_point looked_at_;
  std::chrono::steady_clock::time_point taken_at_;
};

}  // namespace sluice::control

#endif  // SLUICE_CONTROL_TLS_SESSION_H_
