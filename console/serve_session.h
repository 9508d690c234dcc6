// ServeSession: one client's connection to `sluice serve` (sluice submit or sluice stop).
//
// TLS 1.3 first (tls/tls.h: the token's PSK, or certificates, exactly as sluiced), then
// the hello, both within 5 s; then one request (ServeProtocol decides what each message
// does). A submit queues a unit (ServeServer::submit) and the session sends back, in this
// order: accepted, the unit's results as the ResultPump hands them over (result_chunk), and
// unit_ended; then it shuts its side down and closes once the client closed its own (5 s at
// most: closing at once could reset the connection and lose what is still in flight). A
// stop asks the server to stop and waits for it to say stopped. Heartbeats both ways every 500 ms once open; a client not heard from for 3 s is
// gone.
//
// A client that goes before its unit ended (closed connection, silence, a broken protocol
// or a TLS record that fails its integrity check) abandons the unit: it is cancelled
// (result_pump.h), and the deployment goes on with the next.
//
// Until the hello the connection holds an Admission ticket (the caps on unauthenticated
// connections, as sluiced's) and logs at a bounded rate.
//
// An Asio session: enable_shared_from_this, start()/stop(), handlers hold `self`.
// Everything runs on the server's io_context thread, except deliver() and ended(), which
// the pump calls from its thread and which only post to the io_context.
#ifndef SLUICE_CONSOLE_SERVE_SESSION_H_
#define SLUICE_CONSOLE_SERVE_SESSION_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include "console/result_pump.h"
#include "console/serve_protocol.h"
#include "tls/tls.h"
#include "daemons/admission.h"
#include "sluice/application.h"

namespace sluice::console {

class ServeServer;

class ServeSession : public std::enable_shared_from_this<ServeSession>,
                     public ResultSink,
                     private ServeProtocol::Session {
 public:
  // `id` numbers the session in log lines. `server` outlives the session. `ticket` counts
  // the connection against the caps until the client has authenticated.
  ServeSession(boost::asio::ip::tcp::socket socket, ServeServer& server, std::uint64_t id,
               sluiced::Admission::Ticket ticket);

  // Starts: the client has 5 s to finish the TLS handshake and say hello.
  void start();
  // Closes the connection now, abandoning the unit if it has not ended; logs `why`.
  // Idempotent.
  void stop(const std::string& why);
  // Closes once everything queued is written and the client closed its end, or after
  // 5 s (the server is done).
  void finish();

  // "client #3 (127.0.0.1:41234)", for logs.
  const std::string& label() const { return label_; }

  // The server is stopping: `units_left` to end first (stopped: every one ended).
  void stopping(std::uint32_t units_left, bool stopped);

  // ResultSink, from the pump's thread.
  void deliver(std::string frame) override;
  // From the pump's thread: the unit ended; sends unit_ended, then closes.
  void ended(const UnitReport& report) override;

 private:
  using TlsStream = boost::asio::ssl::stream<boost::asio::ip::tcp::socket>;
  enum class Phase { kHandshake, kTls, kClosing, kClosed };
  struct Outgoing {
    std::string frame;
    std::size_t results = 0;  // bytes counted against the unit's window
  };

  void on_handshake(const boost::system::error_code& ec);
  void read_next();
  void on_read(const boost::system::error_code& ec, std::size_t n);
  std::string tls_failure(const boost::system::error_code& ec, bool established);
  void write(Outgoing out);
  void do_write();
  void arm_deadline(std::chrono::steady_clock::duration after, std::string what);
  void heartbeat();
  void fail(const std::string& why);
  // Closes once everything queued is written and the client closed its end (linger).
  void closing_after(const std::string& why);
  void linger();

  // ServeProtocol::Session
  void send(const control::Envelope& message) override;
  void opened(const std::string& client) override;
  void heard() override;
  std::optional<std::string> submit(const std::string& work) override;
  void stop() override;
  void close(const std::string& why, bool after_reply) override;

  ServeServer& server_;
  const std::uint64_t id_;
  sluiced::Admission::Ticket ticket_;
  tls::TlsNotes notes_;  // before stream_: its SSL object points here
  TlsStream stream_;
  ServeProtocol protocol_;
  std::string label_;
  Phase phase_ = Phase::kHandshake;
  bool opened_ = false;
  std::string closing_reason_;  // kClosing: stop with it once the queue is written
  bool lingering_ = false;      // our end is shut down; waiting for the client's
  std::array<char, 16384> read_buffer_{};
  std::deque<Outgoing> writes_;  // the front one is being written
  boost::asio::steady_timer deadline_;
  boost::asio::steady_timer heartbeat_;
  std::uint64_t heartbeat_sequence_ = 0;
  std::shared_ptr<UnitJob> job_;  // once a unit was accepted
  bool unit_ended_ = false;
};

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_SERVE_SESSION_H_
