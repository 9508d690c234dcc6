// Failures stop the whole run promptly and are reported precisely.
#include <gtest/gtest.h>

#include <malloc.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "runtime/stream_wiring.h"
#include "testing/eventually.h"
#include "testing/graph_harness.h"
#include "testing/graph_test_filters.h"

namespace testing_filters {
namespace {

class GraphFailureTest : public ::testing::Test {
 protected:
  void SetUp() override { observed().reset(); }

  // A TestSource with `args` (its throw_in: and the like) into a TestSink; `rest` follows
  // the streams (work: ...).
  static RunOutcome run_source_into_sink(const std::string& args, const std::string& rest = "") {
    return run_yaml("filters:\n"
                    "  src:  {class: \"testing_filters::TestSource\", args: {" + args + "}}\n"
                    "  sink: {class: \"testing_filters::TestSink\"}\n"
                    "streams:\n"
                    "  - {from: src.out, to: sink.in}\n" + rest);
  }
};

// A relay copy throws while the source is blocked on a full stream (forever: it would
// never finish) and the other relay and the sink wait on empty ones.
TEST_F(GraphFailureTest, ThrowingFilterStopsBlockedGraphWithinSeconds) {
  RunOutcome out = run_yaml(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {forever: true}}
  mid:  {class: "testing_filters::TestRelay", copies: 2, args: {throw_copy: 1, throw_at: 50}}
  sink: {class: "testing_filters::TestSink", args: {sleep_us: 100}}
streams:
  - {from: src.out, to: mid.in, depth: 1}
  - {from: mid.out, to: sink.in, depth: 1}
work: [first, second]
)");
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->filter, "mid");
  EXPECT_EQ(out.failure->copy, 1);
  EXPECT_EQ(out.failure->host, "local");
  EXPECT_EQ(out.failure->stage, "process");
  EXPECT_EQ(out.failure->unit, 0u);
  EXPECT_EQ(out.failure->message, "relay copy 1 refuses buffer 50");
  EXPECT_NE(out.failure->str().find("filter 'mid' copy 1 on host local failed in process (unit of work 0)"),
            std::string::npos) << out.failure->str();
  EXPECT_TRUE(out.stuck.empty());
  EXPECT_LT(out.seconds, 10.0) << "the abort should unblock every thread at once";
}

TEST_F(GraphFailureTest, ExceptionInInitIsReportedWithStage) {
  RunOutcome out = run_source_into_sink("throw_in: init");
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->filter, "src");
  EXPECT_EQ(out.failure->stage, "init");
  EXPECT_EQ(out.failure->message, "boom in init");
}

TEST_F(GraphFailureTest, AnExceptionThatIsNotAStdExceptionIsNamedByItsType) {
  RunOutcome out = run_source_into_sink("throw_in: init_int");
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->stage, "init");
  EXPECT_EQ(out.failure->message, "threw an exception that is not a std::exception: of type int");
}

// A filter chooses its message: one of 1.2 MB (a payload quoted in it, say) is kept to its
// first 64 KiB, cut between characters, and says how long it was, so that a log line,
// serve's `/api/status` and the reply to `sluice submit` stay bounded (an outside review:
// embedded serve kept a 30 MB message, sent it on every status request and lost the reply).
TEST_F(GraphFailureTest, AHugeMessageIsKeptToItsStartAndSaysHowLongItWas) {
  RunOutcome out = run_source_into_sink("throw_in: init_long");
  ASSERT_TRUE(out.failure);
  const std::string& m = out.failure->message;
  const std::string tail = "\n... (1200006 bytes in all: cut to 64 KiB)";
  ASSERT_GE(m.size(), tail.size());
  EXPECT_EQ(m.substr(m.size() - tail.size()), tail);
  const std::string kept = m.substr(0, m.size() - tail.size());
  EXPECT_EQ(kept.rfind("long: \xc3\xa9", 0), 0u);
  EXPECT_LE(kept.size(), sluice::kFailureMessageMax);
  EXPECT_GT(kept.size(), sluice::kFailureMessageMax - 2);
  EXPECT_EQ(kept.substr(kept.size() - 2), "\xc3\xa9") << "not cut inside a character";
}

// A library's exception names its type first, as a Java one does: "stol" alone, what
// std::invalid_argument's what() says, told a user nothing (an outside review). A filter's
// own std::runtime_error and sluice::Error keep their message alone (the tests above).
TEST_F(GraphFailureTest, AnExceptionOfALibraryTypeIsNamedByItsTypeAndMessage) {
  RunOutcome out = run_source_into_sink("throw_in: init_stol");
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->message, "std::invalid_argument: stol");
  out = run_source_into_sink("throw_in: init_out_of_range");
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->message.rfind("std::out_of_range: basic_string::at", 0), 0u) << out.failure->message;
}

