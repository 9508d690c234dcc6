// eventually(): waits for a condition another thread brings about, with a limit, so that a
// test that would hang fails instead (the limit only bounds a failure: keep it generous).
#ifndef SLUICE_TESTING_EVENTUALLY_H_
#define SLUICE_TESTING_EVENTUALLY_H_

#include <chrono>
#include <thread>

namespace sluice::testing {

// Looks at `done()` every millisecond until it is true (returns true) or `limit` passed
// (returns false).
template <typename Done>
bool eventually(Done done, std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace sluice::testing

#endif  // SLUICE_TESTING_EVENTUALLY_H_
