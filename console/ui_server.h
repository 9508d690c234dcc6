// UiServer: the console's --ui. Serves a run's RunStatus over HTTP from a thread of its
// own, named "sluice-ui" (http/http_server.h: GET/HEAD only, loopback unless --ui-public):
//   /             the page (status_views.h), self-contained
//   /api/status   the JSON the page draws
//   /metrics      the Prometheus text
// Anything else is 404; other methods 405 (HttpServer).
//
// Thread-safe as far as it goes: the server thread only reads snapshots of `status`.
#ifndef SLUICE_CONSOLE_UI_SERVER_H_
#define SLUICE_CONSOLE_UI_SERVER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "console/commands.h"
#include "console/run_status.h"
#include "http/http_server.h"

namespace sluice::console {

// The answer to one request, from `status`: what UiServer serves (exposed for tests).
http::Response ui_response(const RunStatus& status, const http::Request& request);

class UiServer {
 public:
  // Listens on `at` and starts serving. `status` must outlive the server. Throws
  // sluice::Error (naming --ui and the address) when it cannot listen.
  UiServer(const RunStatus& status, const boost::asio::ip::tcp::endpoint& at);
  // Stops serving and joins the thread.
  ~UiServer();
  UiServer(const UiServer&) = delete;
  UiServer& operator=(const UiServer&) = delete;

  // "http://127.0.0.1:8080/"; on every address (0.0.0.0, [::]), the machine's name:
  // "http://node7:8080/ (every address of this machine)".
  std::string url() const;

  // After the run (the status finished), without --ui-linger: when a page was polling
  // /api/status (in the last 2 s), waits until it has fetched the final state, up to
  // 1.5 s (the page polls twice a second), or until SIGINT or SIGTERM; else returns at once.
  // Otherwise the console exited under a page that never learned how the run ended.
  // REQUIRES: SIGINT and SIGTERM blocked in every thread.
  void let_watchers_see_the_end() const;

 private:
  std::atomic<std::int64_t> last_poll_ns_{0};  // steady clock: the last /api/status served
  std::atomic<bool> end_served_{false};        // an /api/status that said the run ended
  boost::asio::io_context io_;
  std::unique_ptr<http::HttpServer> server_;
  std::thread thread_;
};

// --ui: nullptr when `ui.address` is "", else a server on it, its URL printed to stderr
// ("sluice: watching the run at http://127.0.0.1:8080/"). Throws sluice::Error when the
// address is malformed, not loopback without `ui.allow_public`, or cannot be listened on.
std::unique_ptr<UiServer> start_ui(const UiOptions& ui, const RunStatus& status);

// After the run: keeps the process (and so the server) up for `seconds`, or until SIGINT
// or SIGTERM, saying so on stderr; with no `seconds` (0), as long as a watching page needs
// to see the end (let_watchers_see_the_end). REQUIRES: SIGINT and SIGTERM blocked in every
// thread.
void linger(const UiServer& ui, double seconds);

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_UI_SERVER_H_