TEST_F(GraphFailureTest, ExceptionInFinalizeOfSecondUnitNamesTheUnit) {
  RunOutcome out = run_source_into_sink("count: 10, throw_in: finalize", "work: [a]\n");
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->stage, "finalize");
  EXPECT_EQ(out.failure->unit, 0u);
}

TEST_F(GraphFailureTest, SourceThrowingMidStreamStopsConsumers) {
  RunOutcome out = run_yaml(R"(
filters:
  src:  {class: "testing_filters::TestSource", copies: 2, args: {count: 100000, throw_at: 777}}
  sink: {class: "testing_filters::TestSink", copies: 2}
streams:
  - {from: src.out, to: sink.in, depth: 2}
)");
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->filter, "src");
  EXPECT_EQ(out.failure->message, "source gave up at 777");
}

TEST_F(GraphFailureTest, ConstructorFailureIsReportedBeforeAnyUnit) {
  RunOutcome out = run_yaml(R"(
filters:
  bad:  {class: "testing_filters::TestBadConstructor"}
)");
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->filter, "bad");
  EXPECT_EQ(out.failure->stage, "create");
  EXPECT_EQ(out.failure->message, "cannot construct");
}

// Builds an Engine of `copies` TestSlowConstructor copies and destroys it at once, before
// start(); returns how long that took, in seconds.
double seconds_to_destroy_before_start(int copies, std::chrono::milliseconds abort_grace) {
  sluice::topo::Topology topology = sluice::topo::parse_topology_text(
      "filters:\n  slow: {class: \"testing_filters::TestSlowConstructor\", copies: " + std::to_string(copies) + "}\n",
      "test.yaml", SLUICE_TEST_DATA_DIR);
  sluice::check_loadable(topology);
  sluice::EngineOptions options;
  options.abort_grace = abort_grace;
  const auto start = std::chrono::steady_clock::now();
  { sluice::Engine engine(topology, options); }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// An Engine destroyed before start(), while its copies are still creating their filters
// (300 ms each): they are waited for and their filters destroyed, not left behind as stuck
// (a copy left behind ran on after the test and crashed at exit).
TEST_F(GraphFailureTest, AnEngineDestroyedBeforeStartWaitsForItsCopiesToBeCreated) {
  // A grace of 20 s: a wait that used it all would show.
  const double seconds = seconds_to_destroy_before_start(2, std::chrono::seconds(20));
  EXPECT_EQ(observed().slow_destroyed.load(), 2) << "the copies' filters were not destroyed with the Engine";
  EXPECT_LT(seconds, 10.0) << "the Engine waited for more than the creation";
}

// ...but only up to the abort grace: a creation that takes longer leaves its copy behind.
TEST_F(GraphFailureTest, AnEngineDestroyedBeforeStartWaitsNoLongerThanTheGrace) {
  observed().slow_constructor_ms.store(3000);
  EXPECT_LT(seconds_to_destroy_before_start(1, std::chrono::milliseconds(50)), 1.5)
      << "the Engine waited past its abort grace";
  // The copy left behind (its Engine's state is kept for it) finishes its creation, finds
  // the stop command and destroys its filter on its own.
  EXPECT_TRUE(sluice::testing::eventually([] { return observed().slow_destroyed.load() == 1; }))
      << "the copy left behind did not destroy its filter once created";
}

// This process's address space now, in bytes (VmSize), or 0.
std::size_t address_space_bytes() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;  // "VmSize:  123 kB"
  }
  return 0;
}

// A wiring with no remote copies that records what the Engine told it: graph_gone must come
// after graph_ready. (That it comes before the graph dies follows from where the Engine
// calls it: a guard destroyed before the Engine's state.)
struct RecordingWiring final : sluice::StreamWiring {
  bool ready = false;
  bool gone_after_ready = false;
  sluice::Endpoint* remote_consumer(sluice::StreamRuntime&, int) override { return nullptr; }
  std::size_t landing_room(int) const override { return 0; }
  void graph_ready(sluice::Graph&) override { ready = true; }
  void graph_gone() noexcept override { gone_after_ready = ready; }
};

