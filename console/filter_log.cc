#include "console/filter_log.h"

#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>

#include "log/backend.h"
#include "log/log_output.h"

namespace sluice::console {

namespace {

void append_printable(std::string& out, const std::string& text) {
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    out.push_back((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f ? '?' : ch);
  }
}

}  // namespace

std::string format_filter_log(const std::string& host, const control::FilterLog& log) {
  std::string out;
  for (const control::LogLine& line : log.lines()) {
    // This console's SLUICE_LOG applies to the lines it prints, as embedded (the host's own
    // level decided what it forwarded). A level it does not know is printed.
    LogLevel level;
    if (logging::parse_level(line.level(), &level) && !logging::enabled(level)) continue;
    out += "[";
    append_printable(out, line.prefix());
    if (line.prefix().find('@') == std::string::npos) out += "@" + host;
    out += "] ";
    append_printable(out, line.level());
    out += ": ";
    append_printable(out, line.text());
    out += "\n";
  }
  if (log.not_forwarded() > 0) {
    const std::uint64_t n = log.not_forwarded();
    out += "sluice: host " + host + ": " + std::to_string(n) + " filter log line" + (n == 1 ? "" : "s") +
           " not shown here (its filters logged faster than the forwarding limit); every line is in "
           "that host's sluiced log\n";
  }
  return out;
}

namespace {

// What the filters printed and stdout has not taken yet. The thread that prints it also keeps
// the hosts' heartbeats going, so it never waits on stdout (a paused pager, a full pipe):
// what does not fit now waits here, up to kMaxHeld bytes (more is counted, and reported at
// exit), and is written as stdout takes it, all of it at the end of the run.
struct HeldOutput {
  std::mutex mu;  // guards the rest
  std::string bytes;
  std::uint64_t dropped = 0;
  std::uint64_t refused = 0;  // bytes stdout refused (not a gone reader), and why
  int refused_errno = 0;
  bool at_exit = false;  // the final flush is registered
};
constexpr std::size_t kMaxHeld = std::size_t{64} << 20;

HeldOutput& held() {
  static HeldOutput h;
  return h;
}

// Writes what is held: while stdout takes it without waiting, or, with `wait`, all of it.
// REQUIRES: h.mu held.
void write_held(HeldOutput& h, bool wait) {
  std::size_t done = 0;
  while (done < h.bytes.size()) {
    if (!wait) {
      pollfd p{STDOUT_FILENO, POLLOUT, 0};
      if (::poll(&p, 1, 0) <= 0 || (p.revents & POLLOUT) == 0) break;
    }
    // A pipe or terminal that polls writable takes PIPE_BUF bytes without blocking.
    const std::size_t chunk = wait ? h.bytes.size() - done : std::min<std::size_t>(h.bytes.size() - done, PIPE_BUF);
    const ssize_t n = ::write(STDOUT_FILENO, h.bytes.data() + done, chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN && !wait) break;
    if (n <= 0) {  // stdout is gone (EPIPE with SIGPIPE ignored, EBADF, ENOSPC): nowhere to print
      if (n < 0 && errno != EPIPE) {
        h.refused += h.bytes.size() - done;
        h.refused_errno = errno;
      }
      done = h.bytes.size();
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  h.bytes.erase(0, done);
}

}  // namespace

void write_filter_output(bool wait) {
  HeldOutput& h = held();
  std::lock_guard<std::mutex> lock(h.mu);
  write_held(h, wait);
  if (wait && h.dropped > 0) {
    const std::string note = "sluice: " + std::to_string(h.dropped) +
                             " bytes of the filters' output were not printed: stdout did not take them "
                             "(more than 64 MiB waited)\n";
    (void)!::write(STDERR_FILENO, note.data(), note.size());
    h.dropped = 0;
  }
}

namespace {

// True when stdout is a pipe or socket whose reader has gone: writes to it fail with EPIPE.
bool stdout_reader_gone() {
  struct stat st {};
  if (::fstat(STDOUT_FILENO, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) return false;
  pollfd p{STDOUT_FILENO, POLLOUT, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLERR) != 0;
}

}  // namespace

std::optional<std::string> filter_output_lost() {
  // An embedded filter's std::cout and printf share stdio's buffer: flush it, then ask.
  std::cout.flush();
  errno = 0;
  const bool flush_failed = std::fflush(stdout) != 0;
  const int flush_errno = errno;
  const bool stdio_failed = flush_failed || std::ferror(stdout) != 0 || std::cout.bad();
  HeldOutput& h = held();
  std::lock_guard<std::mutex> lock(h.mu);
  if (h.refused > 0) {
    return std::to_string(h.refused) + " bytes of the filters' output were not written: stdout refused them (" +
           std::strerror(h.refused_errno) + ")";
  }
  if (stdio_failed && !stdout_reader_gone()) {
    return std::string("a write to stdout failed, so part of the filters' output is lost") +
           (flush_failed && flush_errno != 0 ? std::string(" (") + std::strerror(flush_errno) + ")" : "");
  }
  return std::nullopt;
}

void print_filter_log(const std::string& host, const control::FilterLog& log) {
  std::string text = format_filter_log(host, log);
  const std::string& output = log.output();
  // A progress line on the terminal is cleared first (and redrawn by the next tick).
  if ((!text.empty() || !output.empty()) && log_output::clear_line_first()) text.insert(0, "\r\033[K");
  // One write: lines from one batch stay together.
  if (!text.empty() && !logging::stderr_muted()) (void)!::write(STDERR_FILENO, text.data(), text.size());
  if (output.empty()) return;
  // What the filters printed: on this process's stdout, as an embedded run prints it.
  HeldOutput& h = held();
  std::lock_guard<std::mutex> lock(h.mu);
  if (!h.at_exit) {
    h.at_exit = true;
    std::atexit([] { write_filter_output(true); });
  }
  std::fflush(stdout);  // the console's own lines first
  if (h.bytes.size() + output.size() > kMaxHeld) {
    h.dropped += output.size();
  } else {
    h.bytes += output;
  }
  write_held(h, false);
}

}  // namespace sluice::console
