#include "console/slurm_launcher.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "console/exit_codes.h"
#include "console/launched_now.h"
#include "console/slurm_messages.h"
#include "control/auth.h"
#include "sluice/error.h"
#include "text/address.h"

namespace sluice::console {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto kReadyTimeout = 120s;   // srun to a listening sluiced, every node
constexpr auto kStepsEnd = 5s;         // SIGUSR2 to every step gone, before scancel
constexpr auto kFinalStateWait = 5s;   // a job in COMPLETING to its final state (CANCELLED...)
constexpr auto kAskTimeout = 3s;       // one scontrol after a failure (slurmctld may be the problem)
constexpr auto kReleaseTimeout = 30s;  // scancel to the job gone from squeue
constexpr auto kStepLineWait = 500ms;   // slurmstepd's line in a step's log, behind the failure it caused

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") + 1 - b);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The end of a file, at most `bytes` of it (a step's log grows with its filters' output).
std::string read_end(const std::string& path, std::streamoff bytes = 64 * 1024) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff size = in.tellg();
  in.seekg(size > bytes ? size - bytes : 0);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The last `n` lines of a log, indented, for an error message.
std::string tail(const std::string& path, std::size_t n = 8) {
  std::vector<std::string> all = lines(read_all(path));
  std::string out;
  for (std::size_t i = all.size() > n ? all.size() - n : 0; i < all.size(); ++i) out += "\n  | " + all[i];
  return out;
}

// A failed Slurm command, as a sentence.
std::string command_problem(const std::string& what, const CommandOutput& r) {
  if (r.status == 127 || r.status == -1) {
    return what + ": the Slurm client commands are not installed or not in PATH (Debian: apt-get install slurm-client)";
  }
  return what + " failed (status " + std::to_string(r.status) + "): " + trim(r.err.empty() ? r.out : r.err);
}

}  // namespace

SlurmLauncher::SlurmLauncher(LauncherOptions options) : options_(std::move(options)) {}

SlurmLauncher::~SlurmLauncher() { stop(true); }

std::vector<std::string> SlurmLauncher::logical_hosts(const topo::Topology& t, const std::vector<Node>* nodes) const {
  std::vector<std::string> hosts;
  for (const topo::HostSpec& h : t.hosts) hosts.push_back(h.name);
  if (hosts.empty() && nodes != nullptr) {
    for (const Node& n : *nodes) hosts.push_back(n.name);
  }
  return hosts;
}

std::vector<SlurmLauncher::Node> SlurmLauncher::job_nodes(const std::string& nodelist) const {
  const CommandOutput names = run_and_capture({"scontrol", "show", "hostnames", nodelist});
  if (!names.ok()) throw Error(command_problem("scontrol show hostnames " + nodelist, names));
  std::vector<Node> nodes;
  static const std::regex addr_re(R"((?:^|\s)NodeAddr=(\S+))");
  for (const std::string& name : lines(names.out)) {
    const CommandOutput info = run_and_capture({"scontrol", "show", "node", "-o", name});
    std::smatch m;
    if (!info.ok() || !std::regex_search(info.out, m, addr_re)) {
      throw Error(command_problem("scontrol show node " + name, info));
    }
    nodes.push_back(Node{name, m[1]});
  }
  return nodes;
}

bool SlurmLauncher::inside_allocation(std::string* job, std::string* nodelist) {
  const char* id = std::getenv("SLURM_JOB_ID");
  if (id == nullptr || *id == '\0') return false;
  const char* list = std::getenv("SLURM_JOB_NODELIST");
  if (list == nullptr || *list == '\0') {
    throw Error("SLURM_JOB_ID is set but SLURM_JOB_NODELIST is not; run inside sbatch or salloc, or unset SLURM_JOB_ID");
  }
  *job = id;
  *nodelist = list;
  return true;
}

