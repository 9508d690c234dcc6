#include "console/connect_hosts.h"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "console/exit_codes.h"
#include "console/remote.h"
#include "control/auth.h"

namespace sluice::console {

namespace {

constexpr auto kConnectTimeout = std::chrono::seconds(5);  // connect + handshake, per host

}  // namespace

std::string token_path(const std::string& path) {
  if (!path.empty()) return path;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "") + "/.config/sluice/token";
}

std::optional<std::string> read_console_token(const std::string& token_file) {
  try {
    return control::read_token_file(token_path(token_file));
  } catch (const std::exception& e) {
    std::cerr << "sluice: " << e.what() << " (--token-file)\n";
    return std::nullopt;
  }
}

std::vector<std::unique_ptr<HostClient>> connect_all(const topo::Topology& t, const std::string& token,
                                                     bool verbose) {
  std::vector<std::unique_ptr<HostClient>> clients;
  std::vector<std::optional<std::string>> errors(t.hosts.size());
  for (const topo::HostSpec& h : t.hosts) clients.push_back(std::make_unique<HostClient>(h.name, h.address));
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < clients.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        errors[i] = clients[i]->connect(token, kConnectTimeout);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  bool ok = true;
  for (std::size_t i = 0; i < clients.size(); ++i) {
    if (errors[i]) {
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
  if (!ok) {
    std::cerr << "sluice: nothing was started; start sluiced on every host listed in hosts: (see "
                 "docs/operations.md) and check the console's --token-file\n";
    clients.clear();
  }
  return clients;
}

int check_hosts(const topo::Topology& topology, const std::string& token_file) {
  const std::optional<std::string> token = read_console_token(token_file);
  if (!token) return kExitHostUnavailable;
  auto clients = connect_all(topology, *token, true);
  if (clients.empty()) return kExitHostUnavailable;
  for (auto& c : clients) c->close();
  return kExitOk;
}

}  // namespace sluice::console
