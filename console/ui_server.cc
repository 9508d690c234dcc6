#include "console/ui_server.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "console/status_views.h"
#include "console/subprocess.h"
#include "http/listen_address.h"
#include "http/metrics_text.h"

namespace sluice::console {

http::Response ui_response(const RunStatus& status, const http::Request& request) {
  http::Response r;
  r.headers.push_back({"Cache-Control", "no-store"});
  if (request.path == "/" || request.path == "/index.html") {
    r.content_type = "text/html; charset=utf-8";
    r.body = status_page();
    // The page is self-contained: its own inline script and style (allowed by hash), and
    // fetches from here alone.
    r.headers.push_back({"Content-Security-Policy", status_page_csp()});
  } else if (request.path == "/api/status") {
    r.content_type = "application/json";
    r.body = status_json(status.snapshot());
  } else if (request.path == "/metrics") {
    r.content_type = http::MetricsText::kContentType;
    r.body = status_metrics(status.snapshot());
  } else {
    r.status = 404;
    r.body = "no such page: " + request.path + "; this console serves /, /api/status and /metrics\n";
  }
  return r;
}

UiServer::UiServer(const RunStatus& status, const boost::asio::ip::tcp::endpoint& at) {
  server_ = std::make_unique<http::HttpServer>(
      io_, at, [&status](const http::Request& request) { return ui_response(status, request); }, "--ui");
  server_->start();
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "sluice-ui");  // what top -H and perf call it
    io_.run();
  });
}

UiServer::~UiServer() {
  io_.stop();
  thread_.join();
  server_.reset();  // the io_context no longer runs: stop() may run here
}

std::string UiServer::url() const {
  const boost::asio::ip::tcp::endpoint at = server_->local_endpoint();
  if (!at.address().is_unspecified()) return "http://" + http::endpoint_text(at) + "/";
  // 0.0.0.0 or [::]: no browser can use that; the machine's name reaches it from elsewhere.
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') std::snprintf(name, sizeof name, "HOST");
  return "http://" + std::string(name) + ":" + std::to_string(at.port()) + "/ (every address of this machine)";
}

std::unique_ptr<UiServer> start_ui(const UiOptions& ui, const RunStatus& status) {
  if (ui.address.empty()) return nullptr;
  auto server =
      std::make_unique<UiServer>(status, http::parse_listen_address(ui.address, "--ui", ui.allow_public, "--ui-public"));
  std::cerr << "sluice: watching the run at " << server->url() << std::endl;
  return server;
}

void linger(const std::string& url, double seconds) {
  if (seconds <= 0) return;
  std::cerr << "sluice: the run's final state stays at " << url << " for " << seconds
            << " s (--ui-linger); Ctrl-C to leave now" << std::endl;
  sigset_t set;
  sigemptyset(&set);
  add_stop_signals(&set);
  timespec wait{};
  wait.tv_sec = static_cast<time_t>(seconds);
  wait.tv_nsec = static_cast<long>((seconds - std::floor(seconds)) * 1e9);
  while (sigtimedwait(&set, nullptr, &wait) < 0 && errno == EINTR) {
  }
}

}  // namespace sluice::console
