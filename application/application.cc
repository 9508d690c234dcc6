// The public Application and Unit (sluice/application.h): thin handles on AppCore.
#include "sluice/application.h"

#include <iomanip>
#include <sstream>

#include "application/core.h"
#include "application/embedded_deployment.h"
#include "application/remote_deployment.h"
#include "log/backend.h"
#include "text/port_range.h"
#include "text/shortened.h"

namespace sluice {

std::string UnitReport::str() const {
  std::ostringstream out;
  // The payload as sluice run and serve show it: its first 200 bytes (it may be 16 MiB).
  out << "unit " << index << " " << text::bracketed(work, 200) << " ";
  if (finished) {
    out << "finished in " << std::fixed << std::setprecision(3) << seconds << " s";
  } else {
    Failure f{filter, copy, host, index, stage, message};
    out << "failed: " << f.str();
  }
  return out.str();
}

Unit::Unit(std::shared_ptr<State> state) : state_(std::move(state)) {}
Unit::Unit(Unit&&) noexcept = default;
Unit& Unit::operator=(Unit&& other) noexcept {
  if (this != &other) {
    let_go();
    state_ = std::move(other.state_);
  }
  return *this;
}
Unit::~Unit() { let_go(); }

void Unit::let_go() noexcept {
  if (!state_) return;
  try {
    state_->core->orphan(state_);
  } catch (...) {
    // No thread for the drainer: read and drop them here, as wait() does.
    try {
      (void)wait();
    } catch (...) {
    }
  }
  state_.reset();
}

InputStream& Unit::results() {
  if (!state_) throw Error("results() on a moved-from Unit");
  return state_->results;
}

UnitReport Unit::wait() {
  if (!state_) throw Error("wait() on a moved-from Unit");
  UnitResults::discard_rest(*state_, UnitResults::Reader::kWaiter);
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->changed.wait(lock, [&] { return state_->phase == State::Phase::kEnded; });
  return *state_->report;
}

void Unit::cancel() {
  if (state_) state_->core->cancel(*state_);
}

std::uint64_t Unit::index() const {
  if (!state_) throw Error("index() on a moved-from Unit");  // 0 would pass for a unit's
  return state_->index;
}

struct Application::State {
  std::shared_ptr<AppCore> core;
};

namespace {

std::shared_ptr<AppCore> make_core(topo::Topology topology, const ApplicationOptions& options) {
  // Refused embedded too, where certificates have no use: the same options may deploy
  // across hosts tomorrow, and half a set is a mistake either way.
  const int certificates = !options.cert_file.empty() + !options.key_file.empty() + !options.ca_file.empty();
  if (certificates != 0 && certificates != 3) {
    throw Error("certificates need all three of cert_file, key_file and ca_file");
  }
  std::string problem;
  if (!options.data_ports.empty() && !text::parse_port_range(options.data_ports, &problem)) {
    throw Error("data_ports: " + problem);
  }
  const bool remote = !topology.hosts.empty() || !options.hosts.empty() || !options.launcher.empty();
  DeploymentFactory factory;
  if (remote) {
    factory = remote_deployment_factory(topology, options);
  } else {
    factory = [](const topo::Topology& t) { return std::make_unique<EmbeddedDeployment>(t); };
  }
  auto core = std::make_shared<AppCore>(std::move(topology), std::move(factory), remote);
  if (!options.log_to_stderr) core->mute_stderr();
  if (core->topology().work_given) {
    // The same file often serves sluice run too: said, not refused.
    logging::process_line(LogLevel::kInfo, core->topology().file + ": the topology's work: (" +
                                               std::to_string(core->topology().work.size()) +
                                               " unit(s)) is not run: only submitted units run (Application::submit, or "
                                               "sluice submit to a sluice serve)");
  }
  return core;
}

}  // namespace

Application::Application(std::unique_ptr<State> state) : state_(std::move(state)) {}
Application::Application(Application&&) noexcept = default;
Application& Application::operator=(Application&& other) noexcept {
  if (this != &other) {
    abort();
    state_ = std::move(other.state_);
  }
  return *this;
}
// Not stop(): a program that destroys its Application while it still holds unread units
// would wait for itself. What is still queued or running is cancelled instead.
Application::~Application() { abort(); }

Application Application::open(const std::string& topology_path, ApplicationOptions options) {
  auto state = std::make_unique<State>();
  state->core = make_core(topo::parse_topology_file(topology_path), options);
  return Application(std::move(state));
}

Application Application::from_text(std::string_view yaml, const std::string& name, const std::string& base_dir,
                                   ApplicationOptions options) {
  auto state = std::make_unique<State>();
  state->core = make_core(topo::parse_topology_text(yaml, name, base_dir), options);
  return Application(std::move(state));
}

void Application::start() {
  if (!state_) throw Error("start() on a moved-from Application");
  state_->core->start();
}

Unit Application::submit(std::string payload) {
  if (!state_) throw Error("submit() on a moved-from Application");
  return Unit(state_->core->submit(std::move(payload)));
}

void Application::stop() {
  if (!state_) return;
  state_->core->discard_unread("the application was stopped; the results of this unit that had not been read were "
                               "discarded");
  state_->core->stop(false);
}

void Application::abort() {
  if (state_) state_->core->stop(true);
}

std::shared_ptr<AppCore> core_of(const Application& app) { return app.state_ ? app.state_->core : nullptr; }

const std::string& Application::name() const {
  if (!state_) throw Error("name() on a moved-from Application");
  return state_->core->topology().name;
}
bool Application::remote() const {
  if (!state_) throw Error("remote() on a moved-from Application");
  return state_->core->remote();
}
std::uint64_t Application::units_ended() const {
  if (!state_) throw Error("units_ended() on a moved-from Application");
  return state_->core->units_ended();
}

}  // namespace sluice
