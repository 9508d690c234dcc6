#include "console/serve_server.h"

#include <signal.h>
#include <unistd.h>

#include "application/core.h"
#include "console/exit_codes.h"
#include "console/launched_now.h"
#include "console/report.h"
#include "console/subprocess.h"
#include "daemons/log.h"
#include "http/listen_address.h"
#include "runtime/failure.h"
#include "sluice/error.h"
#include "text/shortened.h"
#include "topology/size.h"

namespace asio = boost::asio;
using asio::ip::tcp;
namespace dlog = sluice::daemon;

namespace sluice::console {

namespace {

// "unit 3 [count=5] finished in 0.012 s", "unit 4 [x] failed after 0.003 s: filter 'stage' ..."
// A unit's payload in a log line: its start only (a payload may be megabytes).
std::string payload_text(const std::string& work) { return text::bracketed(work, 200); }

std::string unit_line(const UnitReport& r) {
  std::string line = "unit " + std::to_string(r.index) + " " + payload_text(r.work) + " ";
  if (r.finished) return line + "finished in " + fixed(r.seconds, 3) + " s";
  const Failure f{r.filter, r.copy, r.host, r.index, r.stage, r.message, r.crash};
  return line + "failed after " + fixed(r.seconds, 3) + " s: " + failure_text(f);
}

}  // namespace

ServeServer::ServeServer(Application& app, const tcp::endpoint& listen, std::shared_ptr<tls::TlsContext> tls,
                         ServeLimits limits)
    : app_(app),
      limits_(limits),
      server_(listen, http::endpoint_text(listen), std::move(tls), tls::kServeRoles),
      signals_(server_.io(), SIGINT, SIGTERM, SIGHUP),
      finish_deadline_(server_.io()),
      deployability_(server_.io()),
      pump_([this](const std::shared_ptr<UnitJob>& job, const UnitReport& report) {
        asio::post(server_.io(), [this, job, report] { unit_ended(job, report); });
      }) {
  do_await_signal();
  watch_deployability();
  server_.start(
      [this](tcp::socket socket, std::uint64_t id, control::Admission::Ticket ticket) {
        return std::make_shared<ServeSession>(std::move(socket), *this, id, std::move(ticket));
      },
      [this](const std::shared_ptr<control::TlsSession>& session) { forget(session); });
}

ServeServer::~ServeServer() {
  if (stopper_.joinable()) stopper_.join();
}

std::string ServeServer::bound_address() const { return server_.bound_address(); }

std::string ServeServer::security() const { return server_.security(); }

int ServeServer::run() {
  server_.run();
  pump_.finish();
  if (stopper_.joinable()) stopper_.join();
  return exit_code_;
}

// --- Clients -------------------------------------------------------------------------------

void ServeServer::forget(const std::shared_ptr<control::TlsSession>& session) {
  stop_waiters_.erase(std::static_pointer_cast<ServeSession>(session));
  if (finished_ && server_.sessions().empty()) server_.io().stop();
}

std::shared_ptr<UnitJob> ServeServer::submit(const std::shared_ptr<ServeSession>& session, const std::string& work,
                                             std::uint64_t* ahead, std::string* refusal) {
  if (mode_ != Mode::kServing) {
    *refusal = "sluice serve at " + bound_address() + " is stopping (" + ending_ + ") and takes no new units";
    dlog::info(session->label() + ": turned a unit down: serve is stopping (" + ending_ + ")");
    return nullptr;
  }
  *refusal = over_limits(work.size());
  if (!refusal->empty()) {
    dlog::warn(session->label() + ": turned a unit down: " + *refusal);
    return nullptr;
  }
  std::shared_ptr<UnitJob> job;
  try {
    job = std::make_shared<UnitJob>(app_.submit(work), session);
  } catch (const std::exception& e) {
    *refusal = std::string("the application takes no new units: ") + e.what();
    return nullptr;
  }
  *ahead = outstanding_++;
  payload_bytes_[job->index()] = work.size();
  outstanding_bytes_ += work.size();
  dlog::info(session->label() + ": unit " + std::to_string(job->index()) + " " + payload_text(work) + " queued" +
             (*ahead == 0 ? "" : " behind " + std::to_string(*ahead)));
  pump_.add(job);
  return job;
}

// Said to the submitter after "sluice serve at ADDR turned the unit down: ".
std::string ServeServer::over_limits(std::uint64_t payload) const {
  const std::string bytes_limit = "--max-queued-bytes " + topo::format_size(limits_.max_queued_bytes);
  if (payload > limits_.max_queued_bytes) {
    return "its payload (" + std::to_string(payload) + " bytes) is larger than the " + bytes_limit +
           " serve holds for units; send a smaller payload, or start serve with a larger --max-queued-bytes";
  }
  const char* retry = "; try again when fewer units wait, or start serve with a larger ";
  if (outstanding_ >= limits_.max_queued) {
    return std::to_string(outstanding_) + " units it accepted have not ended (--max-queued " +
           std::to_string(limits_.max_queued) + ")" + retry + "--max-queued";
  }
  if (outstanding_bytes_ + payload > limits_.max_queued_bytes) {
    return "the " + std::to_string(outstanding_) + " units it accepted that have not ended hold " +
           std::to_string(outstanding_bytes_) + " bytes of payload, and this one's " + std::to_string(payload) +
           " would take them past " + bytes_limit + retry + "--max-queued-bytes";
  }
  return "";
}

void ServeServer::unit_ended(const std::shared_ptr<UnitJob>& job, const UnitReport& report) {
  --outstanding_;
  const auto bytes = payload_bytes_.find(job->index());
  if (bytes != payload_bytes_.end()) {
    outstanding_bytes_ -= bytes->second;
    payload_bytes_.erase(bytes);
  }
  // Why the client's connection ended: it went, or serve dropped it (it stopped reading).
  const std::string line = unit_line(report) + (job->abandoned() ? " (the client's connection ended: " + job->abandoned_why() + ")" : "");
  if (report.finished) {
    dlog::info(line);
  } else {
    dlog::warn(line);
  }
  maybe_stop_application();
  maybe_finish();
}

// --- Stopping ------------------------------------------------------------------------------

void ServeServer::stop_requested(const std::shared_ptr<ServeSession>& session) {
  if (finished_) return session->stopping(0, true);
  stop_waiters_.insert(session);
  session->stopping(static_cast<std::uint32_t>(outstanding_), false);
  if (mode_ != Mode::kServing) {
    dlog::info(session->label() + " asked to stop; serve is already stopping (" + ending_ + "): " +
               std::to_string(outstanding_) + " unit(s) left to end");
    return;
  }
  dlog::info(session->label() + " asked to stop: " +
             (outstanding_ == 0 ? std::string("no unit to wait for")
                                : std::to_string(outstanding_) + " accepted unit(s) end first") +
             "; new units are turned down");
  mode_ = Mode::kStopping;
  ending_ = "sluice stop";
  maybe_stop_application();
}

void ServeServer::do_await_signal() {
  signals_.async_wait([this](boost::system::error_code ec, int sig) {
    if (ec) return;
    const std::string name = signal_name(sig);
    const bool interrupted = signalled_;
    if (interrupted && sig == SIGHUP) {
      // A hang-up comes twice when a session ends (from the shell and from the kernel):
      // only a second SIGINT or SIGTERM, which a person sends, skips the clean-up.
      do_await_signal();
      return;
    }
    if (interrupted) {
      // No orderly stop, but what a launcher started must not outlive this process.
      const std::string ended = end_launched_now();
      dlog::error("second " + name + " while stopping: exiting now" + (ended.empty() ? "" : " (" + ended + ")"));
      _exit(kExitInterrupted);
    }
    signalled_ = true;
    dlog::info("received " + name + ": cancelling " + std::to_string(outstanding_) +
               " unit(s) and stopping (again to exit at once)");
    if (mode_ != Mode::kAborting) {  // not already ending for another reason (its status stays)
      mode_ = Mode::kAborting;
      ending_ = "interrupted";
      exit_code_ = kExitInterrupted;
    }
    // Results no longer flow: a client that does not read must not hold the end back. Each
    // still hears how its unit ended (cancelled), if it reads that far within 2 s.
    pump_.drop_all_results();
    maybe_stop_application();
    do_await_signal();
  });
}

void ServeServer::watch_deployability() {
  deployability_.expires_after(std::chrono::seconds(1));
  deployability_.async_wait([this](boost::system::error_code ec) {
    // Also while `sluice stop` waits for the accepted units: they cannot run either.
    if (ec || mode_ == Mode::kAborting) return;
    const std::shared_ptr<AppCore> core = core_of(app_);
    const std::optional<std::string> gone = core ? core->gone() : std::nullopt;
    if (!gone) return watch_deployability();
    dlog::error(*gone + ": the application cannot be deployed again; cancelling " + std::to_string(outstanding_) +
                " unit(s) and stopping (start a new sluice serve)");
    mode_ = Mode::kAborting;
    ending_ = *gone;
    exit_code_ = kExitHostUnavailable;
    pump_.drop_all_results();
    maybe_stop_application();
  });
}

void ServeServer::maybe_stop_application() {
  if (app_stopping_ || mode_ == Mode::kServing) return;
  // A stop waits for the accepted units; a signal does not (abort cancels them).
  const bool abort = mode_ == Mode::kAborting;
  if (!abort && outstanding_ > 0) return;
  app_stopping_ = true;
  stopper_ = std::thread([this, abort] {
    try {
      if (abort) {
        app_.abort();
      } else {
        app_.stop();
      }
    } catch (const std::exception& e) {
      dlog::error(std::string("stopping the application: ") + e.what());
    }
    asio::post(server_.io(), [this] {
      app_stopped_ = true;
      maybe_finish();
    });
  });
}

void ServeServer::maybe_finish() {
  if (finished_ || !app_stopped_ || outstanding_ > 0) return;
  finished_ = true;
  deployability_.cancel();
  dlog::info("the application stopped; " + std::to_string(app_.units_ended()) + " unit(s) ended");
  server_.close();
  for (const auto& waiter : stop_waiters_) waiter->stopping(0, true);
  auto sessions = server_.sessions();
  for (const auto& s : sessions) s->finish("the server stopped");
  if (server_.sessions().empty()) return server_.io().stop();
  finish_deadline_.expires_after(kFinishDeadline);
  finish_deadline_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    server_.stop_all("the server stopped");
    server_.io().stop();
  });
}

}  // namespace sluice::console
