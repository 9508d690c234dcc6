// Shared by the Java graph tests: topologies with the Java test filters, run embedded.
#ifndef SLUICE_JNI_TESTS_JAVA_TEST_SUPPORT_H_
#define SLUICE_JNI_TESTS_JAVA_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "testing/graph_harness.h"
#include "testing/graph_test_filters.h"

namespace jtest {

using testing_filters::observed;

// Every test asks for the same JVM options, so that they also hold when the whole binary runs
// in one process (one JVM): -Xcheck:jni, and the opening ZeroCopyProbe needs to read a
// ByteBuffer's address on its own. `more_jvm` ("heap: 16MiB, ") is for a test whose child
// process starts a JVM of its own (a death test).
inline std::string with_java(std::string yaml, const std::string& more_jvm = "") {
  const std::string jar = JAVA_TEST_FILTERS_JAR;
  for (std::size_t at; (at = yaml.find("@JAR@")) != std::string::npos;) yaml.replace(at, 5, jar);
  return "jvm: {" + more_jvm + "options: [-Xcheck:jni, \"--add-opens=java.base/java.nio=ALL-UNNAMED\"]}\n" + yaml;
}

inline testing_filters::RunOutcome run(const std::string& yaml, sluice::EngineOptions options = {},
                                       const std::string& more_jvm = "") {
  return testing_filters::run_yaml(with_java(yaml, more_jvm), options);
}

// run(), with what the run printed to stderr (the runtime's warnings) in *err.
inline testing_filters::RunOutcome run_capturing_stderr(const std::string& yaml, std::string* err) {
  ::testing::internal::CaptureStderr();
  testing_filters::RunOutcome out = run(yaml);
  *err = ::testing::internal::GetCapturedStderr();
  return out;
}

class JavaGraphTest : public ::testing::Test {
 protected:
  void SetUp() override { observed().reset(); }

  std::vector<std::string> violations() {
    std::lock_guard<std::mutex> lock(observed().mu);
    return observed().violations;
  }

  // What the probes reported to TestTextSinks (one line per check), in any order.
  std::multiset<std::string> reported() {
    std::lock_guard<std::mutex> lock(observed().mu);
    return {observed().lines.begin(), observed().lines.end()};
  }

  // Every (source copy, seq) in [0, per_source) reached the TestSink called `sink` exactly
  // `times` times.
  void expect_each(int sources, std::uint64_t per_source, std::uint32_t times = 1, const std::string& sink = "sink") {
    std::lock_guard<std::mutex> lock(observed().mu);
    auto& arrivals = observed().arrivals[sink];
    ASSERT_EQ(arrivals.size(), static_cast<std::size_t>(sources));
    for (auto& [source, counts] : arrivals) {
      ASSERT_EQ(counts.size(), per_source) << "source " << source;
      std::uint64_t wrong = 0;
      for (std::uint32_t c : counts) wrong += c != times;
      EXPECT_EQ(wrong, 0u) << "source " << source << ": seqs not seen exactly " << times << " time(s)";
    }
  }
};

}  // namespace jtest

#endif  // SLUICE_JNI_TESTS_JAVA_TEST_SUPPORT_H_
