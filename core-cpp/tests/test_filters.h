// Filters compiled into the test binary (registered as built-ins: no `library:` needed),
// and what they observed, for the graph tests to check.
//
// Test records: every buffer of at least kRecordSize bytes carries
//   the source copy and sequence number (end to end), the immediate producer's copy and
//   sequence number (re-stamped at each hop), and a checksum over the source fields and
//   the payload. Each stage checks, per immediate producer, that hop sequence numbers only
//   go up; sinks also record every (source, seq) they receive.
#ifndef SLUICE_TESTS_TEST_FILTERS_H_
#define SLUICE_TESTS_TEST_FILTERS_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "sluice/sluice.h"

namespace testing_filters {

inline constexpr std::size_t kRecordSize = 48;

// Everything the test filters saw; reset() before each test.
struct Observations {
  // Set by a TestSink with release_spinners: true when it has read everything; TestSpinners
  // with until_released: true spin until then.
  std::atomic<bool> spinners_released{false};

  std::mutex mu;  // guards everything below
  std::vector<std::string> violations;  // order or checksum problems, first 20
  // Per sink filter name: per source copy: how often each seq arrived.
  std::map<std::string, std::map<std::uint32_t, std::vector<std::uint32_t>>> arrivals;
  // Per sink filter name and copy: buffers received, and keys seen.
  std::map<std::string, std::map<int, std::uint64_t>> received;
  std::map<std::string, std::map<std::uint64_t, std::vector<int>>> key_copies;  // key -> copies
  // Per (sink filter, copy, unit): the payload ("work") it saw.
  std::vector<std::string> units_seen;
  std::map<std::string, int> constructed;  // class -> objects created
  std::map<std::string, int> inits;        // filter name -> init calls
  // Payload addresses by (source copy, seq): at the source and at each sink copy.
  std::map<std::pair<std::uint32_t, std::uint64_t>, const void*> source_address;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<const void*>> sink_address;

  void reset();
  void violation(const std::string& what);
};

Observations& observed();

}  // namespace testing_filters

#endif  // SLUICE_TESTS_TEST_FILTERS_H_
