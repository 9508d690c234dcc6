// HostDaemons: real sluiced processes on loopback ports for the Application tests, with a
// token of their own; every process and file is removed when the fixture goes, even when a
// test fails.
#ifndef SLUICE_APPLICATION_DAEMONS_FIXTURE_H_
#define SLUICE_APPLICATION_DAEMONS_FIXTURE_H_

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace sluice {

class HostDaemons {
 public:
  // Starts one sluiced per name, listening on 127.0.0.1 on a port of its choosing.
  HostDaemons(const std::string& sluiced, const std::vector<std::string>& names) {
    char tmpl[] = "/tmp/sluice-app-daemons-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    token_ = dir_ + "/token";
    {
      std::random_device rd;
      std::ofstream out(token_);
      for (int i = 0; i < 24; ++i) out << "0123456789abcdef"[rd() % 16] << "0123456789abcdef"[rd() % 16];
      out << "\n";
    }
    std::filesystem::permissions(token_, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    for (const std::string& name : names) {
      const std::string ready = dir_ + "/" + name + ".ready";
      const std::string log = dir_ + "/" + name + ".log";
      const pid_t pid = ::fork();
      if (pid == 0) {
        const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
          ::dup2(fd, 1);
          ::dup2(fd, 2);
        }
        ::execl(sluiced.c_str(), sluiced.c_str(), "--listen", "127.0.0.1:0", "--token-file", token_.c_str(),
                "--ready-file", ready.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
      }
      pids_.push_back(pid);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      std::string address;
      while (address.empty() && std::chrono::steady_clock::now() < deadline) {
        std::ifstream in(ready);
        std::getline(in, address);
        if (address.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (address.empty()) throw std::runtime_error("sluiced " + name + " did not start; see " + log);
      hosts_ += (hosts_.empty() ? "" : ",") + name + "=" + address;
    }
  }
  ~HostDaemons() {
    for (pid_t pid : pids_) ::kill(pid, SIGTERM);
    for (pid_t pid : pids_) {
      int status = 0;
      ::waitpid(pid, &status, 0);
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  HostDaemons(const HostDaemons&) = delete;
  HostDaemons& operator=(const HostDaemons&) = delete;

  // Live (not zombie) sluice-appd processes the daemons have started.
  int app_daemons() const { return static_cast<int>(app_daemon_pids().size()); }

  // Their pids; with `daemon` (0, 1 ... in the order of the names), that daemon's only.
  std::vector<pid_t> app_daemon_pids(int daemon = -1) const {
    std::vector<pid_t> found;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      std::ifstream in(entry.path() / "stat");
      std::string stat;
      if (!std::getline(in, stat)) continue;
      const auto close = stat.rfind(')');
      const auto open = stat.find('(');
      if (open == std::string::npos || close == std::string::npos) continue;
      const std::string comm = stat.substr(open + 1, close - open - 1);
      std::istringstream rest(stat.substr(close + 2));
      char state = 0;
      long ppid = 0;
      rest >> state >> ppid;
      if (comm != "sluice-appd" || state == 'Z') continue;
      for (std::size_t i = 0; i < pids_.size(); ++i) {
        if (ppid == pids_[i] && (daemon < 0 || static_cast<std::size_t>(daemon) == i)) {
          found.push_back(static_cast<pid_t>(std::stol(entry.path().filename().string())));
        }
      }
    }
    return found;
  }

  // "a=127.0.0.1:PORT,b=..." for ApplicationOptions::hosts.
  const std::string& hosts() const { return hosts_; }
  const std::string& token_file() const { return token_; }

 private:
  std::string dir_;
  std::string token_;
  std::string hosts_;
  std::vector<pid_t> pids_;
};

}  // namespace sluice

#endif  // SLUICE_APPLICATION_DAEMONS_FIXTURE_H_
