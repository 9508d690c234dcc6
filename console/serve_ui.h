// ServeUi: `sluice serve --ui`: the live view of `sluice run --ui` (ui_server.h) over a
// deployed application. Its RunStatus learns of each unit from the Application's runner
// (application/watch.h) as clients submit them, and samples the streams' counters and the
// copies' activity four times a second (status_sampler.h). A failed unit is shown as the
// latest failure while serving goes on; the latest RunStatus::kUnitsListed units are listed,
// older ones counted.
//
// Ownership: holds the Application's implementation (shared) and tells it about itself; the
// Application may be destroyed first. Thread-safe as RunStatus is.
#ifndef SLUICE_CONSOLE_SERVE_UI_H_
#define SLUICE_CONSOLE_SERVE_UI_H_

#include <memory>
#include <string>

#include "application/watch.h"
#include "console/commands.h"
#include "console/run_status.h"
#include "console/status_sampler.h"
#include "console/ui_server.h"
#include "sluice/application.h"
#include "topology/topology.h"

namespace sluice {
class AppCore;
}

namespace sluice::console {

class ServeUi final : public AppWatcher {
 public:
  // nullptr without --ui. Else listens (printing the URL) and watches `app`, which
  // must not have started yet. `topology` (with --hosts applied) must outlive the ServeUi.
  // Throws sluice::Error when --ui is malformed, not loopback without --ui-public, or
  // cannot be listened on.
  static std::unique_ptr<ServeUi> start(const ServeOptions& options, const topo::Topology& topology,
                                        Application& app);
  ~ServeUi() override;

  // The application is deployed: units run from now on.
  void started();
  // Serving ended with `exit_code`; then keeps the final state up for --ui-linger seconds.
  // REQUIRES: SIGINT and SIGTERM blocked in every thread (linger()).
  void finish_and_linger(int exit_code, double linger_seconds);

  // AppWatcher
  void unit_queued(std::uint64_t index, const std::string& work) override;
  void unit_started(std::uint64_t index) override;
  void unit_ended(const UnitReport& report) override;
  void deployment_broke(const Failure& why) override;

 private:
  ServeUi(const topo::Topology& topology, std::shared_ptr<AppCore> core);

  const std::shared_ptr<AppCore> core_;
  RunStatus status_;
  std::unique_ptr<UiServer> server_;
  std::unique_ptr<StatusSampler> sampler_;
};

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_SERVE_UI_H_
