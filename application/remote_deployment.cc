// A deployment across hosts: what `sluice run` does with hosts: (console/remote_run.cc),
// kept up between units, with this process on the data plane as the client.
#include "application/remote_deployment.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <iostream>

#include "application/client_end.h"
#include "console/connect_hosts.h"
#include "console/exit_codes.h"
#include "console/host_group.h"
#include "console/host_stats.h"
#include "console/launch_app.h"
#include "console/launcher.h"
#include "console/remote.h"
#include "control/auth.h"
#include "sluice/error.h"

namespace sluice {

namespace {

using namespace std::chrono_literals;
using control::Envelope;
namespace fs = std::filesystem;

// The host daemon for a launcher to start: beside this library when installed
// (prefix/lib -> prefix/bin/sluiced), or in the build tree (build/daemons/sluiced).
std::string sluiced_beside_library() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&sluiced_beside_library), &info) == 0 || info.dli_fname == nullptr) return "";
  const fs::path dir = fs::absolute(info.dli_fname).parent_path();
  for (const fs::path& p : {dir.parent_path() / "bin" / "sluiced", dir.parent_path() / "daemons" / "sluiced"}) {
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

// What every deployment of one Application shares: the topology with the hosts' real
// addresses, the credentials, and the launcher that started the daemons (if any), which
// stops them when the Application stops.
struct RemoteShared {
  topo::Topology topology;
  ApplicationOptions options;
  console::ControlOptions control;
  std::unique_ptr<console::Launcher> launcher;
  bool launched = false;
  // Set once the launcher's daemons are gone for good (its Slurm job ended): no deployment
  // can be made again.
  std::optional<std::string> ended;
  // Set when a deployment failed (a unit failed or was cancelled, a host was lost): the
  // launcher keeps the host daemons' logs then and says where, as after a failed sluice run.
  bool failed = false;

  ~RemoteShared() {
    if (launcher) launcher->stop(failed);
  }
};

class RemoteDeployment final : public Deployment {
 public:
  explicit RemoteDeployment(std::shared_ptr<RemoteShared> shared)
      : shared_(std::move(shared)), t_(shared_->topology), run_key_(control::random_bytes(32)) {}

  ~RemoteDeployment() override { release_hosts(); }

  std::optional<Failure> start() override {
    if (shared_->ended) return Failure{"", -1, "", 0, "connect", *shared_->ended + "; the application cannot be deployed again"};
    if (shared_->launcher && !shared_->launched) {
      // Starts a sluiced per logical host and fills in their addresses (t_ is the shared
      // topology) and this run's token. Like an unreachable host daemon, a failure here is
      // the "connect" stage: sluice serve exits 4, as sluice run does.
      const int started = shared_->launcher->start(shared_->topology, shared_->control);
      if (started != console::kExitOk) {
        shared_->failed = true;
        if (started == console::kExitInterrupted) {
          return Failure{"", -1, "", 0, "interrupted", "interrupted while the launcher started the host daemons"};
        }
        return Failure{"", -1, "", 0, "connect", "the launcher could not start the host daemons (see above)"};
      }
      shared_->launched = true;
    }
    std::string why;
    const std::optional<console::Credentials> credentials = console::load_credentials(shared_->control, &why);
    if (!credentials) {
      return Failure{"", -1, "", 0, "connect",
                     "the credentials cannot be used: " + why +
                         " (ApplicationOptions names them: token_file, or cert_file, key_file and ca_file; in Java "
                         "tokenFile, certFile, keyFile, caFile)"};
    }
    std::vector<console::UnreachedHost> unreached;
    std::vector<std::unique_ptr<console::HostClient>> clients = console::connect_all(t_, *credentials, false, &unreached);
    if (clients.empty()) {
      std::string why;
      for (const console::UnreachedHost& u : unreached) why += (why.empty() ? "" : "; ") + u.why;
      // The failure's host, for a program that reads the report: the one host that could
      // not be reached; the message names each when there are several.
      return Failure{"", -1, unreached.size() == 1 ? unreached.front().host : "", 0, "connect",
                     "cannot reach every host daemon: " + why};
    }
    placements_ = console::place_with_client(t_);
    const bool has_client = t_.client_stream() != nullptr;
    const std::string listen =
        shared_->options.client_listen.empty() ? console::any_port_on(clients.front()->local_ip()) : shared_->options.client_listen;
    stats_ = std::make_unique<console::HostStats>(t_, clients.size());
    hosts_ = std::make_unique<console::HostGroup>(std::move(clients), placements_, *stats_);
    hosts_->set_take_signals(false);
    hosts_->start_readers();
    console::LaunchPlan plan;
    plan.topology = &t_;
    plan.placements = &placements_;
    plan.run_key = run_key_;
    plan.encrypt = shared_->options.encrypt;
    console::ConnectClient connect_client;
    if (has_client) {
      try {
        text::PortRange ports;
        if (!shared_->options.data_ports.empty()) ports = *text::parse_port_range(shared_->options.data_ports, nullptr);
        client_ = std::make_unique<ClientEnd>(t_, placements_, listen, run_key_, shared_->options.encrypt, ports);
      } catch (const std::exception& e) {
        failed_ = shared_->failed = true;
        return Failure{"", -1, std::string(topo::kClient), 0, "launch", e.what()};
      }
      plan.extra_peers[std::string(topo::kClient)] = client_->listen_address();
      connect_client = [this](const std::map<std::string, std::string>& peers, const std::function<bool()>& between) {
        client_->connect(peers, 60s, between);
      };
    }
    if (!console::launch_and_wire(*hosts_, plan, connect_client, [this] { tick(0); })) return fail();
    return std::nullopt;
  }

  InputPort* client_port() override { return client_ ? &client_->port() : nullptr; }
  void hand_pools_to(PoolRefuge& refuge) override {
    if (client_) client_->hand_pools_to(&refuge);
  }

  std::optional<Failure> run_unit(std::uint64_t index, const std::string& work) override {
    hosts_->set_unit(index);
    Envelope m;
    m.mutable_start_unit()->set_index(index);
    m.mutable_start_unit()->set_payload(work);
    hosts_->broadcast(m);
    const bool done = hosts_->wait_all(Envelope::kUnitDone, index, std::chrono::hours(24 * 365), [this, index] { tick(index); });
    publish_sample(true);
    if (!done) return fail();
    return std::nullopt;
  }

  void cancel(const std::string& reason) override {
    {
      std::lock_guard<std::mutex> lock(cancel_mu_);
      if (!cancel_reason_.empty()) return;
      cancel_reason_ = reason;
    }
    cancelled_.store(true, std::memory_order_release);
    if (client_) client_->abort();
  }

  std::vector<StreamStats> stream_stats() const override {
    if (!stats_) return {};
    std::vector<StreamStats> streams = stats_->merged();
    if (client_) client_->add_share(streams);
    return streams;
  }
  DeploymentSample sample() const override {
    std::lock_guard<std::mutex> lock(sample_mu_);
    return sample_;
  }
  std::vector<std::string> without_final_counts() const override {
    return hosts_ ? hosts_->without_final_counts() : std::vector<std::string>{};
  }
  bool stuck() const override { return false; }  // stuck copies are the app daemons': they are killed
  std::optional<std::string> cannot_deploy_again() const override { return shared_->ended; }

  std::optional<Failure> keep_alive() override {
    if (!hosts_ || failed_ || released_) return std::nullopt;
    if (cancelled_.load(std::memory_order_acquire)) {
      // Cancelled after its unit's copies were done (while the client read the results):
      // the client's end stays aborted, so this deployment cannot serve another unit.
      std::lock_guard<std::mutex> lock(cancel_mu_);
      hosts_->fail_run(Failure{"", -1, "", 0, "cancelled", cancel_reason_});
      return fail();
    }
    if (client_) {
      if (std::optional<std::string> lost = client_->failure()) {
        hosts_->fail_run(Failure{"", -1, std::string(topo::kClient), 0, "network", *lost});
      }
    }
    const bool alive = hosts_->keep_alive();
    publish_sample(false);  // between units too: report ages grow, late reports show
    if (alive) return std::nullopt;
    return fail();
  }

 private:
  // Between events while the hosts work: a cancel, or a lost connection to the client's
  // producers, fails the unit.
  void tick(std::uint64_t unit) {
    publish_sample(false);
    if (cancelled_.load(std::memory_order_acquire)) {
      std::lock_guard<std::mutex> lock(cancel_mu_);
      hosts_->fail_run(Failure{"", -1, "", unit, "cancelled", cancel_reason_});
    } else if (client_) {
      if (std::optional<std::string> lost = client_->failure()) {
        hosts_->fail_run(Failure{"", -1, std::string(topo::kClient), unit, "network", *lost});
      }
    }
  }

  // Copies what the hosts said last for sample() (HostStats belongs to the runner thread), at
  // most four times a second unless `now`.
  void publish_sample(bool now) {
    const auto at = std::chrono::steady_clock::now();
    if (!now && at - published_ < std::chrono::milliseconds(250)) return;
    published_ = at;
    DeploymentSample s{stream_stats(), stats_->activity(), console::host_traffic(*hosts_, *stats_)};
    std::lock_guard<std::mutex> lock(sample_mu_);
    sample_ = std::move(s);
  }

  Failure fail() {
    failed_ = shared_->failed = true;
    if (client_) client_->abort();  // a reader waiting for results unwinds
    Failure f = hosts_->failure() ? *hosts_->failure() : Failure{"", -1, "", 0, "run", "the hosts failed"};
    if (shared_->launcher && shared_->launched && !shared_->ended) shared_->ended = console::name_the_end(*shared_->launcher, f);
    // This deployment is retired: end its app daemons now, not when the Application stops
    // (a long-lived serve would gain a set per failed unit). Result buffers stay valid.
    release_hosts();
    publish_sample(true);  // the hosts' last word, sent as they were aborted (their counts)
    return f;
  }

  // Ends the app daemons and closes every connection, the client's data connections first.
  void release_hosts() {
    if (client_) client_->stop_network();
    if (hosts_ && !released_) hosts_->teardown(failed_);
    released_ = true;
  }

  const std::shared_ptr<RemoteShared> shared_;
  const topo::Topology& t_;
  const std::string run_key_;
  std::map<std::string, Placement> placements_;
  std::unique_ptr<console::HostStats> stats_;
  std::unique_ptr<console::HostGroup> hosts_;
  std::unique_ptr<ClientEnd> client_;
  bool failed_ = false;
  bool released_ = false;
  std::atomic<bool> cancelled_{false};
  std::mutex cancel_mu_;
  std::chrono::steady_clock::time_point published_;
  mutable std::mutex sample_mu_;  // guards sample_
  DeploymentSample sample_;
  std::string cancel_reason_;
};

}  // namespace

