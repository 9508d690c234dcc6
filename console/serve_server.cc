#include "console/serve_server.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>

#include "console/exit_codes.h"
#include "console/report.h"
#include "http/listen_address.h"
#include "runtime/failure.h"
#include "sluice/error.h"

namespace asio = boost::asio;
using asio::ip::tcp;
namespace dlog = sluice::daemon;

namespace sluice::console {

namespace {

// Asio's context frees its SSL_CTX: give it a reference of its own.
SSL_CTX* shared(const std::shared_ptr<tls::TlsContext>& tls) {
  SSL_CTX_up_ref(tls->native());
  return tls->native();
}

// After the last unit, how long the sessions get to send what they have queued.
constexpr auto kFinishDeadline = std::chrono::seconds(2);

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", seconds);
  return text;
}

// "unit 3 [count=5] finished in 0.012 s", "unit 4 [x] failed after 0.003 s: filter 'stage' ..."
std::string unit_line(const UnitReport& r) {
  std::string line = "unit " + std::to_string(r.index) + " [" + r.work + "] ";
  if (r.finished) return line + "finished in " + seconds_text(r.seconds) + " s";
  const Failure f{r.filter, r.copy, r.host, r.index, r.stage, r.message};
  return line + "failed after " + seconds_text(r.seconds) + " s: " + failure_text(f);
}

}  // namespace

ServeServer::ServeServer(Application& app, const tcp::endpoint& listen, std::shared_ptr<tls::TlsContext> tls)
    : app_(app),
      signals_(io_, SIGINT, SIGTERM),
      acceptor_(io_),
      tls_(std::move(tls)),
      ssl_(shared(tls_)),
      finish_deadline_(io_),
      pump_([this](const std::shared_ptr<UnitJob>& job, const UnitReport& report) {
        asio::post(io_, [this, job, report] { unit_ended(job, report); });
      }) {
  boost::system::error_code ec;
  acceptor_.open(listen.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(listen, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw Error("cannot listen on " + http::endpoint_text(listen) + ": " + ec.message());
  if (const std::string problem = tls_->certificate_problem(); !problem.empty()) dlog::warn(problem);
  do_await_signal();
  do_accept();
}

ServeServer::~ServeServer() {
  if (stopper_.joinable()) stopper_.join();
}

std::string ServeServer::bound_address() const {
  boost::system::error_code ec;
  const auto bound = acceptor_.local_endpoint(ec);
  return ec ? std::string() : http::endpoint_text(bound);
}

std::string ServeServer::security() const { return "TLS 1.3 with " + tls_->options().mode_name(); }

int ServeServer::run() {
  for (;;) {
    try {
      io_.run();
      break;
    } catch (const std::exception& e) {
      dlog::error(std::string("unexpected error, still serving: ") + e.what());
    }
  }
  pump_.finish();
  if (stopper_.joinable()) stopper_.join();
  return exit_code_;
}

// --- Clients -------------------------------------------------------------------------------

void ServeServer::do_accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (!acceptor_.is_open() || ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of descriptors, most likely: accepting again at once would spin.
      capped_log_.log(dlog::Level::kWarn, "accept failed: " + ec.message());
      auto pause = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(100));
      pause->async_wait([this, pause](boost::system::error_code) {
        if (acceptor_.is_open()) do_accept();
      });
      return;
    }
    admit(std::move(socket));
    do_accept();
  });
}

void ServeServer::admit(tcp::socket socket) {
  boost::system::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  if (ec) return;  // already gone
  const std::string address = peer.address().to_string();
  std::string why;
  std::optional<sluiced::Admission::Ticket> ticket = admission_.admit(address, &why);
  if (!ticket) {
    capped_log_.log(dlog::Level::kWarn, "refused a connection from " + address + ":" + std::to_string(peer.port()) +
                                            ": " + why + "; " + std::to_string(admission_.refused()) + " refused so far");
    socket.close(ec);
    return;
  }
  socket.set_option(tcp::no_delay(true), ec);
  socket.set_option(asio::socket_base::keep_alive(true), ec);
  auto session = std::make_shared<ServeSession>(std::move(socket), *this, next_id_++, std::move(*ticket));
  sessions_.insert(session);
  session->start();
}

void ServeServer::forget(const std::shared_ptr<ServeSession>& session) {
  sessions_.erase(session);
  stop_waiters_.erase(session);
  if (finished_ && sessions_.empty()) io_.stop();
}

std::shared_ptr<UnitJob> ServeServer::submit(const std::shared_ptr<ServeSession>& session, const std::string& work,
                                             std::uint64_t* ahead, std::string* refusal) {
  if (mode_ != Mode::kServing) {
    *refusal = "sluice serve at " + bound_address() + " is stopping (" +
               (mode_ == Mode::kStopping ? "sluice stop" : "interrupted") + ") and takes no new units";
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
  dlog::info(session->label() + ": unit " + std::to_string(job->index()) + " [" + work + "] queued" +
             (*ahead == 0 ? "" : " behind " + std::to_string(*ahead)));
  pump_.add(job);
  return job;
}

void ServeServer::unit_ended(const std::shared_ptr<UnitJob>& job, const UnitReport& report) {
  --outstanding_;
  const std::string line = unit_line(report) + (job->abandoned() ? " (its client had gone)" : "");
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
  if (mode_ != Mode::kServing) return;
  dlog::info(session->label() + " asked to stop: " +
             (outstanding_ == 0 ? std::string("no unit to wait for")
                                : std::to_string(outstanding_) + " accepted unit(s) end first") +
             "; new units are turned down");
  mode_ = Mode::kStopping;
  maybe_stop_application();
}

void ServeServer::do_await_signal() {
  signals_.async_wait([this](boost::system::error_code ec, int sig) {
    if (ec) return;
    const std::string name = sig == SIGINT ? "SIGINT" : "SIGTERM";
    if (mode_ == Mode::kAborting) {
      dlog::error("second " + name + " while stopping: exiting now");
      _exit(kExitInterrupted);
    }
    dlog::info("received " + name + ": cancelling " + std::to_string(outstanding_) +
               " unit(s) and stopping (again to exit at once)");
    mode_ = Mode::kAborting;
    exit_code_ = kExitInterrupted;
    // Results no longer flow: a client that does not read must not hold the end back. Each
    // still hears how its unit ended (cancelled), if it reads that far within 2 s.
    pump_.drop_all_results();
    maybe_stop_application();
    do_await_signal();
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
    asio::post(io_, [this] {
      app_stopped_ = true;
      maybe_finish();
    });
  });
}

void ServeServer::maybe_finish() {
  if (finished_ || !app_stopped_ || outstanding_ > 0) return;
  finished_ = true;
  dlog::info("the application stopped; " + std::to_string(app_.units_ended()) + " unit(s) ended");
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  for (const auto& waiter : stop_waiters_) waiter->stopping(0, true);
  auto sessions = sessions_;
  for (const auto& s : sessions) s->finish();
  if (sessions_.empty()) return io_.stop();
  finish_deadline_.expires_after(kFinishDeadline);
  finish_deadline_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    auto left = sessions_;
    for (const auto& s : left) s->stop("the server stopped");
    io_.stop();
  });
}

}  // namespace sluice::console