int SlurmLauncher::nodes_to_ask_for(std::size_t hosts) const {
  const int count = options_.nodes > 0 ? options_.nodes : std::max<int>(1, static_cast<int>(hosts));
  if (count < static_cast<int>(hosts)) {
    throw Error("--nodes " + std::to_string(count) + " is fewer than the topology's " + std::to_string(hosts) +
                " logical hosts; leave --nodes out or give at least " + std::to_string(hosts));
  }
  return count;
}

void SlurmLauncher::check_enough(const std::string& job, std::size_t nodes, std::size_t hosts) {
  if (hosts > nodes) {
    throw Error("Slurm job " + job + " has " + std::to_string(nodes) + " node(s), the topology has " +
                std::to_string(hosts) + " logical hosts; ask for one node per logical host (sbatch --nodes " +
                std::to_string(hosts) + ")");
  }
}

std::string SlurmLauncher::unused_inside(const std::string& job) const {
  std::vector<std::string> given;
  if (!options_.partition.empty()) given.push_back("--partition");
  if (!options_.time.empty()) given.push_back("--time");
  if (!options_.account.empty()) given.push_back("--account");
  if (options_.nodes > 0) given.push_back("--nodes");
  if (given.empty()) return "";
  std::string names;
  for (std::size_t i = 0; i < given.size(); ++i) {
    names += (i == 0 ? "" : i + 1 == given.size() ? " and " : ", ") + given[i];
  }
  return "sluice: slurm: warning: inside job " + job + ", " + names + (given.size() == 1 ? " does" : " do") +
         " not apply: the job's own settings hold (leave " + (given.size() == 1 ? "it" : "them") +
         " out, or run outside sbatch/salloc for the console to ask for an allocation)\n";
}

std::string SlurmLauncher::plan(const topo::Topology& t) {
  std::string out;
  std::string job, list;
  if (inside_allocation(&job, &list)) {
    std::cerr << unused_inside(job);
    const std::vector<Node> nodes = job_nodes(list);
    const std::vector<std::string> hosts = logical_hosts(t, &nodes);
    check_enough(job, nodes.size(), hosts.size());
    out += "slurm: in job " + job + " (" + std::to_string(nodes.size()) + " nodes)\n";
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      out += "  " + hosts[i] + " -> " + nodes[i].name + " (" + nodes[i].address + ")\n";
    }
    return out;
  }
  const std::vector<std::string> hosts = logical_hosts(t, nullptr);
  const int count = nodes_to_ask_for(hosts.size());
  // Slurm's own check of the request (partition, time, account, node count), with no job made.
  // (salloc has no --test-only; sbatch's checks the same request.)
  std::vector<std::string> test = {"sbatch", "--test-only", "--wrap", "true", "--nodes", std::to_string(count)};
  if (!options_.partition.empty()) test.insert(test.end(), {"--partition", options_.partition});
  if (!options_.time.empty()) test.insert(test.end(), {"--time", options_.time});
  if (!options_.account.empty()) test.insert(test.end(), {"--account", options_.account});
  const CommandOutput r = run_and_capture(test);
  if (!r.ok()) throw Error("Slurm would refuse what a run asks for: " + command_problem("sbatch --test-only", r));
  out += "slurm: not in an allocation; a run asks for one with salloc --nodes " + std::to_string(count);
  if (!options_.partition.empty()) out += " --partition " + options_.partition;
  if (!options_.time.empty()) out += " --time " + options_.time;
  if (!options_.account.empty()) out += " --account " + options_.account;
  out += " and releases it at the end\n";
  const std::vector<std::string> answer = lines(trim(r.err.empty() ? r.out : r.err));
  if (!answer.empty()) out += "  Slurm's estimate: " + trim(answer.front()) + "\n";
  if (hosts.empty()) {
    out += "  every node gets a logical host named after it; copies are dealt round-robin over them\n";
  }
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    out += "  " + hosts[i] + " -> node " + std::to_string(i + 1) + " of the allocation\n";
  }
  return out;
}

std::string SlurmLauncher::sluiced_path() const {
  if (!options_.sluiced.empty()) return fs::absolute(options_.sluiced).string();
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& p : {self.parent_path() / "sluiced", self.parent_path().parent_path() / "daemons" / "sluiced"}) {
      if (::access(p.c_str(), X_OK) == 0) return p.string();
    }
  }
  throw Error("cannot find sluiced next to the console; install it beside sluice or pass --sluiced PATH "
              "(a path every node can run)");
}