// Run in a death-test child: limits the address space to what the process uses now plus
// 96 MiB, so that stacks run out after a few dozen at most (a thread's 2-8 MiB, a task's
// 1 MiB), and builds an Engine of 200 copies, as tasks or each on a thread of its own. Exits
// 0 when the Engine threw and every filter a copy made was destroyed again; prints what it saw.
[[noreturn]] void start_more_copies_than_the_address_space_holds(bool tasks) {
  observed().slow_constructor_ms.store(20);
  sluice::topo::Topology topology = sluice::topo::parse_topology_text(
      "filters:\n  slow: {class: \"testing_filters::TestSlowConstructor\", copies: 200}\n", "test.yaml",
      SLUICE_TEST_DATA_DIR);
  sluice::check_loadable(topology);
  sluice::EngineOptions options;
  options.tasks = tasks;
  options.workers = 1;  // the same headroom for the tasks on any machine
  mallopt(M_ARENA_MAX, 1);  // no 64 MiB malloc arena per new thread inside the limit
  rlimit limit{};
  getrlimit(RLIMIT_AS, &limit);
  limit.rlim_cur = address_space_bytes() + (std::size_t{96} << 20);
  if (limit.rlim_cur == (std::size_t{96} << 20) || setrlimit(RLIMIT_AS, &limit) != 0) {
    std::fprintf(stderr, "could not limit the address space\n");
    std::_Exit(4);
  }
  RecordingWiring wiring;
  options.wiring = &wiring;
  try {
    sluice::Engine engine(topology, options);
    std::fprintf(stderr, "the Engine started all 200 copies\n");
    std::_Exit(2);
  } catch (const sluice::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
  const int made = observed().slow_constructed.load();
  const int destroyed = observed().slow_destroyed.load();
  std::fprintf(stderr, "filters made %d, destroyed %d; the wiring was %stold the graph is gone\n", made, destroyed,
               wiring.gone_after_ready ? "" : "not ");
  std::_Exit(made > 0 && made == destroyed && wiring.gone_after_ready ? 0 : 3);
}

// A copy that gets no thread or stack (the process ran out of address space, or of threads)
// fails the Engine's construction with an Error that names it and says what to do; the
// copies already started are stopped and their filters destroyed, and the wiring (the data
// plane) is told before the graph it delivers into dies. It used to end the process
// (a joinable std::thread destroyed with the Engine's state: std::terminate).
constexpr const char* kCannotStart =
    "cannot start filter 'slow' copy [0-9]+ \\([1-9][0-9]* of this process's 200 copies had started\\): "
    ".*ulimit -u, ulimit -v";

TEST_F(GraphFailureTest, ACopyThatCannotGetAThreadFailsTheEngineAndStopsTheOthers) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(start_more_copies_than_the_address_space_holds(false), ::testing::ExitedWithCode(0), kCannotStart);
}

TEST_F(GraphFailureTest, ACopyThatCannotGetATaskStackFailsTheEngineAndStopsTheOthers) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(start_more_copies_than_the_address_space_holds(true), ::testing::ExitedWithCode(0), kCannotStart);
}

TEST_F(GraphFailureTest, UnconnectedPortNamesFilterAndPort) {
  RunOutcome out = run_yaml(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 1}}
  ask:  {class: "testing_filters::TestAskPort", args: {port: left}}
streams:
  - {from: src.out, to: ask.in}
)");
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->filter, "ask");
  EXPECT_NE(out.failure->message.find("filter 'ask' (copy 0) asked for input port 'left'"), std::string::npos)
      << out.failure->message;
  EXPECT_NE(out.failure->message.find("its connected input ports are: in"), std::string::npos)
      << out.failure->message;
}

// A port name one typo from the topology's: the typo may be in either, and the message says both
// ways to fix it (it used to ask "did you mean 'inn'?", as if only the code could be wrong).
TEST_F(GraphFailureTest, APortNameNearTheTopologysSaysBothWaysToFixIt) {
  RunOutcome out = run_yaml(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 1}}
  ask:  {class: "testing_filters::TestAskPort", args: {port: in}}
streams:
  - {from: src.out, to: ask.inn}
)");
  ASSERT_TRUE(out.failure);
  EXPECT_NE(out.failure->message.find("the topology connects 'ask.inn' instead: write ask.in in the topology's "
                                      "stream, or ask for 'inn' in the filter's code"),
            std::string::npos)
      << out.failure->message;
}

// A key in args: that no copy asked for during the first unit is named once, with the closest
// key they asked for; a key only one copy asks for (the crash filter's `unit`, asked by the
// copy that `copy` names) is not.
TEST_F(GraphFailureTest, AnArgumentNoCopyReadIsNamedOnce) {
  ::testing::internal::CaptureStderr();
  RunOutcome out = run_yaml(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 10, cuont: 3}, copies: 2}
  sink: {class: Crash, library: )" SLUICE_CRASH_LIB R"(, copies: 2, args: {signal: segv, copy: 1, unit: 5}}
