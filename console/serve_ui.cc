#include "console/serve_ui.h"

#include <utility>

#include "application/core.h"
#include "console/remote.h"

namespace sluice::console {

std::unique_ptr<ServeUi> ServeUi::start(const ServeOptions& options, const topo::Topology& topology,
                                        Application& app) {
  if (options.ui.address.empty()) return nullptr;
  std::unique_ptr<ServeUi> ui(new ServeUi(topology, core_of(app)));
  ui->server_ = start_ui(options.ui, ui->status_);
  return ui;
}

ServeUi::ServeUi(const topo::Topology& topology, std::shared_ptr<AppCore> core)
    : core_(std::move(core)),
      status_(topology, core_->remote() && !topology.hosts.empty() ? place_with_client(topology)
                                                                   : std::map<std::string, Placement>{}) {
  status_.serving();
  core_->set_watcher(this);
  sampler_ = std::make_unique<StatusSampler>(&status_, [core = core_](RunStatus& s) {
    if (std::optional<DeploymentSample> sample = core->sample()) s.sample(std::move(sample->streams), sample->copies, sample->hosts, sample->deployed);
  });
}

ServeUi::~ServeUi() {
  sampler_.reset();
  core_->set_watcher(nullptr);
  server_.reset();
}

void ServeUi::started() { status_.started(); }

void ServeUi::finish_and_linger(int exit_code, double linger_seconds) {
  sampler_.reset();
  RunReport report;
  if (std::optional<DeploymentSample> sample = core_->sample()) report.streams = std::move(sample->streams);
  report.wall_seconds = status_.snapshot().wall_seconds;
  report.exit_code = exit_code;
  status_.finish(report);
  linger(*server_, linger_seconds);
}

void ServeUi::unit_queued(std::uint64_t index, const std::string& work) { status_.unit_queued(index, work); }

void ServeUi::unit_started(std::uint64_t index) { status_.unit_started(index); }

void ServeUi::unit_ended(const UnitReport& report) {
  status_.unit_ended(UnitRecord{report.index, report.work, report.seconds, report.finished, ""});
  if (!report.finished) {
    status_.unit_failed(
        Failure{report.filter, report.copy, report.host, report.index, report.stage, report.message, report.crash});
  }
}

void ServeUi::deployment_broke(const Failure& why) { status_.deployment_lost(why); }

}  // namespace sluice::console
