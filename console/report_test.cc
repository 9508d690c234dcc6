#include "console/report.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

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

// A directory of its own for one test, under the system's temporary directory.
std::filesystem::path scratch_dir(const std::string& prefix) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(ProgressLine, ShowsRatesSinceThePreviousSample) {
  // 2M buffers and 200 MB in 2 s; producers blocked 0.5 s of 2 s, consumers 2 s of 2x2 s.
  std::string line = progress_line("unit 1/3 [x]", {stream(3000000, 300000000, 600000000, 2000000000)},
                                   {stream(1000000, 100000000, 100000000, 0)}, 2.0, 200);
  EXPECT_EQ(line, "unit 1/3 [x]  last 2.0s: a.out -> b.in 1.00M buf/s 100.0 MB/s blk 25%/50%");
}

StreamStats named(const std::string& label, std::uint64_t pblk_ns, std::uint64_t cblk_ns) {
  StreamStats s = stream(100, 1000, pblk_ns, cblk_ns);
  s.label = label;
  return s;
}

TEST(ProgressLine, ShowsTheMostHeldBackStreamFirstAndCountsThoseLeftOut) {
  // Over 1 s: x.out waits 10% for room, y.out 90% (the bottleneck), z.out 0% but its
  // consumers wait 100% for data.
  std::vector<StreamStats> now = {named("x.out -> y.in", 100000000, 0), named("y.out -> z.in", 900000000, 0),
                                  named("z.out -> w.in", 0, 2000000000)};
  std::string wide = progress_line("unit 1/1 [a]", now, {}, 1.0, 400);
  EXPECT_LT(wide.find("y.out -> z.in"), wide.find("x.out -> y.in")) << wide;
  EXPECT_LT(wide.find("x.out -> y.in"), wide.find("z.out -> w.in")) << wide;
  EXPECT_EQ(wide.find("more"), std::string::npos) << wide;

  std::string narrow = progress_line("unit 1/1 [a]", now, {}, 1.0, 79);
  EXPECT_LE(narrow.size(), 79u);
  EXPECT_NE(narrow.find("last 1.0s: y.out -> z.in 100 buf/s 0.0 MB/s blk 90%/0%"), std::string::npos) << narrow;
  EXPECT_EQ(narrow.substr(narrow.size() - 7), "+2 more") << narrow;
}

TEST(RecentSamples, RatesComeFromTheLastFewSecondsNotTheWholeRun) {
  RecentSamples samples(3.0);
  // 1000 buffers/s for 10 s, then 10 buffers/s: a whole-run average would say ~775.
  std::uint64_t buffers = 0;
  std::string line;
  for (int t = 0; t <= 13; ++t) {
    StreamStats s = stream(buffers, buffers * 100, 0, 0);
    line = samples.line("unit 1/1 []", {s}, t, 200);
    buffers += t < 10 ? 1000 : 10;
  }
  EXPECT_NE(line.find("last 3.0s: a.out -> b.in 10 buf/s 0.0 MB/s"), std::string::npos) << line;
}

TEST(ProgressLine, IsCutToTheTerminalWidthBetweenFigures) {
  // "unit 1/1 []  last 1.0s: a.out -> b.in 10 buf/s ..." and the other stream counted: cut at
  // a space, never inside a figure ("blk 100..." read as a whole 100 when it was 100%/35%: an
  // outside review).
  std::string line = progress_line("unit 1/1 []", {stream(10, 10, 0, 0), stream(10, 10, 0, 0)}, {}, 1.0, 40);
  EXPECT_LE(line.size(), 40u) << line;
  EXPECT_EQ(line, "unit 1/1 []  last 1.0s: a.out... +1 more") << line;
  line = progress_line("u", {stream(10, 10, 1000000000, 350000000)}, {}, 1.0, 48);
  EXPECT_EQ(line, "u  last 1.0s: a.out -> b.in 10 buf/s 0.0 MB/s...") << line;
}

TEST(SummaryTable, ListsStreamsAndUnits) {
  RunReport report;
  report.wall_seconds = 2.0;
  report.streams = {stream(4000, 8000000, 0, 0)};
  report.units = {{0, "first", 1.5, true, ""}, {1, "second", 0, false, ""}};
  std::string table = summary_table(report);
  EXPECT_NE(table.find("a.out -> b.in"), std::string::npos) << table;
  EXPECT_NE(table.find("4000"), std::string::npos) << table;
  EXPECT_NE(table.find("2.00k"), std::string::npos) << table;  // buffers/s
  EXPECT_NE(table.find("units of work: 1/2 finished in 2.000 s; [first] 1.500 s"), std::string::npos) << table;
}

TEST(SummaryTable, WithoutStreamsIsTheUnitsLineAlone) {
  RunReport report;
  report.wall_seconds = 0.5;
  report.units = {{0, "first", 0, false, ""}};
  EXPECT_EQ(summary_table(report), "units of work: 0/1 finished in 0.500 s\n");
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

// A full disk is told, not left as an empty file (the stream's failed flush was silent).
TEST(MetricsJson, AFullDiskIsAClearError) {
  RunReport report;
  try {
    write_metrics_json(report, "/dev/full");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write metrics to '/dev/full': No space left on device"),
              std::string::npos)
        << e.what();
  }
}

