// What this process holds now (threads, open files): for tests that a long-lived process
// does not grow with what it does.
#ifndef SLUICE_TESTING_PROCESS_RESOURCES_H_
#define SLUICE_TESTING_PROCESS_RESOURCES_H_

#include <filesystem>
#include <string>

namespace sluice::testing {

inline int entries_in(const std::string& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

struct ProcessResources {
  int threads = entries_in("/proc/self/task");
  int files = entries_in("/proc/self/fd");
  std::string str() const { return std::to_string(threads) + " threads, " + std::to_string(files) + " files"; }
};

}  // namespace sluice::testing

#endif  // SLUICE_TESTING_PROCESS_RESOURCES_H_
