#include "daemons/stdout_forwarder.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "sluice/error.h"

namespace sluice::daemon {

StdoutForwarder::StdoutForwarder() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(std::string("stdout: cannot make a pipe: ") + std::strerror(errno));
  std::fflush(stdout);
  if (::dup2(fds[1], STDOUT_FILENO) != STDOUT_FILENO) {
    const int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(std::string("stdout: cannot redirect it: ") + std::strerror(e));
  }
  ::close(fds[1]);  // fd 1 is the write end now (dup2 leaves it open across exec)
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  read_fd_ = fds[0];
  // As on a terminal: a filter's line reaches the pipe when it ends, not when 4 KiB have
  // gathered (stdio buffers a pipe fully).
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  reader_ = std::thread([this] { read_loop(); });
}

StdoutForwarder::~StdoutForwarder() {
  stop_ = true;
  taken_.notify_all();
  if (reader_.joinable()) reader_.join();
  ::close(read_fd_);
}

void StdoutForwarder::read_available(std::size_t limit) {
  char chunk[16384];
  for (std::size_t got = 0; got < limit;) {
    const ssize_t n = ::read(read_fd_, chunk, sizeof chunk);
    if (n > 0) {
      pending_.append(chunk, static_cast<std::size_t>(n));
      got += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return;  // EAGAIN: empty for now (or the end, which never comes: fd 1 stays open)
  }
}

void StdoutForwarder::read_loop() {
  while (!stop_) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      taken_.wait(lock, [&] { return stop_ || pending_.size() < kMaxPending; });
    }
    pollfd p{read_fd_, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;  // every 200 ms at least: stop_ is looked at
    std::lock_guard<std::mutex> lock(mu_);
    read_available(kMaxPending);
  }
}

void StdoutForwarder::drain() {
  // No fflush here: stdout is line-buffered, so every whole line is in the pipe already, and
  // a flush could wait on a full pipe while the bytes that would empty it wait for our
  // caller (a filter that ends a line later gets it sent later). A copy that keeps writing
  // cannot hold the caller: one pipe's worth more at most.
  std::lock_guard<std::mutex> lock(mu_);
  read_available(kMaxPending);
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
