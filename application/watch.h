// AppWatcher: what a live view of a deployed application (sluice serve --ui) is told about
// its units as they come and go. The streams' counters and the copies' activity are polled
// instead (AppCore::sample), as often as the view wants.
//
// Threads: unit_queued from the thread that submits (in submission order: AppCore calls it
// under its lock), unit_started, unit_ended and deployment_broke from the application's
// runner thread (and
// unit_ended also from the thread that aborts). Calls must return promptly and must not
// call back into the Application.
#ifndef SLUICE_APPLICATION_WATCH_H_
#define SLUICE_APPLICATION_WATCH_H_

#include <cstdint>
#include <string>

#include "runtime/failure.h"
#include "sluice/application.h"

namespace sluice {

class AppWatcher {
 public:
  virtual ~AppWatcher() = default;
  virtual void unit_queued(std::uint64_t index, const std::string& work) = 0;
  virtual void unit_started(std::uint64_t index) = 0;
  virtual void unit_ended(const UnitReport& report) = 0;
  // The deployment broke while no unit ran (a host lost, an app daemon killed): `why`. The
  // next unit deploys the application again. From the runner thread.
  virtual void deployment_broke(const Failure& why) = 0;
};

}  // namespace sluice

#endif  // SLUICE_APPLICATION_WATCH_H_