void SlurmLauncher::make_run_dir() {
  run_id_ = control::random_hex(4);
  if (options_.run_dir.empty()) {
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home == '\0') throw Error("HOME is not set; pass --run-dir DIR (on a filesystem every node sees)");
    run_dir_ = std::string(home) + "/.cache/sluice/runs/" + run_id_;
    own_run_dir_ = true;
  } else {
    run_dir_ = fs::absolute(options_.run_dir).string();
  }
  std::error_code ec;
  const bool existed = fs::exists(run_dir_, ec);
  fs::create_directories(run_dir_, ec);
  if (ec) throw Error("--run-dir: cannot create '" + run_dir_ + "': " + ec.message());
  // A directory this run makes holds its daemons' logs (filter lines, payloads): the user's
  // alone, as the default one. One that was there keeps the mode its owner gave it.
  if (own_run_dir_ || !existed) ::chmod(run_dir_.c_str(), 0700);
  // The token: only this run knows it; readable by the user alone.
  token_file_ = run_dir_ + "/token-" + run_id_;
  // Created exclusively (never through a file or symlink someone put there first), 0600.
  const int fd = ::open(token_file_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  const std::string token = control::random_hex(32) + "\n";
  const bool written = fd >= 0 && ::write(fd, token.data(), token.size()) == static_cast<ssize_t>(token.size());
  const std::string why = std::strerror(errno);
  if (fd >= 0) ::close(fd);
  if (!written) throw Error("cannot write the run's token to '" + token_file_ + "': " + why);
}

namespace {

// For a pending job's reason (squeue %r) that waiting cannot cure, under the default
// EnforcePartLimits=NO (Slurm queues a request over a partition's or an association's limits
// instead of refusing it): what it means. Null for the others (Resources, Priority...).
const char* never_grantable(const std::string& reason) {
  static const std::map<std::string, const char*> kNever = {
      {"PartitionNodeLimit", "more nodes than the partition allows a job, or than it has"},
      {"PartitionTimeLimit", "a --time over the partition's limit"},
      {"PartitionConfig", "the request does not fit the partition's limits (nodes, time)"},
      {"AccountNotAllowed", "the account may not use the partition"},
      {"QOSMaxNodePerJobLimit", "more nodes than the QOS allows a job"},
      {"QOSMaxWallDurationPerJobLimit", "a --time over the QOS's limit"},
      {"AssocMaxNodesPerJobLimit", "more nodes than the association allows a job"},
      {"AssocMaxWallDurationPerJobLimit", "a --time over the association's limit"},
      {"BadConstraints", "constraints no node meets"},
      {"InvalidAccount", "an invalid account"},
      {"InvalidQOS", "an invalid QOS"},
  };
  const auto it = kNever.find(reason);
  return it == kNever.end() ? nullptr : it->second;
}

}  // namespace

