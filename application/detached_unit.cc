#include "application/detached_unit.h"

#include <mutex>

#include "application/core.h"

namespace sluice {

namespace {
AppCore::UnitState& state(const std::shared_ptr<void>& held) { return *static_cast<AppCore::UnitState*>(held.get()); }
}  // namespace

DetachedUnit::DetachedUnit(const Unit& unit) {
  std::shared_ptr<AppCore::UnitState> s = AppCore::state_of(unit);
  s->core->orphan(s);
  state_ = std::move(s);
}

std::optional<UnitReport> DetachedUnit::report_if_ended() const {
  AppCore::UnitState& unit = state(state_);
  std::lock_guard<std::mutex> lock(unit.mu);
  if (unit.phase != AppCore::UnitState::Phase::kEnded) return std::nullopt;
  return unit.report;
}

UnitReport DetachedUnit::await_end() const {
  AppCore::UnitState& unit = state(state_);
  std::unique_lock<std::mutex> lock(unit.mu);
  unit.changed.wait(lock, [&] { return unit.phase == AppCore::UnitState::Phase::kEnded; });
  return *unit.report;
}

}  // namespace sluice
