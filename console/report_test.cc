#include "console/report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace sluice::console {
namespace {

StreamStats stream(std::uint64_t buffers, std::uint64_t bytes, std::uint64_t pblk, std::uint64_t cblk) {
  StreamStats s;
  s.label = "a.out -> b.in";
  s.producer_copies = 1;
  s.consumer_copies = 2;
  s.buffers = buffers;
  s.bytes = bytes;
  s.producer_blocked_ns = pblk;
  s.consumer_blocked_ns = cblk;
  return s;
}

TEST(ProgressLine, ShowsRatesSinceThePreviousSample) {
  // 2M buffers and 200 MB in 2 s; producers blocked 0.5 s of 2 s, consumers 2 s of 2x2 s.
  std::string line = progress_line("unit 1/3 [x]", {stream(3000000, 300000000, 600000000, 2000000000)},
                                   {stream(1000000, 100000000, 100000000, 0)}, 2.0, 200);
  EXPECT_EQ(line, "unit 1/3 [x]  a.out -> b.in 1.00M buf/s 100.0 MB/s blk 25%/50%");
}

TEST(ProgressLine, IsCutToTheTerminalWidth) {
  std::string line = progress_line("unit 1/1 []", {stream(10, 10, 0, 0), stream(10, 10, 0, 0)}, {}, 1.0, 40);
  EXPECT_EQ(line.size(), 40u);
  EXPECT_EQ(line.substr(37), "...");
}

TEST(SummaryTable, ListsStreamsAndUnits) {
  RunReport report;
  report.wall_seconds = 2.0;
  report.streams = {stream(4000, 8000000, 0, 0)};
  report.units = {{0, "first", 1.5, true}, {1, "second", 0, false}};
  std::string table = summary_table(report);
  EXPECT_NE(table.find("a.out -> b.in"), std::string::npos) << table;
  EXPECT_NE(table.find("4000"), std::string::npos) << table;
  EXPECT_NE(table.find("2.00k"), std::string::npos) << table;  // buffers/s
  EXPECT_NE(table.find("units of work: 1/2 finished in 2.000 s; [first] 1.500 s"), std::string::npos) << table;
}

TEST(MetricsJson, WritesFailureAndStreams) {
  RunReport report;
  report.topology_name = "t";
  report.exit_code = 1;
  report.streams = {stream(5, 50, 0, 0)};
  report.failure = Failure{"count", 1, "local", 2, "process", "bad input"};
  auto path = std::filesystem::temp_directory_path() / "sluice_metrics_test.json";
  write_metrics_json(report, path.string());
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(path));
  std::filesystem::remove(path);
  EXPECT_EQ(doc["status"], "failed");
  EXPECT_EQ(doc["exit_code"], 1);
  EXPECT_EQ(doc["failure"]["filter"], "count");
  EXPECT_EQ(doc["failure"]["unit"], 2);
  EXPECT_EQ(doc["streams"][0]["bytes"], 50);
}

TEST(MetricsJson, UnwritablePathIsAClearError) {
  RunReport report;
  try {
    write_metrics_json(report, "/nonexistent-dir/m.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write metrics to '/nonexistent-dir/m.json'"), std::string::npos);
  }
}

}  // namespace
}  // namespace sluice::console