bool SlurmLauncher::allocate(int count, const std::string& name, bool* interrupted) {
  std::vector<std::string> argv = {"salloc", "--no-shell", "--nodes", std::to_string(count), "--job-name",
                                   "sluice-" + name};
  if (!options_.partition.empty()) argv.insert(argv.end(), {"--partition", options_.partition});
  if (!options_.time.empty()) argv.insert(argv.end(), {"--time", options_.time});
  if (!options_.account.empty()) argv.insert(argv.end(), {"--account", options_.account});
  const std::string log = run_dir_ + "/salloc-" + run_id_ + ".log";
  Child salloc(argv, log, log);
  wrote_logs_ = true;
  static const std::regex job_re(R"((?:Granted|Pending) job allocation (\d+))");
  bool told = false;
  std::string told_reason;
  Clock::time_point next_look = Clock::now();
  for (;;) {
    const bool running = salloc.running();
    const std::string text = read_all(log);
    std::smatch m;
    if (job_id_.empty() && std::regex_search(text, m, job_re)) {
      job_id_ = m[1];
      own_allocation_ = true;  // from here on, stop() releases it
      publish();
    }
    if (!running) {
      if (salloc.exit_status() == 0 && text.find("Granted job allocation") != std::string::npos && !job_id_.empty()) {
        return true;
      }
      if (salloc.exit_status() == 127 && text.find("cannot execute the command") != std::string::npos) {
        // The child could not exec salloc (subprocess.cc).
        std::cerr << "sluice: slurm: " << command_problem("salloc", CommandOutput{127, "", ""}) << "\n";
        return false;
      }
      const std::optional<std::string> hint = slurm_error_hint(text);
      std::cerr << "sluice: slurm: salloc " << salloc.how_it_ended() << " without an allocation of " << count
                << " node(s):" << tail(log) << "\n("
                << hint.value_or("check --partition, --time and --account, and sinfo") << ")\n";
      return false;
    }
    if (const int sig = take_interrupt()) {
      std::cerr << "sluice: interrupted by " << signal_name(sig) << " while waiting for a Slurm allocation\n";
      salloc.signal(SIGINT);  // salloc withdraws a pending request
      salloc.wait_for(5s);
      *interrupted = true;
      return false;
    }
    if (!job_id_.empty() && text.find("Pending") != std::string::npos && Clock::now() >= next_look) {
      // Why it waits, said when it changes; a reason that no wait can cure ends the wait.
      next_look = Clock::now() + 1s;
      const std::string reason = trim(run_and_capture({"squeue", "-h", "-j", job_id_, "-o", "%r"}, kAskTimeout).out);
      if (const char* never = never_grantable(reason)) {
        std::cerr << "sluice: slurm: job " << job_id_ << " can never start: Slurm says " << reason << " (" << never
                  << ")\n(it asked for " << count << " node(s), "
                  << (options_.nodes > 0 ? std::string("as --nodes says") : std::string("one per logical host of the topology"))
                  << "; check that, --partition, --time and --account against sinfo and scontrol show partition)\n";
        salloc.signal(SIGINT);  // salloc withdraws the request
        salloc.wait_for(5s);
        return false;
      }
      if (!told || reason != told_reason) {
        std::cerr << "sluice: slurm: job " << job_id_ << " is waiting for " << count << " node(s)"
                  << (reason.empty() ? "" : " (Slurm's reason: " + reason + ")") << "\n";
        told = true;
        told_reason = reason;
      }
    }
    std::this_thread::sleep_for(50ms);
  }
}

