#include "console/filter_log.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

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

void print_filter_log(const std::string& host, const control::FilterLog& log) {
  std::string text = format_filter_log(host, log);
  const std::string& output = log.output();
  // A progress line on the terminal is cleared first (and redrawn by the next tick).
  if ((!text.empty() || !output.empty()) && log_output::clear_line_first()) text.insert(0, "\r\033[K");
  // One write: lines from one batch stay together.
  if (!text.empty()) (void)!::write(STDERR_FILENO, text.data(), text.size());
  // What the filters printed: on this process's stdout, as an embedded run prints it.
  std::fflush(stdout);
  for (std::size_t done = 0; done < output.size();) {
    const ssize_t n = ::write(STDOUT_FILENO, output.data() + done, output.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // stdout closed (a pipe whose reader went): nothing to print to
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace sluice::console
