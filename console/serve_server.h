// ServeServer: `sluice serve`'s server. It owns a control::TlsServer (control/tls_server.h:
// the io_context, the listening socket, the TLS context, the caps on connections that have
// not authenticated, the client sessions, serve_session.h), the signal set and the
// ResultPump that forwards each unit's results; it submits the units to a started
// Application, one per `submit`, in arrival order.
//
// Ending:
// - `sluice stop` (a stop request): new units are turned down; the units already accepted
//   run to their end and their clients get their results and reports; then the
//   Application stops, the stop client hears `stopped`, and run() returns kExitOk.
// - SIGINT or SIGTERM: results stop flowing (a client that does not read cannot hold the
//   end back), the Application is aborted (Application::abort: the running unit and every
//   queued one end as cancelled, and their clients are told so, if they read that far
//   within 2 s); then as above, and run() returns kExitInterrupted. A second signal while
//   that is under way exits at once.
// Holding: at most `limits.max_queued` units accepted that have not ended (the running one
// included), whose payloads take at most `limits.max_queued_bytes`; a submit beyond either
// is turned down, saying which limit and what to do (the submitter exits 4), so that many
// submitters cannot take serve's memory without bound.
//
// In both cases every unit has ended, the Application is stopped (its copies, across hosts
// its app daemons, are gone) and the listening port is closed when run() returns.
//
// Single-threaded: everything runs on the io_context's thread, in run(), but for the pump's
// thread (result_pump.h) and the thread that stops the Application (its stop() blocks).
#ifndef SLUICE_CONSOLE_SERVE_SERVER_H_
#define SLUICE_CONSOLE_SERVE_SERVER_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange

#include <boost/asio.hpp>

#include "console/commands.h"
#include "console/result_pump.h"
#include "console/serve_session.h"
#include "control/tls_server.h"
#include "sluice/application.h"
#include "tls/tls.h"

namespace sluice::console {

class ServeServer {
 public:
  // Binds `listen` and listens (throws sluice::Error when it cannot); clients must pass
  // `tls` (a server context). `app` outlives the server.
  ServeServer(Application& app, const boost::asio::ip::tcp::endpoint& listen,
              std::shared_ptr<tls::TlsContext> tls, ServeLimits limits);
  ~ServeServer();
  ServeServer(const ServeServer&) = delete;
  ServeServer& operator=(const ServeServer&) = delete;

  // "127.0.0.1:7800", the port chosen when listen said 0.
  std::string bound_address() const;
  // "TLS 1.3 with token (PSK)", for the first line.
  std::string security() const;

  // Serves until stopped (above). Returns kExitOk after `sluice stop`, kExitInterrupted
  // after a signal. REQUIRES: called once.
  int run();

  // For the sessions, on the io_context's thread.
  boost::asio::io_context& io() { return server_.io(); }
  const ServeLimits& limits() const { return limits_; }
  control::TlsServer& tls_server() { return server_; }
  // Appends a unit with `work` for `session`; the job that forwards its results, or why
  // not (the server is stopping). `*ahead`: units accepted before it that have not ended.
  std::shared_ptr<UnitJob> submit(const std::shared_ptr<ServeSession>& session, const std::string& work,
                                  std::uint64_t* ahead, std::string* refusal);
  // A client asked the server to stop (it will hear stopping(), and stopping(.., true)).
  void stop_requested(const std::shared_ptr<ServeSession>& session);

 private:
  enum class Mode { kServing, kStopping, kAborting };
  // After the last unit, how long the sessions get to send what they have queued.
  static constexpr auto kFinishDeadline = std::chrono::seconds(2);

  // A session ended (TlsServer let go of it).
  void forget(const std::shared_ptr<control::TlsSession>& session);
  void do_await_signal();
  // The pump says a unit ended (posted to the io_context).
  void unit_ended(const std::shared_ptr<UnitJob>& job, const UnitReport& report);
  // Starts stopping the Application once nothing is left to wait for.
  void maybe_stop_application();
  // Once the Application stopped and every unit was reported: closes the sessions (after
  // what they have queued) and ends run().
  void maybe_finish();
  // Every second while serving: ends serving, as a signal would but with status 4, once the
  // application cannot be deployed again (AppCore::gone: its Slurm job ended).
  void watch_deployability();
  // Why a unit with `payload` bytes cannot be accepted now (a limit), or "".
  std::string over_limits(std::uint64_t payload) const;

  Application& app_;
  const ServeLimits limits_;
  control::TlsServer server_;  // before what runs on its io_context
  boost::asio::signal_set signals_;
  boost::asio::steady_timer finish_deadline_;
  boost::asio::steady_timer deployability_;
  std::string ending_;  // why serving ends, for refused submissions
  std::set<std::shared_ptr<ServeSession>> stop_waiters_;
  std::uint64_t outstanding_ = 0;  // units accepted that have not ended
  std::map<std::uint64_t, std::uint64_t> payload_bytes_;  // theirs, by unit index
  std::uint64_t outstanding_bytes_ = 0;                   // their sum
  Mode mode_ = Mode::kServing;
  bool app_stopping_ = false;  // the stopper thread runs
  bool app_stopped_ = false;   // it has returned
  bool finished_ = false;
  int exit_code_ = 0;
  bool signalled_ = false;  // a SIGINT/SIGTERM/SIGHUP came: the next (but a SIGHUP) exits at once
  std::thread stopper_;  // stops or aborts the Application (blocking calls)
  // Declared last: destroyed first, so its thread never calls into a server half gone.
  ResultPump pump_;
};

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_SERVE_SERVER_H_
