// Telling a silent peer from a pause of our own. A process that was stopped (SIGSTOP,
// Ctrl-Z), starved of CPU or suspended with its machine finds, when it runs again, every
// peer silent for as long as it was out: its timers all fire at once, late. A watcher whose
// timer fired more than kOwnPause after it was due was itself out; it gives the peer a
// fresh window instead of blaming it (the peer's words, if any, wait in the socket).
#ifndef SLUICE_CONTROL_OWN_PAUSE_H_
#define SLUICE_CONTROL_OWN_PAUSE_H_

#include <chrono>

namespace sluice::control {

// Twice the longest timer period that watches for a pause (the 500 ms heartbeats), so that
// a busy event loop is not taken for a stopped process.
inline constexpr std::chrono::milliseconds kOwnPause{1000};

// How long past `due` a timer fired, when that is more than kOwnPause; else zero.
inline std::chrono::steady_clock::duration own_pause_since(std::chrono::steady_clock::time_point due) {
  const auto late = std::chrono::steady_clock::now() - due;
  return late > kOwnPause ? late : std::chrono::steady_clock::duration::zero();
}

}  // namespace sluice::control

#endif  // SLUICE_CONTROL_OWN_PAUSE_H_
