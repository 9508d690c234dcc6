#include "console/connect_hosts.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange

#include <boost/asio/ip/address.hpp>

#include "console/exit_codes.h"
#include "console/remote.h"
#include "control/auth.h"
#include "log/backend.h"

namespace sluice::console {

namespace {

constexpr auto kConnectTimeout = std::chrono::seconds(5);  // connect + handshake, per host
constexpr auto kHeartbeatWhileWaiting = std::chrono::milliseconds(500);  // as HostGroup's

// A host reached at a loopback address gets its data plane on loopback (launch_app.h), where
// a host on another machine cannot reach it: its streams would fail at launch with "could
// not connect". Both on one machine is fine, so this warns rather than refuses.
void warn_about_loopback_mix(const std::vector<std::unique_ptr<HostClient>>& clients) {
  std::string on_loopback, elsewhere;
  for (const auto& c : clients) {
    boost::system::error_code ec;
    const auto address = boost::asio::ip::make_address(c->peer_ip(), ec);
    if (ec) continue;
    std::string& list = address.is_loopback() ? on_loopback : elsewhere;
    list += (list.empty() ? "" : ", ") + c->label();
  }
  if (on_loopback.empty() || elsewhere.empty() || logging::stderr_muted()) return;
  const std::string warning = "sluice: warning: " + on_loopback + " reached at a loopback address, " + elsewhere +
                              " not: a data plane on a loopback address is reachable only from its own machine, so "
                              "streams between these hosts fail unless they all run here; give every host an address "
                              "the others reach\n";
  // Once per process: a deployed application (sluice serve) connects again for every
  // redeployment, to the same hosts.
  static std::mutex mu;
  static std::set<std::string> said;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!said.insert(warning).second) return;
  }
  std::cerr << warning;
}

// What the public overloads share: *token_failed says whether the token file was the trouble.
std::optional<Credentials> credentials_or_why(const ControlOptions& options, std::string* why, bool* token_failed) {
  Credentials credentials;
  tls::TlsOptions tls;
  tls.cert_file = options.cert_file;
  tls.key_file = options.key_file;
  tls.ca_file = options.ca_file;
  *token_failed = false;
  try {
    if (!tls.certificates()) {
      credentials.token_file = token_path(options.token_file);
      tls.token = control::read_token_file(credentials.token_file, control::TokenReader::kConsole);
    }
  } catch (const std::exception& e) {
    *why = e.what();
    *token_failed = true;
    return std::nullopt;
  }
  try {
    credentials.tls = tls::TlsContext::create(tls::TlsContext::Role::kClient, tls);
  } catch (const std::exception& e) {
    *why = e.what();
    return std::nullopt;
  }
  return credentials;
}

}  // namespace

std::string token_path(const std::string& path) {
  if (!path.empty()) return path;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "") + "/.config/sluice/token";
}

std::optional<Credentials> load_credentials(const ControlOptions& options, std::string* why) {
  bool token_failed = false;
  return credentials_or_why(options, why, &token_failed);
}

std::optional<Credentials> load_credentials(const ControlOptions& options) {
  std::string why;
  bool token_failed = false;
  std::optional<Credentials> credentials = credentials_or_why(options, &why, &token_failed);
  if (!credentials) std::cerr << "sluice: " << why << (token_failed ? " (--token-file)" : "") << "\n";
  return credentials;
}

std::vector<std::unique_ptr<HostClient>> connect_all(const topo::Topology& t, const Credentials& credentials,
                                                     bool verbose, std::vector<UnreachedHost>* unreached) {
  std::vector<std::unique_ptr<HostClient>> clients;
  std::vector<std::optional<std::string>> errors(t.hosts.size());
  for (const topo::HostSpec& h : t.hosts) clients.push_back(std::make_unique<HostClient>(h.name, h.address));
  // A host connected early hears a heartbeat every kHeartbeatWhileWaiting until the last
  // one is done: a daemon drops a console silent for 3 s, and another host may take up to
  // kConnectTimeout (SYNs dropped, a daemon busy). Without them the healthy host was lost.
  std::mutex mu;
  std::condition_variable all_done;
  std::size_t pending = clients.size();
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < clients.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        errors[i] = clients[i]->connect(credentials, kConnectTimeout);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
      std::unique_lock<std::mutex> lock(mu);
      if (--pending == 0) all_done.notify_all();
      std::uint64_t sequence = 0;
      while (!errors[i] && !all_done.wait_for(lock, kHeartbeatWhileWaiting, [&] { return pending == 0; })) {
        control::Envelope h;
        h.mutable_heartbeat()->set_sequence(++sequence);
        lock.unlock();
        const bool sent = clients[i]->send(h);
        lock.lock();
        if (!sent) break;  // the connection failed: the run finds out at its first message
      }
    });
  }
  for (auto& th : threads) th.join();
  bool ok = true;
  for (std::size_t i = 0; i < clients.size(); ++i) {
    if (errors[i] && unreached != nullptr) {
      unreached->push_back({t.hosts[i].name, clients[i]->label() + ": " + *errors[i]});
      ok = false;
    } else if (errors[i]) {
      // At the host's line in the file, like every other mistake found before a run.
      const topo::Mark mark = t.hosts[i].mark;
      if (mark.line > 0) {
        std::cerr << t.file << ":" << mark.line << ":" << mark.column << ": ";
      } else {
        std::cerr << "sluice: ";
      }
      std::cerr << clients[i]->label() << ": " << *errors[i] << "\n";
      ok = false;
    } else if (verbose) {
      std::cout << clients[i]->label() << ": ok, sluiced on " << clients[i]->daemon_hostname() << "\n";
    }
  }
  if (ok) warn_about_loopback_mix(clients);
  if (!ok && unreached != nullptr) {
    clients.clear();
  } else if (!ok) {
    std::cerr << "sluice: nothing was started; start sluiced on every host listed in hosts: (see "
                 "docs/operations.md) and check the console's "
              << (credentials.tls->certificates() ? "--cert, --key and --ca" : "--token-file") << "\n";
    clients.clear();
  }
  return clients;
}

}  // namespace sluice::console
