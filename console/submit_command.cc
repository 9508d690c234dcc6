// `sluice submit` and `sluice stop`: clients of `sluice serve` (console/serve_client.h).
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "console/commands.h"
#include "console/connect_hosts.h"
#include "console/exit_codes.h"
#include "console/report.h"
#include "console/results_file.h"
#include "console/serve_client.h"
#include "console/subprocess.h"
#include "runtime/failure.h"
#include "text/address.h"
#include "text/shortened.h"

namespace sluice::console {

namespace {

constexpr auto kConnectTimeout = std::chrono::seconds(5);
// After an interrupt, how long the main thread may stay stuck writing results.
constexpr auto kStuckWriting = std::chrono::seconds(2);

// SIGINT, SIGTERM and SIGHUP end the connection (serve then cancels the unit) from a thread of its
// own (sigwait), so the main thread sees a closed connection and says why. Blocks them in
// every thread: construct before any other thread starts.
class InterruptWatcher {
 public:
  explicit InterruptWatcher(ServeClient& client) : client_(client) {
    sigemptyset(&set_);
    add_stop_signals(&set_);
    sigaddset(&set_, SIGUSR1);  // our own wake-up
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    thread_ = std::thread([this] {
      int sig = 0;
      if (sigwait(&set_, &sig) != 0 || sig == SIGUSR1) return;
      interrupted_ = sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "SIGTERM";
      client_.shutdown();
      // The main thread sees the closed connection and says so, unless it is stuck writing
      // results that nobody reads (a full pipe, a FIFO): then, after kStuckWriting or at a
      // second signal, this thread says it and exits (nothing is in a temporary file there:
      // pipes and FIFOs are written in place).
      const timespec wait{std::chrono::duration_cast<std::chrono::seconds>(kStuckWriting).count(), 0};
      for (;;) {
        const int again = sigtimedwait(&set_, nullptr, &wait);
        if (again == SIGUSR1) return;
        if (again < 0 && errno == EINTR) continue;
        std::cerr << "sluice: interrupted by " << interrupted_.load()
                  << " while writing results that nobody reads; sluice serve cancels the unit\n";
        std::_Exit(kExitInterrupted);
      }
    });
  }
  ~InterruptWatcher() {
    pthread_kill(thread_.native_handle(), SIGUSR1);
    thread_.join();
  }
  // "SIGINT" once interrupted, else "".
  std::string interrupted() const { return interrupted_ ? interrupted_.load() : ""; }

 private:
  ServeClient& client_;
  sigset_t set_;
  std::atomic<const char*> interrupted_{nullptr};
  std::thread thread_;
};

// The unit's summary, as `sluice run` prints a run's (without the blocked columns, which
// serve does not report per unit), then its failure.
int print_unit(const control::UnitEnded& ended, const std::string& work, const ResultsFile& results,
               std::uint64_t buffers) {
  RunReport report;
  report.wall_seconds = ended.seconds();
  // The payload as submitted (serve sends it cut to its start, with the cut's size): the
  // summary cuts it as `sluice run` does, saying its whole size.
  report.units.push_back(UnitRecord{ended.index(), work, ended.seconds(), ended.finished(), ""});
  for (const control::UnitStream& s : ended.streams()) {
    StreamStats stats;
    stats.label = s.stream();
    stats.buffers = s.buffers();
    stats.bytes = s.bytes();
    report.streams.push_back(stats);
  }
  // Hosts whose final counts never came: the table says its counts are lower bounds.
  report.partial_counts.assign(ended.partial_counts().begin(), ended.partial_counts().end());
  std::cerr << summary_table(report, false);
  std::cerr << "results: " << buffers << " buffers, " << results.bytes() << " bytes"
            << (results.path().empty() ? " (not kept; --results FILE keeps them)"
                : results.path() == "-" ? " written to stdout"
                                        : " written to " + results.path())
            << "\n";
  if (ended.finished()) return kExitOk;
  const control::Failure& f = ended.failure();
  const Failure failure{f.filter(), f.copy(), f.host(), ended.index(), f.stage(), f.message(), f.crash()};
  std::cerr << "sluice: unit " << ended.index() << " failed: " << text::indented_continuations(failure_text(failure))
            << "\n";
  return kExitRunFailed;
}

// Where serve listens, as its --listen takes it (a port alone is on 127.0.0.1), written out
// ("127.0.0.1:7700"); or nothing after saying why: a malformed address is a bad command line
// (status 2), found before anything is tried.
std::optional<std::string> serve_address(const std::string& address) {
  std::string why;
  text::AddressRules rules;
  rules.bare_port_host = "127.0.0.1";
  rules.example = "127.0.0.1:7800";  // serve's default --listen
  if (const std::optional<text::HostPort> parsed = text::parse_host_port(address, rules, &why)) return parsed->text();
  std::cerr << "sluice: " << why << "; give serve's ADDR:PORT, as its --listen says\n";
  return std::nullopt;
}

// --work-file: the payload, read whole (up to one byte past what a submit may carry, so
// that a longer one is told as such), or nothing after printing why.
std::optional<std::string> read_work_file(const std::string& path, std::size_t limit) {
  FILE* file = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    std::cerr << "sluice: cannot read --work-file '" << path << "': " << std::strerror(errno) << "\n";
    return std::nullopt;
  }
  std::string work;
  char chunk[65536];
  std::size_t n = 0;
  while (work.size() <= limit && (n = std::fread(chunk, 1, sizeof chunk, file)) > 0) work.append(chunk, n);
  const int error = std::ferror(file) != 0 ? errno : 0;
  if (file != stdin) std::fclose(file);
  if (error != 0) {
    std::cerr << "sluice: cannot read --work-file '" << path << "': " << std::strerror(error) << "\n";
    return std::nullopt;
  }
  return work;
}

}  // namespace

