#include "log/backend.h"

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

#include <spdlog/details/log_msg.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>

#include "log/background_writer.h"
#include "log/log_output.h"

namespace sluice::logging {

namespace {

spdlog::level::level_enum to_spdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return spdlog::level::debug;
    case LogLevel::kInfo: return spdlog::level::info;
    case LogLevel::kWarn: return spdlog::level::warn;
    case LogLevel::kError: return spdlog::level::err;
  }
  return spdlog::level::info;
}

LogLevel from_spdlog(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
    case spdlog::level::debug: return LogLevel::kDebug;
    case spdlog::level::info: return LogLevel::kInfo;
    case spdlog::level::warn: return LogLevel::kWarn;
    default: return LogLevel::kError;
  }
}

void append(spdlog::memory_buf_t& dest, std::string_view s) { dest.append(s.data(), s.data() + s.size()); }

// %* : our level names ("warn", not spdlog's "warning"), as the lines have always read.
class LevelFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    append(dest, log_output::level_name(from_spdlog(msg.level)));
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<LevelFlag>(); }
};

// Whether stderr is the systemd journal's stream: systemd sets JOURNAL_STREAM ("DEV:INODE")
// for a service whose output goes to the journal, naming that stream's file. Read once.
bool stderr_is_journal() {
  static const bool journal = [] {
    const char* value = std::getenv("JOURNAL_STREAM");
    struct stat st;
    unsigned long long dev = 0;
    unsigned long long ino = 0;
    return value != nullptr && std::sscanf(value, "%llu:%llu", &dev, &ino) == 2 && ::fstat(STDERR_FILENO, &st) == 0 &&
           dev == static_cast<unsigned long long>(st.st_dev) && ino == static_cast<unsigned long long>(st.st_ino);
  }();
  return journal;
}

// %^ : "<3>", "<4>", "<6>", "<7>" (sd-daemon(3)'s SD_ERR, SD_WARNING, SD_INFO, SD_DEBUG) when
// stderr is the journal's stream, so that journald files each line at its level (`journalctl
// -p warning` finds the warnings); nothing otherwise.
class JournalPriorityFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    if (!stderr_is_journal()) return;
    switch (from_spdlog(msg.level)) {
      case LogLevel::kDebug: return append(dest, "<7>");
      case LogLevel::kInfo: return append(dest, "<6>");
      case LogLevel::kWarn: return append(dest, "<4>");
      case LogLevel::kError: return append(dest, "<3>");
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JournalPriorityFlag>(); }
};

// %~ : "\r\033[K" while the console draws a progress line on this terminal.
class ClearLineFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
    if (log_output::clear_line_first()) append(dest, "\r\033[K");
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<ClearLineFlag>(); }
};

// Set by write_in_background, never unset but in a fork()ed child (which has no writer thread).
std::atomic<BackgroundWriter*> background{nullptr};

// An spdlog sink that writes each formatted line to stderr with one write(2) (spdlog's own
// stderr sinks use stdio, which may split a line across writes), or hands it to the
// background writer.
class StderrLineSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit StderrLineSink(const std::string& pattern) {
    auto formatter = std::make_unique<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    formatter->add_flag<LevelFlag>('*').add_flag<ClearLineFlag>('~').add_flag<JournalPriorityFlag>('^').set_pattern(pattern);
    set_formatter_(std::move(formatter));
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    if (BackgroundWriter* writer = background.load(std::memory_order_acquire)) {
      return writer->add(std::string_view(line.data(), line.size()));
    }
    (void)!::write(STDERR_FILENO, line.data(), line.size());
  }
  void flush_() override {}
};

// The logger name (%n) carries the filter's prefix or the process's name.
StderrLineSink& filter_sink() {
  static StderrLineSink sink("%^%~[%n] %*: %v");
  return sink;
}
// A process line: "2026-11-21T12:57:12.397Z sluiced[27273] [warn] message".
constexpr char kProcessLine[] = "%Y-%m-%dT%H:%M:%S.%eZ %n[%P] [%*] %v";

StderrLineSink& process_sink() {
  static StderrLineSink sink(std::string("%^%~") + kProcessLine);
  return sink;
}
StderrLineSink& plain_sink() {
  static StderrLineSink sink("%^%~%v");
  return sink;
}

void write_always(StderrLineSink& sink, LogLevel level, std::string_view name, std::string_view text) {
  const spdlog::details::log_msg msg(spdlog::string_view_t(name.data(), name.size()), to_spdlog(level),
                                     spdlog::string_view_t(text.data(), text.size()));
  sink.log(msg);
}

std::atomic<int> mutes{0};  // MuteStderr objects alive

void write(StderrLineSink& sink, LogLevel level, std::string_view name, std::string_view text) {
  if (enabled(level) && mutes.load(std::memory_order_relaxed) == 0) write_always(sink, level, name, text);
}

std::mutex name_mu;  // guards name
std::string& name() {
  static std::string n = "sluice";
  return n;
}

