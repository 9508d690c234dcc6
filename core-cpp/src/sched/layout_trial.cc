#include "sched/layout_trial.h"

#include <algorithm>

namespace sluice::sched {

namespace {
Layout other(Layout layout) { return layout == Layout::kPacked ? Layout::kSpread : Layout::kPacked; }
}  // namespace

void LayoutTrial::open_window(std::uint64_t now_ns, std::uint64_t work, Phase phase) {
  phase_ = phase;
  phase_start_ns_ = now_ns;
  window_work_ = work;
}

double LayoutTrial::window_rate(std::uint64_t now_ns, std::uint64_t work) const {
  const std::uint64_t elapsed = now_ns - phase_start_ns_;
  if (elapsed == 0 || work < window_work_) return 0;
  return static_cast<double>(work - window_work_) * 1e9 / static_cast<double>(elapsed);
}

Layout LayoutTrial::step(std::uint64_t now_ns, std::uint64_t work) {
  const std::uint64_t elapsed = now_ns - phase_start_ns_;
  switch (phase_) {
    case Phase::kStart:
      open_window(now_ns, work, Phase::kWarm);
      break;
    case Phase::kWarm:
      if (elapsed >= timing_.warm_ns) open_window(now_ns, work, Phase::kMeasureCurrent);
      break;
    case Phase::kMeasureCurrent:
      if (elapsed >= timing_.window_ns) {
        current_rate_ = window_rate(now_ns, work);
        layout_ = other(layout_);
        open_window(now_ns, work, Phase::kSettle);
      }
      break;
    case Phase::kSettle:
      if (elapsed >= timing_.settle_ns) open_window(now_ns, work, Phase::kMeasureOther);
      break;
    case Phase::kMeasureOther:
      if (elapsed >= timing_.window_ns) decide(now_ns, current_rate_, window_rate(now_ns, work));
      break;
    case Phase::kHold:
      if (elapsed >= hold_ns_) open_window(now_ns, work, Phase::kMeasureCurrent);
      break;
  }
  return layout_;
}

void LayoutTrial::decide(std::uint64_t now_ns, double current_rate, double other_rate) {
  // layout_ is the one just tried; the one before the trial is the other.
  const Layout before = other(layout_);
  packed_rate_ = layout_ == Layout::kPacked ? other_rate : current_rate;
  spread_rate_ = layout_ == Layout::kSpread ? other_rate : current_rate;
  ++trials_;
  // No work in one of the windows (a graph waiting for input, between units, or work that
  // started or stopped during the trial): nothing learnt, so packed, and another trial
  // soon, so that a run whose work starts late is not left packed for a whole hold.
  const bool informed = packed_rate_ > 0 && spread_rate_ > 0;
  const Layout best = informed && spread_rate_ > packed_rate_ * (1 + timing_.spread_margin) ? Layout::kSpread
                                                                                              : Layout::kPacked;
  if (!informed) {
    hold_ns_ = timing_.uninformed_hold_ns;
  } else if (best != before || hold_ns_ < timing_.hold_min_ns) {
    hold_ns_ = timing_.hold_min_ns;
  } else {
    hold_ns_ = std::min(timing_.hold_max_ns, hold_ns_ * 2);
  }
  layout_ = best;
  phase_ = Phase::kHold;
  phase_start_ns_ = now_ns;
}

}  // namespace sluice::sched
