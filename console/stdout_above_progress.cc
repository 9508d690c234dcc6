#include "console/stdout_above_progress.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "runtime/write_all.h"

namespace sluice::console {

StdoutAboveProgress::StdoutAboveProgress(bool enabled, const crash::Output& crash_output)
    : crash_output_(crash_output) {
  if (!enabled) return;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  const int terminal = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (terminal < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  std::fflush(stdout);
  // As on the terminal: a line reaches the pipe when it ends (stdio buffers a pipe fully).
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (::dup2(fds[1], STDOUT_FILENO) != STDOUT_FILENO) {
    ::close(terminal);
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  ::close(fds[1]);  // fd 1 is the only write end
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  read_fd_ = fds[0];
  terminal_fd_ = terminal;
  copier_ = std::thread([this] { copy_loop(); });
  crash::Output drained = crash_output_;
  drained.stdout_pipe = read_fd_;
  drained.stdout_to = terminal_fd_;
  crash::set_output(drained);
}

StdoutAboveProgress::~StdoutAboveProgress() { finish(); }

bool StdoutAboveProgress::copy_available() {
  char chunk[16384];
  for (;;) {
    const ssize_t n = ::read(read_fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return true;  // EAGAIN: empty for now
    if (n == 0) return false;
    std::lock_guard<std::mutex> lock(terminal_mu_);
    if (!mid_line_) write_all(terminal_fd_, "\r\033[K", 4);  // the progress line, if drawn
    write_all(terminal_fd_, chunk, static_cast<std::size_t>(n));
    mid_line_ = chunk[n - 1] != '\n';
  }
}

void StdoutAboveProgress::copy_loop() {
  while (!stop_.load(std::memory_order_acquire)) {
    pollfd p{read_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;  // every 100 ms at least: stop_ is looked at
    if (!copy_available()) return;
  }
}

void StdoutAboveProgress::finish() {
  if (!active()) return;
  std::fflush(stdout);
  ::dup2(terminal_fd_, STDOUT_FILENO);  // new writes go straight to the terminal
  stop_.store(true, std::memory_order_release);
  copier_.join();
  copy_available();  // what the filters wrote before (a writer that lives on is not waited for)
  crash::set_output(crash_output_);  // the pipe is about to close
  ::close(read_fd_);
  ::close(terminal_fd_);
  read_fd_ = terminal_fd_ = -1;
}

}  // namespace sluice::console
