#include "console/ui_server.h"

#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
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
      io_, at,
      [this, &status](const http::Request& request) {
        if (request.path != "/api/status") return ui_response(status, request);
        const bool ended = status.ended();  // before the snapshot: then the snapshot has ended too
        http::Response r = ui_response(status, request);
        last_poll_ns_.store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_relaxed);
        if (ended) end_served_.store(true, std::memory_order_release);
        return r;
      },
      "--ui");
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

void UiServer::let_watchers_see_the_end() const {
  using Clock = std::chrono::steady_clock;
  const std::int64_t last_poll = last_poll_ns_.load(std::memory_order_relaxed);
  if (last_poll == 0 || Clock::now().time_since_epoch() - Clock::duration(last_poll) > std::chrono::seconds(2)) return;
  sigset_t set;
  sigemptyset(&set);
  add_stop_signals(&set);
  const auto deadline = Clock::now() + std::chrono::milliseconds(1500);
  while (!end_served_.load(std::memory_order_acquire) && Clock::now() < deadline) {
    timespec step{0, 20'000'000};
    if (sigtimedwait(&set, nullptr, &step) >= 0) return;  // Ctrl-C: leave now
  }
  // end_served_ is set as the answer is made, before it is written: give the write the
  // moment it takes (the page lost it to the exit in 2 of 3 test runs without this).
  if (end_served_.load(std::memory_order_acquire)) {
    timespec grace{0, 200'000'000};
    sigtimedwait(&set, nullptr, &grace);
  }
}

void linger(const UiServer& ui, double seconds) {
  if (seconds <= 0) {
    ui.let_watchers_see_the_end();
    return;
  }
  const std::string url = ui.url();
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