DeploymentFactory remote_deployment_factory(topo::Topology& topology, const ApplicationOptions& options) {
  auto shared = std::make_shared<RemoteShared>();
  if (!options.hosts.empty()) {
    // Named as the program set it (the same check as sluice run's --hosts).
    if (std::string problem = console::hosts_option_problem(options.hosts); !problem.empty()) {
      throw Error("ApplicationOptions hosts: " + problem);
    }
    console::apply_hosts_option(topology, options.hosts);
  }
  const bool certificates = !options.cert_file.empty() || !options.key_file.empty() || !options.ca_file.empty();
  if (certificates && (options.cert_file.empty() || options.key_file.empty() || options.ca_file.empty())) {
    throw Error("certificates need all three of cert_file, key_file and ca_file");
  }
  if (!options.launcher.empty() && (certificates || !options.token_file.empty())) {
    throw Error("a launcher makes the run's own token: leave token_file and the certificates out");
  }
  if (!options.launcher.empty()) {
    console::LauncherOptions launch;
    launch.launcher = options.launcher;
    launch.partition = options.partition;
    launch.time = options.time;
    launch.account = options.account;
    launch.nodes = options.nodes;
    launch.sluiced = sluiced_beside_library();
    launch.data_ports = options.data_ports;  // the same range for the daemons it starts
    shared->launcher = console::make_launcher(launch);
  } else if (topology.hosts.empty()) {
    throw Error("no hosts: give the topology hosts:, or ApplicationOptions::hosts");
  }
  for (const topo::FilterSpec& f : topology.filters) {
    // The app daemons cannot see this program's classes; left to them, the refusal read
    // "this program has no filter class", about a program that has it.
    if (f.lang != topo::Lang::kCpp || !f.library.empty()) continue;
    throw Error(topo::Diagnostic{topology.file, f.mark,
                                 "filter '" + f.name + "' has no library:, and across hosts each host's app daemon loads "
                                 "a C++ filter's class '" + f.class_name + "' from a shared library (classes compiled "
                                 "into this program run only embedded): build it into one (add_library(NAME SHARED "
                                 "...) with SLUICE_FILTER(" + f.class_name + ")) and name it with library: in the filter"}
                    .str());
  }
  shared->options = options;
  shared->control.token_file = options.token_file;
  shared->control.cert_file = options.cert_file;
  shared->control.key_file = options.key_file;
  shared->control.ca_file = options.ca_file;
  shared->topology = topology;
  return [shared](const topo::Topology&) -> std::unique_ptr<Deployment> { return std::make_unique<RemoteDeployment>(shared); };
}

}  // namespace sluice
