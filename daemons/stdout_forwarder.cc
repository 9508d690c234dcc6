#include "daemons/stdout_forwarder.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "sluice/error.h"

namespace sluice::daemon {

StdoutForwarder::StdoutForwarder(std::function<void()> send) : send_(std::move(send)) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(std::string("stdout: cannot make a pipe: ") + std::strerror(errno));
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  read_fd_ = fds[0];
  try {
    reader_ = std::thread([this] { read_loop(); });  // reads nothing until fd 1 is the pipe
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error("stdout: cannot start its reader thread");
  }
  std::fflush(stdout);
  if (::dup2(fds[1], STDOUT_FILENO) != STDOUT_FILENO) {
    const int e = errno;
    stop_ = true;
    reader_.join();
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(std::string("stdout: cannot redirect it: ") + std::strerror(e));
  }
  ::close(fds[1]);  // fd 1 is the write end now (dup2 leaves it open across exec)
  // As on a terminal: a filter's line reaches the pipe when it ends, not when 4 KiB have
  // gathered (stdio buffers a pipe fully).
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
}

StdoutForwarder::~StdoutForwarder() {
  stop_ = true;
  taken_.notify_all();
  if (reader_.joinable()) reader_.join();
  ::close(read_fd_);
}

void StdoutForwarder::set_send(std::function<void()> send) {
  std::lock_guard<std::mutex> lock(mu_);
  send_ = std::move(send);
}

bool StdoutForwarder::read_available() {
  char chunk[16384];
  while (pending_.size() < kMaxPending) {
    const ssize_t n = ::read(read_fd_, chunk, std::min(sizeof chunk, kMaxPending - pending_.size()));
    if (n > 0) {
      pending_.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n != 0;  // 0: the end; EAGAIN: empty for now
  }
  return true;
}

void StdoutForwarder::read_loop() {
  while (!stop_) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      taken_.wait(lock, [&] { return stop_ || pending_.size() < kMaxPending; });
    }
    pollfd p{read_fd_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;  // every 200 ms at least: stop_ is looked at
    std::function<void()> send;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!read_available()) return;  // stdout closed for good: nothing more will come
      if (pending_.size() >= kSendAt) send = send_;
    }
    if (send) send();  // takes the batch (under the app daemon's log lock, then mu_)
  }
}

void StdoutForwarder::drain() {
  // No fflush here: stdout is line-buffered, so every ended line is in the pipe already, and
  // a flush could wait on a full pipe. A copy that keeps writing cannot hold the caller:
  // kMaxPending bytes more at most.
  std::lock_guard<std::mutex> lock(mu_);
  read_available();
}

std::string StdoutForwarder::take(bool everything) {
  std::string out;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::size_t end = pending_.size();
    if (!everything && end < kMaxPending) {
      const std::size_t newline = pending_.rfind('\n');
      end = newline == std::string::npos ? 0 : newline + 1;
    }
    out = pending_.substr(0, end);
    pending_.erase(0, end);
  }
  taken_.notify_all();
  return out;
}

}  // namespace sluice::daemon