int submit_command(const SubmitOptions& given) {
  const std::optional<std::string> address = serve_address(given.address);
  if (!address) return kExitUsage;
  SubmitOptions options = given;
  options.address = *address;
  const std::size_t limit = control::kMaxPayload;
  if (!options.work_file.empty()) {
    std::optional<std::string> work = read_work_file(options.work_file, limit);
    if (!work) return kExitUsage;
    options.work = std::move(*work);
  }
  if (options.work.size() > limit) {
    std::cerr << "sluice: "
              << (options.work_file.empty() ? control::payload_too_large("--work", options.work.size())
                                            : "--work-file '" + options.work_file + "' holds more than the " +
                                                  std::to_string(limit) + " bytes a unit's payload may be: pass a "
                                                  "file's path or a key in it instead of its content")
              << "\n";
    return kExitUsage;
  }
  ResultsFile results(options.results_path);
  if (!results.ok()) {
    std::cerr << "sluice: cannot write --results '" << options.results_path << "': " << results.error()
              << "; check the directory exists and is writable\n";
    return kExitUsage;
  }
  const std::optional<Credentials> credentials = load_credentials(options.control);
  if (!credentials) return kExitHostUnavailable;
  ServeClient client(options.address);
  InterruptWatcher interrupt(client);  // before the client's heartbeat thread starts
  const std::string who = "sluice serve at " + options.address;
  if (auto why = client.connect(*credentials, kConnectTimeout)) {
    std::cerr << "sluice: " << who << ": " << *why << "; nothing was submitted\n";
    return kExitHostUnavailable;
  }
  if (const std::string sig = interrupt.interrupted(); !sig.empty()) {
    std::cerr << "sluice: interrupted by " << sig << "; nothing was submitted\n";
    return kExitInterrupted;
  }
  control::Envelope submit;
  submit.mutable_submit()->set_work(options.work);
  if (!client.send(submit)) {
    std::cerr << "sluice: " << who << " closed the connection before the unit was sent; nothing was submitted\n";
    return kExitHostUnavailable;
  }
  std::optional<std::uint64_t> index;
  std::uint64_t buffers = 0;
  const auto unit_name = [&] { return index ? "unit " + std::to_string(*index) : std::string("the unit"); };
  // The unit did not end here: what came of its results is not kept (ResultsFile).
  const auto results_untouched = [&] {
    if (results.replaced_at_commit()) {
      std::cerr << "sluice: --results '" << results.path() << "' is left as it was"
                << (results.bytes() == 0 ? "" : "; the " + std::to_string(results.bytes()) + " bytes that came are not kept")
                << "\n";
    }
  };
  for (;;) {
    control::Envelope m;
    const ServeClient::Status status = client.receive(&m);
    if (status == ServeClient::Status::kMessage) {
      if (m.has_result_chunk()) {
        if (!results.write(m.result_chunk().data())) {
          std::cerr << "sluice: cannot write --results '" << results.path() << "': " << results.error()
                    << "; leaving, so serve cancels " << unit_name()
                    << " if it still runs (it may have finished: its results had arrived, but not its end)\n";
          results_untouched();
          return kExitRunFailed;
        }
        if (!m.result_chunk().more()) ++buffers;
      } else if (m.has_accepted()) {
        index = m.accepted().index();
        std::cerr << "sluice: " << who << " accepted unit " << *index << " " << text::bracketed(options.work, 200)
                  << (m.accepted().ahead() == 0 ? "" : ", behind " + std::to_string(m.accepted().ahead()) + " unit(s)")
                  << "\n";
      } else if (m.has_unit_ended()) {
        if (!results.commit()) {
          std::cerr << "sluice: cannot write --results '" << results.path() << "': " << results.error() << "\n";
          print_unit(m.unit_ended(), options.work, results, buffers);
          return kExitRunFailed;
        }
        return print_unit(m.unit_ended(), options.work, results, buffers);
      } else if (m.has_error()) {
        std::cerr << "sluice: " << who << " turned the unit down: " << m.error().message() << "\n";
        return kExitHostUnavailable;
      } else {
        std::cerr << "sluice: " << who << " sent an unexpected " << control::kind(m)
                  << "; run sluice submit and sluice serve of the same sluice version\n";
        results_untouched();
        return kExitRunFailed;
      }
      continue;
    }
    if (const std::string sig = interrupt.interrupted(); !sig.empty()) {
      std::cerr << "sluice: interrupted by " << sig << "; " << who << " cancels " << unit_name() << "\n";
      results_untouched();
      return kExitInterrupted;
    }
    switch (status) {
      case ServeClient::Status::kSilent:
        std::cerr << "sluice: no word from " << who << " for 3 s; the link is down or it is unresponsive; "
                  << unit_name() << " is cancelled there if it still runs\n";
        break;
      case ServeClient::Status::kClosed:
        std::cerr << "sluice: " << who << " closed the connection before " << unit_name()
                  << " ended; its log says why\n";
        break;
      default:
        std::cerr << "sluice: the connection to " << who << " broke before " << unit_name()
                  << " ended: " << client.error() << "\n";
        break;
    }
    results_untouched();
    return kExitRunFailed;
  }
}

