// LayoutTrial: decides, from how fast the work goes, whether a process's tasks run packed on
// one worker or spread over all of them.
//
// Why a trial and not a rule: copies that mostly pass buffers on run a queue's worth at a
// time on one worker with no system call, while on two workers every hand-over moves cache
// lines between cores. What that costs is not a property of the code but of the machine at
// the moment: on the 2-core VM of bench/RESULTS.md a line took ~42 ns to cross in some hours
// and ~200 ns in others (the host moves the vCPUs), and a pipeline cut in two halves ran at
// 1.14-1.40x one worker in the first mode and at 0.2-0.5x in the second. So the scheduler's
// monitor feeds this a count that grows with the work done (buffers written), about once a
// millisecond; now and then it runs the other layout for a short window, compares the two
// rates and keeps the faster one, preferring packed (which never collapses) unless spread is
// clearly faster.
//
// Thread safety: none; one caller (the monitor thread). No clock of its own: the caller
// passes the time, so tests drive it directly.
#ifndef SLUICE_SCHED_LAYOUT_TRIAL_H_
#define SLUICE_SCHED_LAYOUT_TRIAL_H_

#include <cstdint>

namespace sluice::sched {

enum class Layout { kPacked, kSpread };
// What a process asks for: the trial's choice, or one layout always.
enum class LayoutChoice { kAuto, kPacked, kSpread };

class LayoutTrial {
 public:
  struct Timing {
    std::uint64_t warm_ns = 3'000'000;    // from the first sample to the first window
    std::uint64_t window_ns = 5'000'000;  // each layout's measured window
    std::uint64_t settle_ns = 1'000'000;  // after a switch, before its window opens
    std::uint64_t hold_min_ns = 250'000'000;   // between trials, right after a change...
    std::uint64_t hold_max_ns = 4'000'000'000;  // ...doubling up to this while it holds
    std::uint64_t uninformed_hold_ns = 20'000'000;  // after a trial with no work in a window
    // Spread is kept only when its rate is at least this much higher than packed's.
    double spread_margin = 0.10;
  };

  LayoutTrial() : LayoutTrial(Timing{}) {}
  explicit LayoutTrial(Timing timing) : timing_(timing), hold_ns_(timing.hold_min_ns) {}

  // One sample: the monotonic time and the work count then (never decreasing). Returns the
  // layout to run from now on.
  Layout step(std::uint64_t now_ns, std::uint64_t work);

  Layout layout() const { return layout_; }
  // The rates (work per second) the last completed trial measured; 0 before one.
  double packed_rate() const { return packed_rate_; }
  double spread_rate() const { return spread_rate_; }
  int trials() const { return trials_; }

 private:
  enum class Phase { kStart, kWarm, kMeasureCurrent, kSettle, kMeasureOther, kHold };

  void open_window(std::uint64_t now_ns, std::uint64_t work, Phase phase);
  double window_rate(std::uint64_t now_ns, std::uint64_t work) const;
  void decide(std::uint64_t now_ns, double current_rate, double other_rate);

  const Timing timing_;
  Layout layout_ = Layout::kPacked;
  Phase phase_ = Phase::kStart;
  std::uint64_t phase_start_ns_ = 0;
  std::uint64_t window_work_ = 0;  // the work count when the window opened
  double current_rate_ = 0;        // the layout before the trial, over its window
  std::uint64_t hold_ns_;
  double packed_rate_ = 0;
  double spread_rate_ = 0;
  int trials_ = 0;
};

}  // namespace sluice::sched

#endif  // SLUICE_SCHED_LAYOUT_TRIAL_H_
