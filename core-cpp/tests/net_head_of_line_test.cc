// One stream's empty pool must never hold back another stream on the same connection.
//
// The reproducer from the "across hosts without surprises" issue: host a runs two sources;
// host b forwards one of them twice (fwd -> fwd2, zero-copy, so those buffers stay in the
// first stream's pool) into join.in1, and the other goes straight to join.in2. join reads
// in2 to the end, then in1. Embedded this finishes: srcx blocks on its pool while srcz's
// buffers flow. Across hosts it used to hang: once every buffer of srcx -> fwd's pool on b
// sat in fwd2's queue, the a -> b connection stopped reading, so srcz's frames behind it
// never arrived and join never reached in1.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "testing/graph_harness.h"
#include "net_cluster.h"

namespace testing_filters {
namespace {

namespace fs = std::filesystem;

// Reads every report the graph filters wrote into `dir`: "filter.port" -> (buffers, checksum).
std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> read_reports(const fs::path& dir) {
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const std::string filter = name.substr(0, name.find('.'));
    std::ifstream in(entry.path());
    std::string port;
    std::uint64_t buffers = 0, checksum = 0;
    while (in >> port >> buffers >> checksum) {
      auto& total = out[filter + "." + port];
      total.first += buffers;
      total.second += checksum;
    }
  }
  return out;
}

// The jam's shape: 1 KiB buffers of GSource's default size and one srcx copy, unless a
// test asks for more.
struct Jam {
  std::string buffer_size = "1KiB";
  std::string payload;  // GSource's size arg ("" for its default)
  int srcx_copies = 1;
  int srcx_count = 200;
  int srcz_count = 2000;
};

std::string reproducer(const fs::path& report, const Jam& jam = {}) {
  const std::string lib = SLUICE_GRAPH_FILTERS_LIB;
  const std::string r = "report: " + report.string();
  const std::string size = jam.payload.empty() ? "" : "size: " + jam.payload + ", ";
  return "defaults: {buffer_size: " + jam.buffer_size + ", depth: 4}\n"
         "filters:\n"
         "  srcx: {class: GSource, library: " + lib + ", copies: " + std::to_string(jam.srcx_copies) +
         ", args: {count: " + std::to_string(jam.srcx_count) + ", " + size + r + "}}\n"
         "  srcz: {class: GSource, library: " + lib + ", args: {count: " + std::to_string(jam.srcz_count) + ", " +
         size + r + "}}\n"
         "  fwd:  {class: GMix, library: " + lib + ", args: {order: in, outputs: out, " + r + "}}\n"
         "  fwd2: {class: GMix, library: " + lib + ", args: {order: in, outputs: out, " + r + "}}\n"
         "  join: {class: GMix, library: " + lib + ", args: {order: \"in2,in1\", " + r + "}}\n"
         "streams:\n"
         "  - {from: srcx.out, to: fwd.in}\n"
         "  - {from: fwd.out, to: fwd2.in}\n"
         "  - {from: fwd2.out, to: join.in1}\n"
         "  - {from: srcz.out, to: join.in2}\n"
         "work: [first, second]\n";
}

class HeadOfLineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sluice-hol-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "embedded");
    fs::create_directories(dir_ / "hosts");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(HeadOfLineTest, ForwardedBuffersHoldingAPoolDoNotStallTheOtherStreams) {
  RunOutcome embedded = run_yaml(reproducer(dir_ / "embedded"));
  ASSERT_FALSE(embedded.failure) << embedded.failure->str();

  Cluster cluster(reproducer(dir_ / "hosts"),
                  {{"a", place({{"srcx", {0}}, {"srcz", {0}}})},
                   {"b", place({{"fwd", {0}}, {"fwd2", {0}}, {"join", {0}}})}});
  for (std::size_t u = 0; u < 2; ++u) {
    auto failure = cluster.run_unit(u, std::chrono::seconds(20));
    ASSERT_FALSE(failure) << *failure;
  }

  auto want = read_reports(dir_ / "embedded");
  auto got = read_reports(dir_ / "hosts");
  EXPECT_EQ(want.at("join.in1").first, 2u * 200u);
  EXPECT_EQ(want.at("join.in2").first, 2u * 2000u);
  EXPECT_EQ(got, want);
}

// The same jam with srcx's two copies on two hosts and 64 KiB buffers: b parks frames of
// fwd.in from both connections at once, each payload read over several reads while the
// other connection parks behind it. A parked frame was marked complete when the frame
// parked last finished arriving, not its own: one stayed incomplete for ever (the stream
// never unparked again, the run hung with every buffer free) and another could move with
// half its payload (the checksums would differ).
TEST_F(HeadOfLineTest, FramesParkedFromTwoHostsAtOnceEachLandWhole) {
  const Jam jam{"64KiB", "65536", 2, 300, 600};
  RunOutcome embedded = run_yaml(reproducer(dir_ / "embedded", jam));
  ASSERT_FALSE(embedded.failure) << embedded.failure->str();

  Cluster cluster(reproducer(dir_ / "hosts", jam), {{"a", place({{"srcx", {0}}, {"srcz", {0}}})},
                                         {"b", place({{"fwd", {0}}, {"fwd2", {0}}, {"join", {0}}})},
                                         {"c", place({{"srcx", {1}}})}});
  for (std::size_t u = 0; u < 2; ++u) {
    auto failure = cluster.run_unit(u, std::chrono::seconds(20));
    ASSERT_FALSE(failure) << *failure;
  }

  auto want = read_reports(dir_ / "embedded");
  auto got = read_reports(dir_ / "hosts");
  EXPECT_EQ(want.at("join.in1").first, 2u * 2u * 300u);
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace testing_filters
