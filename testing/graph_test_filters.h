// The graph tests' C++ filters (part of sluice_testing, linked into each test binary and
// registered as built-ins: no `library:` needed), the record format they share with the Java
// test filters (jfilter/native/tests/java/.../Records.java), and what they observed, for the
// graph tests of core-cpp/tests and jfilter/native/tests to check.
//
// Test records: every buffer of at least kRecordSize bytes is a record, 48 bytes of header
//   0 u32 magic   4 u32 source   8 u64 seq   16 u32 hop   20 u32 transforms   24 u64 hop_seq
//   32 u64 checksum   40 u64 aux (the payload address a Java stage saw, for the zero-copy test)
// then a payload whose byte i is (seq + 7 i + transforms) mod 256: every Java stage that
// transforms adds 1 to each byte and to `transforms`. source and seq are the source copy and
// sequence number (end to end), hop and hop_seq the immediate producer's (re-stamped at each
// stage). The checksum covers source, seq, transforms and the payload (sequenced::checksum),
// so a stage that changes a byte without re-checksumming, or loses a write, is caught. Each
// stage checks, per immediate producer, that hop_seq only goes up; sinks also record every
// (source, seq) they receive.
//
// Thread safety: observed() is shared by every copy; its members are guarded by its mutex.
#ifndef SLUICE_TESTING_GRAPH_TEST_FILTERS_H_
#define SLUICE_TESTING_GRAPH_TEST_FILTERS_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "sluice/sluice.h"

namespace testing_filters {

inline constexpr std::size_t kRecordSize = 48;
inline constexpr std::uint32_t kRecordMagic = 0x6a617661;  // "java": Records.MAGIC

// Everything the test filters saw; reset() before each test.
struct Observations {
  // Set by a TestSink with release_spinners: true when it has read everything; TestSpinners
  // with until_released: true spin until then.
  std::atomic<bool> spinners_released{false};
  // TestSpinners in process() now (a test waits for a stuck one to leave before it ends).
  std::atomic<int> spinning{0};
  // TestSinks with wait_for_gate: true read nothing until a test opens the gate.
  std::atomic<bool> gate_open{false};
  // How long a TestSlowConstructor takes to construct, and how many were made and destroyed.
  std::atomic<int> slow_constructor_ms{300};
  std::atomic<int> slow_constructed{0};
  std::atomic<int> slow_destroyed{0};

  std::mutex mu;  // guards everything below
  std::vector<std::string> violations;  // order or checksum problems, first 20
  // Per sink filter name: per source copy: how often each seq arrived.
  std::map<std::string, std::map<std::uint32_t, std::vector<std::uint32_t>>> arrivals;
  // Per sink filter name and copy: buffers received, and keys seen.
  std::map<std::string, std::map<int, std::uint64_t>> received;
  std::map<std::string, std::map<std::uint64_t, std::vector<int>>> key_copies;  // key -> copies
  // With record_keys: per key, the copies of the last stage before a sink that sent it; per
  // such copy, the records it sent.
  std::map<std::uint64_t, std::set<std::uint32_t>> key_hops;
  std::map<std::uint32_t, std::uint64_t> per_hop;
  // Per (sink filter, copy, unit): the payload ("work") it saw.
  std::vector<std::string> units_seen;
  std::map<std::string, int> constructed;  // class -> objects created
  std::map<std::string, int> inits;        // filter name -> init calls
  // Payload addresses by (source copy, seq): at the source and at each sink copy.
  std::map<std::pair<std::uint32_t, std::uint64_t>, const void*> source_address;
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<const void*>> sink_address;
  std::uint64_t address_checks = 0;  // records a sink with check_aux found zero-copy
  std::vector<std::string> lines;    // what TestTextSink received, one line per buffer

  void reset();
  void violation(const std::string& what);
};

Observations& observed();

}  // namespace testing_filters

#endif  // SLUICE_TESTING_GRAPH_TEST_FILTERS_H_