int SlurmLauncher::start(topo::Topology& t, ControlOptions& control) {
  bool interrupted = false;
  std::string nodelist;
  bool in_allocation = false;
  int count = 0;
  try {
    in_allocation = inside_allocation(&job_id_, &nodelist);
    if (in_allocation) std::cerr << unused_inside(job_id_);
  } catch (const std::exception& e) {
    std::cerr << "sluice: slurm: " << e.what() << "\n";
    return kExitHostUnavailable;
  }
  try {
    // --nodes below the logical hosts cannot work: a bad command line (status 2), said
    // before anything is made, not a Slurm that refused (4).
    if (!in_allocation) count = nodes_to_ask_for(logical_hosts(t, nullptr).size());
  } catch (const std::exception& e) {
    std::cerr << "sluice: slurm: " << e.what() << "\n";
    return kExitUsage;
  }
  try {
    make_run_dir();
    const std::string sluiced = sluiced_path();
    if (!in_allocation) {
      if (!allocate(count, t.name, &interrupted)) return interrupted ? kExitInterrupted : kExitHostUnavailable;
      const CommandOutput r = run_and_capture({"squeue", "-h", "-j", job_id_, "-o", "%N"});
      if (!r.ok() || trim(r.out).empty()) throw Error(command_problem("squeue -j " + job_id_, r));
      nodelist = trim(r.out);
    }
    const std::vector<Node> nodes = job_nodes(nodelist);
    const std::vector<std::string> hosts = logical_hosts(t, &nodes);
    check_enough(job_id_, nodes.size(), hosts.size());
    if (t.hosts.empty()) {
      for (const std::string& h : hosts) t.hosts.push_back(topo::HostSpec{h, "", {}});
    }
    std::string mapping;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      Step s;
      s.host = hosts[i];
      s.node = nodes[i];
      s.ready_file = run_dir_ + "/ready-" + run_id_ + "-" + s.host;
      s.log_file = run_dir_ + "/sluiced-" + run_id_ + "-" + s.host + ".log";  // runs may share a --run-dir
      std::error_code ec;
      fs::remove(s.ready_file, ec);
      const std::string listen = text::host_port_text(s.node.address, 0);
      std::vector<std::string> command{"srun", "--jobid", job_id_, "--nodes", "1", "--ntasks", "1", "--nodelist",
                                       s.node.name, "--overlap", "--job-name", "sluiced-" + run_id_ + "-" + s.host,
                                       "--unbuffered", sluiced, "--listen", listen, "--token-file", token_file_,
                                       "--ready-file", s.ready_file};
      if (!options_.data_ports.empty()) command.insert(command.end(), {"--data-ports", options_.data_ports});
      s.srun = std::make_unique<Child>(std::move(command), s.log_file, s.log_file);
      wrote_logs_ = true;
      steps_.push_back(std::move(s));
    }
    publish();
    if (!wait_ready(&interrupted)) return interrupted ? kExitInterrupted : kExitHostUnavailable;
    for (Step& s : steps_) {
      for (topo::HostSpec& h : t.hosts) {
        if (h.name == s.host) h.address = s.listening;
      }
      mapping += (mapping.empty() ? "" : ", ") + s.host + " -> " + s.node.name + " (" + s.listening + ")";
    }
    std::cerr << "sluice: slurm job " << job_id_ << ": " << mapping << "\n";
  } catch (const std::exception& e) {
    std::cerr << "sluice: slurm: " << e.what() << "\n";
    return kExitHostUnavailable;
  }
  control = ControlOptions{};
  control.token_file = token_file_;
  return kExitOk;
}

bool SlurmLauncher::wait_ready(bool* interrupted) {
  const auto deadline = Clock::now() + kReadyTimeout;
  for (;;) {
    bool all = true;
    for (Step& s : steps_) {
      if (!s.listening.empty()) continue;
      const std::string address = trim(read_all(s.ready_file));
      if (!address.empty()) {
        s.listening = address;
        continue;
      }
      all = false;
      if (!s.srun->running()) {
        const std::optional<std::string> hint = slurm_error_hint(read_end(s.log_file));
        std::cerr << "sluice: slurm: the step for host " << s.host << " on node " << s.node.name << " (srun) "
                  << s.srun->how_it_ended() << " before sluiced was listening:" << tail(s.log_file) << "\n("
                  << hint.value_or("sluiced, its libraries and the run directory " + run_dir_ +
                                   " must be reachable at the same paths on every node; see docs/slurm.md")
                  << ")\n";
        return false;
      }
    }
    if (all) return true;
    if (const int sig = take_interrupt()) {
      std::cerr << "sluice: interrupted by " << signal_name(sig) << " while starting the host daemons\n";
      *interrupted = true;
      return false;
    }
    if (Clock::now() > deadline) {
      std::string missing;
      for (const Step& s : steps_) {
        if (s.listening.empty()) missing += " " + s.host + " (" + s.node.name + ")";
      }
      std::cerr << "sluice: slurm: no sluiced ready within " << kReadyTimeout.count() << " s on:" << missing
                << "; is the run directory " << run_dir_ << " shared with the nodes? (docs/slurm.md)\n";
      return false;
    }
    std::this_thread::sleep_for(20ms);
  }
}

std::string SlurmLauncher::where(const std::string& host) const {
  for (const Step& s : steps_) {
    if (s.host == host) return "Slurm node " + s.node.name + ", job " + job_id_;
  }
  return "";
}

