// DetachedUnit: a unit whose results the application reads and drops from now on, as it does
// for a destroyed sluice::Unit (AppCore::orphan), but which can still say how the unit ended.
// For a binding whose unit handle must not wait when it is closed: Java's Unit.close(), whose
// Unit.waitFor() still answers afterwards.
//
// Thread safety: every method from any thread. A thread already inside the Unit's
// results().read() may go on reading beside the application.
#ifndef SLUICE_APPLICATION_DETACHED_UNIT_H_
#define SLUICE_APPLICATION_DETACHED_UNIT_H_

#include <memory>
#include <optional>

#include "sluice/application.h"

namespace sluice {

class DetachedUnit {
 public:
  // Hands the unread results of `unit` (which is left as it is) to the application's drainer.
  // Throws std::system_error when no thread can be started for it (nothing changed then).
  // REQUIRES: `unit` is not moved-from.
  explicit DetachedUnit(const Unit& unit);

  // How the unit ended, once it has; never waits.
  std::optional<UnitReport> report_if_ended() const;
  // Waits until the unit ended (without reading its results) and says how.
  UnitReport await_end() const;

 private:
  std::shared_ptr<void> state_;  // the Unit::State (application/core.h)
};

}  // namespace sluice

#endif  // SLUICE_APPLICATION_DETACHED_UNIT_H_
