// HostDaemon: sluiced's server, after the Asio examples (http/server). It owns the
// io_context, the listening socket, the signal sets, the console sessions and the table of
// the app daemons they launched.
//
// Single-threaded: everything runs on the io_context's thread, in run().
#ifndef SLUICE_DAEMONS_HOST_DAEMON_H_
#define SLUICE_DAEMONS_HOST_DAEMON_H_

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange

#include <boost/asio.hpp>

#include "daemons/app_supervisor.h"
#include "daemons/console_session.h"

namespace sluice::sluiced {

struct Config {
  std::string token;      // the shared secret consoles must prove they know
  std::string appd_path;  // the sluice-appd executable
};

class HostDaemon {
 public:
  // Resolves `listen` ("ADDR:PORT"), binds and listens. Throws sluice::Error when it cannot.
  HostDaemon(const std::string& listen, Config config);
  HostDaemon(const HostDaemon&) = delete;
  HostDaemon& operator=(const HostDaemon&) = delete;

  // Runs until SIGINT/SIGTERM, which kills every app daemon. A handler that throws (it
  // should not) is logged, and the daemon goes on serving.
  void run();

  // For the sessions.
  boost::asio::io_context& io() { return io_; }
  const Config& config() const { return config_; }
  AppTable& apps() { return apps_; }
  void forget(const std::shared_ptr<ConsoleSession>& session) { sessions_.erase(session); }

 private:
  void do_accept();
  void do_await_stop();
  void do_await_child();

  boost::asio::io_context io_;
  boost::asio::signal_set stop_signals_;
  boost::asio::signal_set child_signals_;
  boost::asio::ip::tcp::acceptor acceptor_;
  Config config_;
  std::set<std::shared_ptr<ConsoleSession>> sessions_;
  AppTable apps_;
  std::uint64_t next_id_ = 1;
};

}  // namespace sluice::sluiced

#endif  // SLUICE_DAEMONS_HOST_DAEMON_H_