namespace {

// The value of `key`= in scontrol's one-line output ("" when absent).
std::string scontrol_field(const std::string& line, const std::string& key) {
  const std::regex re("(?:^| )" + key + "=(\\S*)");
  std::smatch m;
  return std::regex_search(line, m, re) ? m[1].str() : "";
}

}  // namespace

std::optional<std::string> SlurmLauncher::ended() {
  if (job_id_.empty()) return std::nullopt;
  // scontrol keeps an ended job for MinJobAge (300 s by default); squeue forgets it sooner.
  // A job being ended shows COMPLETING first, for up to seconds: its final state (CANCELLED,
  // TIMEOUT...) is what says why, so wait for it a little, in a job of our own. Not inside
  // one (sbatch): the console is then part of the job being ended, and Slurm kills it
  // KillWait seconds (5 in many configurations) after its SIGTERM, before it said anything.
  CommandOutput r;
  std::string line;
  std::string state;
  const auto wait = own_allocation_ ? kFinalStateWait : 0s;
  for (const auto deadline = Clock::now() + wait;;) {
    r = run_and_capture({"scontrol", "--oneliner", "show", "job", job_id_}, kAskTimeout);
    line = trim(r.out);
    state = scontrol_field(line, "JobState");
    if (state != "COMPLETING" || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(200ms);
  }
  if (!r.ok() || state.empty()) {
    // Unknown to Slurm by now (long gone), or Slurm itself not answering.
    const std::string why = trim(r.err).empty() ? trim(r.out) : trim(r.err);
    if (why.find("Invalid job id") != std::string::npos) return "Slurm job " + job_id_ + " has ended (Slurm no longer knows it)";
    return std::nullopt;
  }
  const std::string reason = scontrol_field(line, "Reason");
  const auto state_line = [&](const std::string& meaning) {
    return "Slurm job " + job_id_ + " ended: " + state + (meaning.empty() ? "" : ", " + meaning) +
           (reason.empty() || reason == "None" ? "" : " (reason: " + reason + ")");
  };
  // Slurm's own line in a step's output says why it ended the step or the job (scancel, the
  // time limit), where the state does not (yet): under sbatch the console's own job may
  // still read RUNNING, or COMPLETING. The line may trail the failure it caused by a moment.
  const auto step_line = [&]() -> std::optional<std::string> {
    for (const auto deadline = Clock::now() + kStepLineWait;;) {
      for (const Step& s : steps_) {
        if (auto why = slurmstepd_ending(read_end(s.log_file))) {
          return *why + " (the host daemon's step for host " + s.host + "); see " + s.log_file;
        }
      }
      if (Clock::now() > deadline) return std::nullopt;
      std::this_thread::sleep_for(50ms);
    }
  };
  if (state == "COMPLETING") {
    // Being ended, its final state not known yet: the reason, or a step's line, says why.
    if (reason == "TimeLimit") return state_line(job_state_meaning("TIMEOUT"));
    if (auto why = step_line()) return "Slurm job " + job_id_ + " is ending: " + *why;
    return state_line(job_state_meaning(state));
  }
  if (state != "RUNNING" && state != "CONFIGURING" && state != "SUSPENDED" && state != "PENDING") {
    return state_line(job_state_meaning(state));
  }
  if (auto why = step_line()) return why;
  // The job runs, but a daemon's step ended: it is not started again.
  for (Step& s : steps_) {
    if (s.srun && !s.listening.empty() && !s.srun->running()) {
      return "the host daemon's step for host " + s.host + " on Slurm node " + s.node.name + " (job " + job_id_ +
             ") ended: srun " + s.srun->how_it_ended() + "; see " + s.log_file;
    }
  }
  return std::nullopt;
}

void SlurmLauncher::end_steps() {
  for (Step& s : steps_) {
    // srun passes SIGUSR2 on to sluiced, which stops and exits 0: the step completes. (srun
    // answers SIGTERM by killing the step, which Slurm logs as CANCELLED, even after a good run.)
    if (s.srun && s.srun->running()) s.srun->signal(SIGUSR2);
  }
  const auto deadline = Clock::now() + kStepsEnd;
  auto any_running = [&] {
    for (Step& s : steps_) {
      if (s.srun && s.srun->running()) return true;
    }
    return false;
  };
  while (any_running() && Clock::now() < deadline) std::this_thread::sleep_for(20ms);
  if (!any_running()) return;
  // Still there: cancel those steps by name, then drop their sruns.
  const CommandOutput r = run_and_capture({"squeue", "-h", "--steps", "-j", job_id_, "-o", "%i %j"});
  for (const std::string& line : lines(r.out)) {
    std::stringstream ss(line);
    std::string id, name;
    ss >> id >> name;
    if (name.rfind("sluiced-" + run_id_ + "-", 0) == 0) run_and_capture({"scancel", id});
  }
  for (Step& s : steps_) {
    if (s.srun && !s.srun->wait_for(kStepsEnd)) s.srun.reset();  // the destructor kills it
  }
}

void SlurmLauncher::release_allocation() {
  const CommandOutput r = run_and_capture({"scancel", job_id_});
  if (!r.ok()) {
    // The allocation outlives the console then, holding its nodes (with no time limit unless
    // --time or the partition gave it one): say so, and how to end it.
    std::cerr << "sluice: warning: " << command_problem("scancel " + job_id_, r) << "\nsluice: warning: Slurm job "
              << job_id_ << ", the allocation this run asked for, may still hold its nodes; once Slurm answers, "
              << "release it with: scancel " << job_id_ << " (squeue -j " << job_id_ << " shows it)\n";
    return;
  }
  const auto deadline = Clock::now() + kReleaseTimeout;
  while (Clock::now() < deadline) {
    const CommandOutput q = run_and_capture({"squeue", "-h", "-j", job_id_, "-o", "%T"});
    if (!q.ok() || trim(q.out).empty()) return;  // squeue no longer knows it, or shows nothing
    std::this_thread::sleep_for(100ms);
  }
  std::cerr << "sluice: warning: Slurm job " << job_id_ << " is still in squeue " << kReleaseTimeout.count()
            << " s after scancel; check with squeue -j " << job_id_ << "\n";
}

void SlurmLauncher::publish() {
  Launched held;
  for (const Step& s : steps_) {
    if (s.srun) held.sruns.push_back(s.srun->pid());
  }
  if (own_allocation_) held.allocation = job_id_;
  held.token_file = token_file_;
  publish_launched(this, std::move(held));
}

void SlurmLauncher::stop(bool failed) {
  if (stopped_) return;
  stopped_ = true;
  for (Step& s : steps_) {
    if (s.srun && !s.listening.empty() && !s.srun->running()) {
      const std::optional<std::string> why = slurmstepd_ending(read_end(s.log_file));
      std::cerr << "sluice: slurm: the host daemon's step for host " << s.host << " on node " << s.node.name
                << " ended during the run (srun " << s.srun->how_it_ended() << (why ? "; " + *why : "") << ")\n";
    }
  }
  // The run's secret first: under sbatch, Slurm may kill the console any moment now.
  std::error_code ec;
  if (!token_file_.empty()) fs::remove(token_file_, ec);
  for (const Step& s : steps_) fs::remove(s.ready_file, ec);
  end_steps();
  if (own_allocation_ && !job_id_.empty()) release_allocation();
  publish_launched(this, {});  // ended, all of it
  if (run_dir_.empty()) return;
  if (own_run_dir_ && !failed) {
    fs::remove_all(run_dir_, ec);
  } else if (failed && !steps_.empty()) {
    std::cerr << "sluice: slurm: the host daemons' logs are in " << run_dir_ << "/sluiced-" << run_id_ << "-HOST.log\n";
  } else if (failed && wrote_logs_) {
    // No daemon ran: only salloc's answer is there (its last lines were printed already).
    std::cerr << "sluice: slurm: Slurm's answer is in " << run_dir_ << "/salloc-" << run_id_ << ".log\n";
  } else if (own_run_dir_ && fs::is_empty(run_dir_, ec)) {
    fs::remove(run_dir_, ec);  // refused before anything was written there (too few nodes)
  }
}

}  // namespace sluice::console