// A symlink another user planted at --metrics FILE (a shared project directory) is not
// followed: the console would overwrite whatever file of this user's it points at. This
// user's own link is followed, as before.
TEST(MetricsJson, ASymlinkAnotherUserPlantedIsNotFollowed) {
  ASSERT_EQ(::geteuid(), 0u) << "needs root, to give a link to another user (make test runs as root)";
  const std::filesystem::path dir = scratch_dir("metrics-link-");
  const std::string target = (dir / "important.txt").string();
  { std::ofstream(target) << "keep me\n"; }
  const std::string link = (dir / "m.json").string();
  std::filesystem::create_symlink(target, link);
  ASSERT_EQ(::lchown(link.c_str(), 65534, static_cast<gid_t>(-1)), 0);
  for (const bool before_the_run : {true, false}) {
    try {
      if (before_the_run) {
        check_metrics_writable(link);
      } else {
        write_metrics_json(RunReport{}, link);
      }
      ADD_FAILURE() << "a link of another user's was followed";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--metrics '" + link + "' is reached through a symbolic link that belongs "
                                           "to nobody ('" + link + "'), not to root (who runs this), not followed"),
                std::string::npos) << e.what();
    }
  }
  // A link of theirs to a directory, on the way to FILE, leads them where they choose too.
  const std::string linked_dir = (dir / "their-dir").string();
  std::filesystem::create_symlink(dir, linked_dir);
  ASSERT_EQ(::lchown(linked_dir.c_str(), 65534, static_cast<gid_t>(-1)), 0);
  EXPECT_THROW(check_metrics_writable(linked_dir + "/important.txt"), Error);
  EXPECT_THROW(write_metrics_json(RunReport{}, linked_dir + "/important.txt"), Error);
  std::ifstream in(target);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "keep me\n");
  ASSERT_EQ(::lchown(link.c_str(), 0, static_cast<gid_t>(-1)), 0);
  write_metrics_json(RunReport{}, link);
  std::ifstream again(target);
  EXPECT_EQ(again.get(), '{') << "this user's own link is followed";
  std::filesystem::remove_all(dir);
}

// Another user's file or FIFO planted at --metrics FILE: their file is replaced by one of
// this user's (they read the payloads through it before), their FIFO is refused before the run
// (writing into it waited for them, then handed them the JSON).
TEST(MetricsJson, AFileOrFifoAnotherUserPlantedIsNotWrittenThrough) {
  ASSERT_EQ(::geteuid(), 0u) << "needs root, to give files to another user (make test runs as root)";
  const std::filesystem::path dir = scratch_dir("metrics-planted-");
  const std::string planted = (dir / "m.json").string();
  { std::ofstream(planted) << "theirs"; }
  ASSERT_EQ(::chown(planted.c_str(), 65534, static_cast<gid_t>(-1)), 0);
  ASSERT_EQ(::chmod(planted.c_str(), 0666), 0);
  write_metrics_json(RunReport{}, planted);
  struct stat st{};
  ASSERT_EQ(::stat(planted.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid()) << "a file of this user's replaced theirs";
  const std::string fifo = (dir / "m2.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0622), 0);
  ASSERT_EQ(::chown(fifo.c_str(), 65534, static_cast<gid_t>(-1)), 0);
  try {
    check_metrics_writable(fifo);
    ADD_FAILURE() << "another user's FIFO was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is a FIFO that belongs to nobody"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

TEST(MetricsJson, CheckedBeforeTheRunWithoutLeavingAFileBehind) {
  const std::filesystem::path dir = scratch_dir("metrics-check-");
  const std::string fresh = (dir / "m.json").string();
  EXPECT_NO_THROW(check_metrics_writable(fresh));
  EXPECT_FALSE(std::filesystem::exists(fresh)) << "the check left a file that was not there";
  { std::ofstream(fresh) << "kept"; }
  EXPECT_NO_THROW(check_metrics_writable(fresh));
  std::ifstream kept(fresh);
  std::string text((std::istreambuf_iterator<char>(kept)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "kept") << "the check changed a file that was there";
  try {
    check_metrics_writable("/nonexistent-dir/m.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write --metrics '/nonexistent-dir/m.json': No such file"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove_all(dir);
}

// As sluice submit and serve's log end a failed unit's line: a host's failure as `sluice run`
// prints it (it used to read "app daemon: host b: the app daemon ..."), others with their kind.
TEST(FailureText, AHostsFailureIsItsMessageAndOthersGetTheirKind) {
  EXPECT_EQ(failure_text(Failure{"", -1, "b", 3, "app daemon",
                                 "host b: the app daemon (sluice-appd pid 7) was killed by SIGKILL during the run"}),
            "host b: the app daemon (sluice-appd pid 7) was killed by SIGKILL during the run");
  EXPECT_EQ(failure_text(Failure{"", -1, "", 3, "cancelled", "unit 3 was cancelled by its client"}),
            "cancelled: unit 3 was cancelled by its client");
  EXPECT_EQ(failure_text(Failure{"up", 1, "a", 3, "process", "boom"}),
            "filter 'up' copy 1 on host a failed in process (unit of work 3): boom");
}

}  // namespace
}  // namespace sluice::console
