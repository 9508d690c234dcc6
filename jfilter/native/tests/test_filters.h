// C++ filters for the Java graph tests (built into the test binary: no `library:` needed),
// the record format they share with the Java test filters (java/.../Records.java), and what
// they observed.
//
// Record: a 48-byte header, then a payload the Java stages rewrite in place.
//   0 u32 magic   4 u32 source   8 u64 seq   16 u32 hop   20 u32 transforms   24 u64 hop_seq
//   32 u64 checksum   40 u64 aux (the payload address a Java stage saw, for the zero-copy test)
// Payload byte i (from offset 48) is (seq + 7 i + transforms) mod 256: every Java stage that
// transforms adds 1 to each byte and to `transforms`. The checksum covers source, seq,
// transforms and the payload (sequenced::checksum), so a stage that changes a byte without
// re-checksumming, or loses a write, is caught. hop/hop_seq are re-stamped at each stage:
// per immediate producer, hop_seq only goes up.
#ifndef SLUICE_JNI_TESTS_TEST_FILTERS_H_
#define SLUICE_JNI_TESTS_TEST_FILTERS_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace jtest {

inline constexpr std::size_t kHeader = 48;

struct Observations {
  std::mutex mu;  // guards everything below
  std::vector<std::string> violations;  // first 20
  // Per source copy: how often each seq arrived at a sink.
  std::map<std::uint32_t, std::vector<std::uint32_t>> arrivals;
  std::uint64_t received = 0;
  std::map<std::uint64_t, std::set<std::uint32_t>> key_hops;  // key -> last-hop copies seen
  std::map<std::uint32_t, std::uint64_t> per_hop;             // last-hop copy -> buffers
  std::map<std::pair<std::uint32_t, std::uint64_t>, const void*> source_address;
  std::uint64_t address_checks = 0;
  std::vector<std::string> lines;  // what TextSink received

  void reset();
  void violation(const std::string& what);
};

Observations& observed();

}  // namespace jtest

#endif  // SLUICE_JNI_TESTS_TEST_FILTERS_H_