// SLUICE_LOG, or the older SLUICE_LOG_LEVEL (with a note), or info. A value that is not a
// level is reported and ignored.
LogLevel level_from_env() {
  const char* value = std::getenv("SLUICE_LOG");
  std::string variable = "SLUICE_LOG";
  if (value == nullptr && (value = std::getenv("SLUICE_LOG_LEVEL")) != nullptr) {
    variable = "SLUICE_LOG_LEVEL";
    write_always(plain_sink(), LogLevel::kWarn, "",
                 "sluice: SLUICE_LOG_LEVEL is an older name and will go; set SLUICE_LOG=" + std::string(value) +
                     " instead");
  }
  LogLevel level = LogLevel::kInfo;
  if (value != nullptr && !parse_level(value, &level)) {
    write_always(plain_sink(), LogLevel::kWarn, "", "sluice: " + variable + "='" + value +
                                    "' is not a log level; use debug, info, warn or error (logging at info)");
  }
  return level;
}

std::atomic<int>& current_level() {
  static std::atomic<int> level{static_cast<int>(level_from_env())};
  return level;
}

// The text with a newline followed by four spaces (or by the tab that follows it), and every
// other control character (but tab) written as \xNN: a process line or a plain line cannot be
// made to look like more than one line, whatever a stranger put in the names it quotes (a
// TLS-PSK identity, a HELLO's host name, a unit's payload), nor drive a terminal; a Java stack
// trace in a failure still reads line by line, as a continuation.
std::string_view one_line(std::string_view text, std::string& storage) {
  const auto control = [](unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; };
  std::size_t i = 0;
  while (i < text.size() && !control(static_cast<unsigned char>(text[i]))) ++i;
  if (i == text.size()) return text;
  storage.assign(text.substr(0, i));
  static constexpr char kHex[] = "0123456789abcdef";
  for (; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      // A Java stack trace's "\tat ..." is indented already.
      storage += i + 1 < text.size() && text[i + 1] == '\t' ? "\n" : "\n    ";
    } else if (control(c)) {
      storage += "\\x";
      storage += kHex[c >> 4];
      storage += kHex[c & 0xf];
    } else {
      storage += static_cast<char>(c);
    }
  }
  return storage;
}

}  // namespace

bool parse_level(std::string_view s, LogLevel* level) {
  if (s == "debug") *level = LogLevel::kDebug;
  else if (s == "info") *level = LogLevel::kInfo;
  else if (s == "warn") *level = LogLevel::kWarn;
  else if (s == "error") *level = LogLevel::kError;
  else return false;
  return true;
}

bool enabled(LogLevel level) {
  return static_cast<int>(level) >= current_level().load(std::memory_order_relaxed);
}

void filter_line(LogLevel level, std::string_view prefix, std::string_view message) {
  write(filter_sink(), level, prefix, message);
}

void process_line(LogLevel level, std::string_view message) {
  if (!enabled(level)) return;
  const std::string n = process_name();
  std::string storage;
  write(process_sink(), level, n, one_line(message, storage));
}

void plain_line(LogLevel level, std::string_view text) {
  if (!enabled(level)) return;
  std::string storage;
  write(plain_sink(), level, "", one_line(text, storage));
}

MuteStderr::MuteStderr() { mutes.fetch_add(1, std::memory_order_relaxed); }
MuteStderr::~MuteStderr() { mutes.fetch_sub(1, std::memory_order_relaxed); }
bool stderr_muted() { return mutes.load(std::memory_order_relaxed) != 0; }

void set_process_name(std::string n) {
  std::lock_guard<std::mutex> lock(name_mu);
  name() = std::move(n);
}

std::string process_name() {
  std::lock_guard<std::mutex> lock(name_mu);
  return name();
}

void write_in_background(std::size_t max_queued) {
  static std::once_flag once;
  std::call_once(once, [max_queued] {
    // The note is a process line of its own, formatted by the writer thread alone.
    auto formatter = std::make_shared<spdlog::pattern_formatter>(spdlog::pattern_time_type::utc);
    formatter->add_flag<LevelFlag>('*').set_pattern(kProcessLine);
    auto note = [formatter](std::uint64_t dropped) {
      const std::string n = process_name();
      const std::string text = std::to_string(dropped) + " log line" + (dropped == 1 ? "" : "s") +
                               " not written: stderr took nothing for a while or refused them (a stuck or paused log reader, "
                               "a full disk); " +
                               n + " went on without waiting";
      const spdlog::details::log_msg msg(spdlog::string_view_t(n.data(), n.size()), spdlog::level::warn,
                                         spdlog::string_view_t(text.data(), text.size()));
      spdlog::memory_buf_t line;
      formatter->format(msg, line);
      return std::string(line.data(), line.size());
    };
    // Never destroyed: its thread may be stuck in write(2) at exit (background_writer.h).
    background.store(new BackgroundWriter(STDERR_FILENO, max_queued, std::move(note)), std::memory_order_release);
    ::pthread_atfork(nullptr, nullptr, [] { background.store(nullptr, std::memory_order_relaxed); });
    std::atexit([] { flush_background(std::chrono::seconds(1)); });
  });
}

void flush_background(std::chrono::milliseconds timeout) {
  if (BackgroundWriter* writer = background.load(std::memory_order_acquire)) writer->flush(timeout);
}

std::uint64_t lines_dropped() {
  BackgroundWriter* writer = background.load(std::memory_order_acquire);
  return writer != nullptr ? writer->dropped() : 0;
}

}  // namespace sluice::logging

namespace sluice {

void Logger::set_level(LogLevel level) { logging::current_level().store(static_cast<int>(level)); }
LogLevel Logger::level() { return static_cast<LogLevel>(logging::current_level().load()); }

}  // namespace sluice