streams:
  - {from: src.out, to: sink.in}
work: [a, b]
)");
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_FALSE(out.failure) << out.failure->str();
  const std::string warning = "[src#0@local] warn: args.cuont (from the topology) was never read by testing_filters::TestSource; "
                              "did you mean 'count'?";
  EXPECT_NE(err.find(warning), std::string::npos) << err;
  EXPECT_EQ(err.find("args.cuont"), err.rfind("args.cuont")) << "said more than once: " << err;
  EXPECT_EQ(err.find("args.unit"), std::string::npos) << err;
}

// An output the code never asks for carries nothing: said once, with the ports it did ask for.
TEST_F(GraphFailureTest, AnOutputNoCopyAskedForIsNamedOnce) {
  ::testing::internal::CaptureStderr();
  RunOutcome out = run_yaml(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 10}, copies: 2}
  a:    {class: "testing_filters::TestSink"}
  b:    {class: "testing_filters::TestSink"}
streams:
  - {from: src.out, to: a.in}
  - {from: src.extra, to: b.in}
work: [one, two]
)");
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_FALSE(out.failure) << out.failure->str();
  EXPECT_NE(err.find("[src#0@local] warn: no copy of src asked for its output 'extra' (ctx.output(\"extra\")) in the "
                     "first unit of work, so src.extra -> b.in carried nothing from it (it asked for out)"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("'extra'"), err.rfind("'extra'")) << "said more than once: " << err;
  EXPECT_EQ(err.find("'out'"), std::string::npos) << err;
}

// from: and to: swapped: the port the code asks for is connected, at the stream's other end.
TEST_F(GraphFailureTest, AStreamWithFromAndToSwappedIsSaidSo) {
  RunOutcome out = run_yaml(R"(
filters:
  ask:  {class: "testing_filters::TestAskPort", args: {port: in}}
  sink: {class: "testing_filters::TestSink"}
streams:
  - {from: ask.in, to: sink.in}
)");
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->filter, "ask");
  EXPECT_NE(out.failure->message.find("filter 'ask' (copy 0) asked for input port 'in', but the topology has 'ask.in' "
                                      "as the from: end of a stream (an output); did you swap from: and to:?"),
            std::string::npos)
      << out.failure->message;
}

TEST_F(GraphFailureTest, WritingFromFinalizeIsAnError) {
  RunOutcome out = run_yaml(R"(
filters:
  w:    {class: "testing_filters::TestWriteInFinalize"}
  sink: {class: "testing_filters::TestSink"}
streams:
  - {from: w.out, to: sink.in}
)");
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->stage, "finalize");
  EXPECT_NE(out.failure->message.find("end of work was already sent"), std::string::npos) << out.failure->message;
}

TEST_F(GraphFailureTest, ResizingPastCapacityIsAnError) {
  RunOutcome out = run_yaml(R"(
filters:
  w:    {class: "testing_filters::TestOversize"}
  sink: {class: "testing_filters::TestSink"}
streams:
  - {from: w.out, to: sink.in, buffer_size: 1KiB}
)");
  ASSERT_TRUE(out.failure);
  EXPECT_NE(out.failure->message.find("exceeds the buffer's capacity of 1024 bytes; raise the buffer_size of stream "
                                      "w.out -> sink.in in the topology"),
            std::string::npos)
      << out.failure->message;
}

// The spinner never blocks on a stream and spins until the test releases it, after the run:
// the grace (3 s) is long enough for the sink, which may start on the spinner's worker, to be
// taken by another worker and unwind, so only the spinner is named, however loaded the machine.
TEST_F(GraphFailureTest, CopyStuckInUserCodeIsNamedAfterTheGrace) {
  sluice::EngineOptions options;
  options.abort_grace = std::chrono::seconds(3);
  RunOutcome out = run_yaml(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {throw_at: 0}}
  sink: {class: "testing_filters::TestSink"}
  spin: {class: "testing_filters::TestSpinner", args: {until_released: true}}
streams:
  - {from: src.out, to: sink.in}
)", options);
  // Let the spinner go and wait for it to leave, so that the copy the engine left behind
  // does not outlive the test's observations.
  observed().spinners_released.store(true);
  EXPECT_TRUE(sluice::testing::eventually([] { return observed().spinning.load() == 0; }))
      << "the spinner did not leave once released";
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // and its return path ends
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->filter, "src");
  ASSERT_EQ(out.stuck.size(), 1u);
  EXPECT_EQ(out.stuck[0], "spin#0 (in process)");
}

}  // namespace
}  // namespace testing_filters
