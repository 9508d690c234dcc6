#include "console/report.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <nlohmann/json.hpp>

#include "console/exit_codes.h"
#include "console/filter_log.h"
#include "os/replace_file.h"
#include "runtime/write_all.h"
#include "sluice/error.h"
#include "text/shortened.h"
#include "tls/trusted_file.h"
#include "topology/suggest.h"

namespace sluice::console {

nlohmann::json failure_json(const Failure& f) {
  return {{"filter", f.filter}, {"copy", f.copy},    {"host", f.host},  {"unit", f.unit},
          {"stage", f.stage},   {"message", f.message}, {"crash", f.crash}};
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

namespace {

// 1234567 -> "1.23M"
std::string si(double value) {
  const char* units[] = {"", "k", "M", "G", "T"};
  int u = 0;
  while (value >= 1000.0 && u < 4) {
    value /= 1000.0;
    ++u;
  }
  return fixed(value, value < 10 && u > 0 ? 2 : (u > 0 ? 1 : 0)) + units[u];
}

double mb(std::uint64_t bytes) { return static_cast<double>(bytes) / 1e6; }

// Share of the copies' time spent blocked, in percent.
double blocked_percent(std::uint64_t blocked_ns, int copies, double seconds) {
  if (copies <= 0 || seconds <= 0) return 0;
  double pct = 100.0 * static_cast<double>(blocked_ns) / 1e9 / (seconds * copies);
  return pct > 100 ? 100 : pct;
}

std::string pad(std::string text, std::size_t width, bool right = false) {
  if (text.size() >= width) return text;
  std::string fill(width - text.size(), ' ');
  return right ? fill + text : text + fill;
}

// `text` cut to at most `width` bytes with "..." at the end, at a space, so that no figure
// is cut short ("blk 100..." read as a whole 100 when it was 100%/35%: an outside review);
// at the width itself only when no space is near (never inside a UTF-8 character of a
// payload). `text` whole when it fits.
std::string cut_between_words(const std::string& text, std::size_t width) {
  if (text.size() <= width) return text;
  if (width <= 3) return text.substr(0, text::utf8_cut(text, width));
  std::size_t cut = text::utf8_cut(text, width - 3);
  const std::size_t space = text.rfind(' ', cut);
  if (space != std::string::npos && space > 0 && space + 24 >= cut) cut = space;
  return text.substr(0, cut) + "...";
}

}  // namespace

std::string progress_line(const std::string& unit_label, const std::vector<StreamStats>& now,
                          const std::vector<StreamStats>& previous, double seconds,
                          std::size_t width) {
  const double dt = seconds > 0 ? seconds : 1;
  struct Shown {
    double producer_blocked;
    double consumer_blocked;
    std::string text;
  };
  std::vector<Shown> shown;
  for (std::size_t i = 0; i < now.size(); ++i) {
    const StreamStats& cur = now[i];
    const StreamStats prev = i < previous.size() ? previous[i] : StreamStats{};
    const double pblk = blocked_percent(cur.producer_blocked_ns - prev.producer_blocked_ns, cur.producer_copies, dt);
    const double cblk = blocked_percent(cur.consumer_blocked_ns - prev.consumer_blocked_ns, cur.consumer_copies, dt);
    shown.push_back({pblk, cblk,
                     cur.label + " " + si(static_cast<double>(cur.buffers - prev.buffers) / dt) + " buf/s " +
                         fixed(mb(cur.bytes - prev.bytes) / dt, 1) + " MB/s blk " + fixed(pblk, 0) + "%/" +
                         fixed(cblk, 0) + "%"});
  }
  std::stable_sort(shown.begin(), shown.end(), [](const Shown& a, const Shown& b) {
    if (a.producer_blocked != b.producer_blocked) return a.producer_blocked > b.producer_blocked;
    return a.consumer_blocked > b.consumer_blocked;
  });
  const std::string head = unit_label + (shown.empty() ? "" : "  last " + fixed(dt, dt < 9.95 ? 1 : 0) + "s: ");
  const auto more = [&](std::size_t left) { return left == 0 ? std::string() : " +" + std::to_string(left) + " more"; };
  std::string body;
  std::size_t fitted = 0;
  for (; fitted < shown.size(); ++fitted) {
    const std::string piece = (fitted == 0 ? "" : " | ") + shown[fitted].text;
    if (head.size() + body.size() + piece.size() + more(shown.size() - fitted - 1).size() > width) break;
    body += piece;
  }
  std::string line;
  if (fitted > 0 || shown.empty()) {
    line = head + body + more(shown.size() - fitted);
  } else {
    // Not even the most held-back stream fits whole: cut it, and still count the others.
    const std::string suffix = more(shown.size() - 1);
    line = head + shown[0].text;
    if (width > suffix.size() + 3 && line.size() + suffix.size() > width) {
      line = cut_between_words(line, width - suffix.size());
    }
    line += suffix;
  }
  return cut_between_words(line, width);
}

std::string RecentSamples::line(const std::string& unit_label, std::vector<StreamStats> now, double at,
                                std::size_t width) {
  // A changed set of streams (a host's first report) starts the window again.
  if (!samples_.empty() && samples_.front().streams.size() != now.size()) samples_.clear();
  while (samples_.size() > 1 && at - samples_[1].at >= window_) samples_.erase(samples_.begin());
  std::string text;
  if (samples_.empty()) {
    text = progress_line(unit_label, now, now, 0, width);
  } else {
    text = progress_line(unit_label, now, samples_.front().streams, at - samples_.front().at, width);
  }
  samples_.push_back({at, std::move(now)});
  return text;
}

std::string summary_table(const RunReport& report, bool blocked) {
  std::string out;
  std::size_t label_width = 6;
  for (const StreamStats& s : report.streams) label_width = std::max(label_width, s.label.size());
  const double secs = report.wall_seconds > 0 ? report.wall_seconds : 1e-9;
  // No stream counted (a unit that failed before it was deployed): no table, not a bare header.
  if (!report.streams.empty()) {
    out += pad("stream", label_width) + "  " + pad("buffers", 12, true) + "  " + pad("MB", 10, true) + "  " +
           pad("buf/s", 9, true) + "  " + pad("MB/s", 9, true) +
           (blocked ? "  " + pad("prod blk", 8, true) + "  " + pad("cons blk", 8, true) : std::string()) + "\n";
  }
  for (const StreamStats& s : report.streams) {
    out += pad(s.label, label_width) + "  " + pad(std::to_string(s.buffers), 12, true) + "  " +
           pad(fixed(mb(s.bytes), 1), 10, true) + "  " +
           pad(si(static_cast<double>(s.buffers) / secs), 9, true) + "  " +
           pad(fixed(mb(s.bytes) / secs, 1), 9, true);
    if (blocked) {
      out += "  " + pad(fixed(blocked_percent(s.producer_blocked_ns, s.producer_copies, secs), 0) + "%", 8, true) +
             "  " + pad(fixed(blocked_percent(s.consumer_blocked_ns, s.consumer_copies, secs), 0) + "%", 8, true);
    }
    out += "\n";
  }
  if (!report.streams.empty() && !report.partial_counts.empty()) {
    out += "(at least: no final counts came from host " + topo::join(report.partial_counts, "; host ") +
           ": their copies' share above is what they had carried by their last report)\n";
  }
  std::size_t finished = 0;
  for (const UnitRecord& u : report.units) finished += u.finished ? 1 : 0;
  out += "units of work: " + std::to_string(finished) + "/" + std::to_string(report.units.size()) +
         " finished in " + fixed(report.wall_seconds, 3) + " s";
  for (const UnitRecord& u : report.units) {
    if (u.finished) out += "; " + text::bracketed(u.work, 200) + " " + fixed(u.seconds, 3) + " s";  // as serve and the live view
  }
  out += "\n";
  return out;
}

std::string failure_text(const Failure& f) {
  // A filter chose the message (an exception's): no terminal escapes pass, newlines do.
  if (!f.filter.empty() || f.stage.empty()) return text::printable(f.str(), true);
  // A host's failure names the host and what failed there itself ("host b: the app daemon
  // ..."), as `sluice run` prints it; others get their kind first ("cancelled: ...").
  if (f.message.rfind("host ", 0) == 0) return text::printable(f.message, true);
  return text::printable(f.stage + ": " + f.message, true);
}

void write_metrics_json(const RunReport& report, const std::string& path) {
  nlohmann::json doc;
  doc["topology"] = {{"name", report.topology_name}, {"file", report.topology_file}};
  doc["exit_code"] = report.exit_code;
  doc["status"] = report.failure ? "failed" : "ok";
  doc["wall_seconds"] = report.wall_seconds;
  doc["units"] = nlohmann::json::array();
  for (const UnitRecord& u : report.units) {
    doc["units"].push_back({{"index", u.index}, {"work", u.work}, {"seconds", u.seconds},
                            {"finished", u.finished}});
  }
  doc["streams"] = nlohmann::json::array();
  for (const StreamStats& s : report.streams) {
    doc["streams"].push_back({{"stream", s.label},
                              {"buffers", s.buffers},
                              {"bytes", s.bytes},
                              {"producer_copies", s.producer_copies},
                              {"consumer_copies", s.consumer_copies},
                              {"producer_blocked_seconds", static_cast<double>(s.producer_blocked_ns) / 1e9},
                              {"consumer_blocked_seconds", static_cast<double>(s.consumer_blocked_ns) / 1e9}});
  }
  if (report.failure) {
    const Failure& f = *report.failure;
    doc["failure"] = failure_json(f);
  }
  if (!report.stuck.empty()) doc["stuck_copies"] = report.stuck;
  // The streams' counts are lower bounds when this is there (RunReport::partial_counts).
  if (!report.partial_counts.empty()) doc["partial_counts_from_hosts"] = report.partial_counts;
  // Payloads and messages are bytes a peer chose: what is not UTF-8 becomes U+FFFD (JSON must
  // be UTF-8; the default handler threw, and the file stayed empty).
  const std::string text = doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  // Not through a symbolic link another user owns, nor into their FIFO or file
  // (tls/trusted_file.h): through them the console overwrote a file of their choosing, or
  // handed them the payloads (an outside review did both).
  try {
    if (const std::string target = tls::replace_target(path, "--metrics"); !target.empty()) {
      os::replace_file(target, text, 0644);  // says a full disk, as a short write
      return;
    }
    // A FIFO or device of this user's (or root's: /dev/full, /dev/stdout): written in place.
    const int fd = tls::open_output_in_place(path, "--metrics");
    if (fd < 0) throw Error(std::string("cannot open it: ") + std::strerror(errno));
    std::string why = write_all(fd, text.data(), text.size()) ? "" : std::strerror(errno);
    if (::close(fd) != 0 && why.empty()) why = std::strerror(errno);
    if (!why.empty()) throw Error(why);
  } catch (const Error& e) {
    throw Error("cannot write metrics to '" + path + "': " + e.what());
  }
}

void check_metrics_writable(const std::string& path) {
  try {
    const std::string target = tls::replace_target(path, "--metrics");
    if (target.empty()) {
      // A FIFO or device: not opened to try (another user's FIFO would wait for them).
      tls::check_output_in_place(path, "--metrics");
      return;
    }
    // The directory takes a temporary file: what the write at the end needs. Removed at once,
    // so a run that stops on a bad topology leaves nothing behind.
    std::string probe = target + ".tmp.XXXXXX";
    const int fd = ::mkstemp(probe.data());
    if (fd < 0) throw Error(std::strerror(errno));
    ::close(fd);
    ::unlink(probe.c_str());
  } catch (const Error& e) {
    throw Error("cannot write --metrics '" + path + "': " + e.what() + "; check the directory exists and is writable");
  }
}

int print_report(const RunReport& report, const std::string& metrics_path, const std::string& stuck_note) {
  std::cerr << summary_table(report);
  // A filter chose the message (an exception's): no terminal escapes pass, newlines do.
  if (report.failure) {
    std::cerr << "sluice: run failed: " << text::indented_continuations(text::printable(report.failure->str(), true))
              << "\n";
  }
  if (!report.stuck.empty()) {
    std::cerr << "sluice: these copies did not stop after the failure (" << stuck_note << "):";
    for (const std::string& s : report.stuck) std::cerr << " " << s;
    std::cerr << "\n";
  }
  if (!metrics_path.empty()) {
    try {
      write_metrics_json(report, metrics_path);
    } catch (const std::exception& e) {
      // A script reads the file a run that went well promised: not 0, then.
      std::cerr << "sluice: " << e.what() << "\n";
      if (report.exit_code == 0) return kExitRunFailed;
    }
  }
  // The filters' output is often a run's only result: stdout that refused it (a full disk)
  // does not end in status 0 (an outside review lost a run's output that way, silently).
  if (const auto lost = filter_output_lost()) {
    std::cerr << "sluice: " << *lost << "\n";
    if (report.exit_code == 0) return kExitRunFailed;
  }
  return report.exit_code;
}

std::size_t terminal_width() {
  struct winsize ws;
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

}  // namespace sluice::console