int stop_command(const std::string& given, const ControlOptions& control) {
  const std::optional<std::string> parsed = serve_address(given);
  if (!parsed) return kExitUsage;
  const std::string& address = *parsed;
  const std::optional<Credentials> credentials = load_credentials(control);
  if (!credentials) return kExitHostUnavailable;
  ServeClient client(address);
  const std::string who = "sluice serve at " + address;
  if (auto why = client.connect(*credentials, kConnectTimeout)) {
    std::cerr << "sluice: " << who << ": " << *why << "\n";
    return kExitHostUnavailable;
  }
  control::Envelope stop;
  stop.mutable_stop();
  if (!client.send(stop)) {
    std::cerr << "sluice: " << who << " closed the connection before the stop request was sent\n";
    return kExitHostUnavailable;
  }
  bool heard = false;
  for (;;) {
    control::Envelope m;
    const ServeClient::Status status = client.receive(&m);
    if (status == ServeClient::Status::kMessage && m.has_stopping()) {
      if (m.stopping().stopped()) {
        std::cerr << "sluice: " << who << " stopped\n";
        return kExitOk;
      }
      if (!heard) {
        const std::uint32_t left = m.stopping().units_left();
        std::cerr << "sluice: " << who << " is stopping"
                  << (left == 0 ? "" : "; the " + std::to_string(left) + " unit(s) it accepted end first") << "\n";
      }
      heard = true;
      continue;
    }
    if (status == ServeClient::Status::kMessage) {
      std::cerr << "sluice: " << who << " sent an unexpected " << control::kind(m)
                << "; run sluice stop and sluice serve of the same sluice version\n";
    } else if (status == ServeClient::Status::kSilent) {
      std::cerr << "sluice: no word from " << who << " for 3 s; the link is down or it is unresponsive\n";
    } else {
      std::cerr << "sluice: " << who << " closed the connection before it said it stopped"
                << (status == ServeClient::Status::kError ? ": " + client.error() : std::string()) << "\n";
    }
    return kExitRunFailed;
  }
}

}  // namespace sluice::console
