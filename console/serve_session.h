// ServeSession: one client's connection to `sluice serve` (sluice submit or sluice stop).
//
// A control::TlsSession (control/tls_session.h: TLS 1.3 exactly as sluiced's, the hello
// within 5 s, heartbeats both ways every 500 ms once open, a client not heard from for 3 s
// is gone), with one request (ServeProtocol decides what each message does). A submit
// queues a unit (ServeServer::submit) and the session sends back, in this order: accepted,
// the unit's results as the ResultPump hands them over (result_chunk), and unit_ended; then
// it shuts its side down and closes once the client closed its own (5 s at most: closing at
// once could reset the connection and lose what is still in flight). A stop asks the
// server to stop and waits for it to say stopped.
//
// A client that goes before its unit ended (closed connection, silence, a broken protocol
// or a TLS record that fails its integrity check) abandons the unit: it is cancelled
// (result_pump.h), and the deployment goes on with the next. So does one that takes none of
// its results for --client-read-timeout (it heartbeats, but holds every later unit back).
//
// An Asio session: enable_shared_from_this, start()/stop(), handlers hold `self`.
// Everything runs on the server's io_context thread, except deliver() and ended(), which
// the pump calls from its thread and which only post to the io_context.
#ifndef SLUICE_CONSOLE_SERVE_SESSION_H_
#define SLUICE_CONSOLE_SERVE_SESSION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange

#include <boost/asio.hpp>

#include "console/result_pump.h"
#include "console/serve_protocol.h"
#include "control/tls_session.h"
#include "sluice/application.h"

namespace sluice::console {

class ServeServer;

class ServeSession : public control::TlsSession, public ResultSink, private ServeProtocol::Handler {
 public:
  // `id` numbers the session in log lines. `server` outlives the session. `ticket` counts
  // the connection against the caps until the client has authenticated.
  ServeSession(boost::asio::ip::tcp::socket socket, ServeServer& server, std::uint64_t id,
               control::Admission::Ticket ticket);

  using control::TlsSession::stop;  // stop(why); stop() is the client's request

  // The server is stopping: `units_left` to end first (stopped: every one ended).
  void stopping(std::uint32_t units_left, bool stopped);

  // ResultSink, from the pump's thread.
  void deliver(std::string frame) override;
  // From the pump's thread: the unit ended; sends unit_ended, then closes.
  void ended(const UnitReport& report) override;

 private:
  // control::TlsSession
  control::ServerProtocol& protocol() override { return protocol_; }
  void ending(const std::string& why) override;
  void written(std::size_t results) override;
  void close(const std::string& why, bool after_reply) override;
  std::chrono::steady_clock::duration write_stall_limit() const override;

  // ServeProtocol::Handler
  std::optional<std::string> submit(const std::string& work) override;
  void stop() override;

  ServeServer& server_;
  ServeProtocol protocol_;
  std::shared_ptr<UnitJob> job_;  // once a unit was accepted
  bool unit_ended_ = false;
};

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_SERVE_SESSION_H_
