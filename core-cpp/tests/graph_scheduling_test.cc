// C++ copies run as tasks on a few workers (sched/scheduler.h). These tests are about the
// scheduling itself, not its speed: far more copies than cores still deliver every buffer
// once and in order; a copy that never waits on a stream cannot starve the copies that share
// its worker; a copy blocked in a system call does not hold back the others for long.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include <stdlib.h>

#include "testing/graph_harness.h"
#include "testing/graph_test_filters.h"

namespace testing_filters {
namespace {

// Writes, `rounds` times, depth + 1 buffers to `a` and then one to `b`.
class AheadOnOneOutput : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& a = ctx.output("a");
    auto& b = ctx.output("b");
    const auto depth = ctx.arg<std::uint64_t>("depth");
    const auto rounds = ctx.arg<std::uint64_t>("rounds");
    for (std::uint64_t r = 0; r < rounds; ++r) {
      for (std::uint64_t i = 0; i <= depth; ++i) a.write(a.allocate());
      b.write(b.allocate());
    }
  }
};
SLUICE_FILTER(testing_filters::AheadOnOneOutput)

// Reads one buffer from `a` and holds it while it reads one from `b`, then the rest of the
// round from `a`; first waits a little, so that `a` is full when it starts.
class HoldOneWhileReadingTheOther : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& a = ctx.input("a");
    auto& b = ctx.input("b");
    const auto depth = ctx.arg<std::uint64_t>("depth");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (;;) {
      std::optional<sluice::Buffer> held = a.read();
      if (!held) break;
      if (!b.read()) throw sluice::Error("b ended before a");
      for (std::uint64_t i = 0; i < depth; ++i) {
        if (!a.read()) throw sluice::Error("a round was cut short");
      }
    }
  }
};
SLUICE_FILTER(testing_filters::HoldOneWhileReadingTheOther)

class GraphSchedulingTest : public ::testing::Test {
 protected:
  void SetUp() override { observed().reset(); }

  void expect_each_exactly_once(const std::string& sink, int sources, std::uint64_t per_source) {
    std::lock_guard<std::mutex> lock(observed().mu);
    EXPECT_EQ(observed().violations, std::vector<std::string>{});
    auto& arrivals = observed().arrivals[sink];
    ASSERT_EQ(arrivals.size(), static_cast<std::size_t>(sources));
    for (auto& [source, counts] : arrivals) {
      ASSERT_EQ(counts.size(), per_source) << "source " << source;
      std::uint64_t wrong = 0;
      for (std::uint32_t c : counts) wrong += c != 1;
      EXPECT_EQ(wrong, 0u) << "source " << source << ": seqs not seen exactly once";
    }
  }

  // run_yaml with a watchdog: a run that hangs fails the test (after `limit`) instead of
  // hanging the suite.
  RunOutcome run_within(const std::string& yaml, sluice::EngineOptions options, std::chrono::seconds limit) {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    RunOutcome out;
    std::thread runner([&] {
      out = run_yaml(yaml, options);
      std::lock_guard<std::mutex> lock(mu);
      done = true;
      cv.notify_all();
    });
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, limit, [&] { return done; })) {
      lock.unlock();
      ADD_FAILURE() << "the run did not finish within " << limit.count() << " s";
      runner.detach();  // the process is failing anyway; do not hang on it
      return out;
    }
    lock.unlock();
    runner.join();
    return out;
  }
};

TEST_F(GraphSchedulingTest, FortyCopiesOnTwoWorkersDeliverEveryBufferOnceInOrder) {
  sluice::EngineOptions options;
  options.workers = 2;
  RunOutcome out = run_within(R"(
defaults: {buffer_size: 256B, depth: 8}
filters:
  src:  {class: "testing_filters::TestSource", copies: 10, args: {count: 20000, size: 64}}
  a:    {class: "testing_filters::TestRelay", copies: 10}
  b:    {class: "testing_filters::TestRelay", copies: 10}
  sink: {class: "testing_filters::TestSink", copies: 10}
streams:
  - {from: src.out, to: a.in, policy: round_robin}
  - {from: a.out, to: b.in, policy: demand_driven}
  - {from: b.out, to: sink.in, policy: by_key}
work: [one, two]
)",
                              options, std::chrono::seconds(120));
  ASSERT_FALSE(out.failure) << out.failure->str();
  for (const auto& s : out.streams) EXPECT_EQ(s.buffers, 2u * 10u * 20000u) << s.label;
  // Two units: every (source, seq) twice in all, each unit once.
  std::lock_guard<std::mutex> lock(observed().mu);
  EXPECT_EQ(observed().violations, std::vector<std::string>{});
  auto& arrivals = observed().arrivals["sink"];
  ASSERT_EQ(arrivals.size(), 10u);
  for (auto& [source, counts] : arrivals) {
    ASSERT_EQ(counts.size(), 20000u) << "source " << source;
    std::uint64_t wrong = 0;
    for (std::uint32_t c : counts) wrong += c != 2;
    EXPECT_EQ(wrong, 0u) << "source " << source;
  }
}

TEST_F(GraphSchedulingTest, CopiesThatNeverWaitOnAStreamDoNotStarveTheOthers) {
  // Three spinners (one more than there are workers), busy in their own code until the sink has read
  // everything; the pipeline's copies wait behind them. Unless another worker takes them
  // over, nothing ever moves (and the spinners give up after 60 s and fail the run).
  sluice::EngineOptions options;
  options.workers = 2;
  RunOutcome out = run_within(R"(
defaults: {buffer_size: 256B, depth: 16}
filters:
  spin: {class: "testing_filters::TestSpinner", copies: 3, args: {until_released: true}}
  src:  {class: "testing_filters::TestSource", args: {count: 50000}}
  mid:  {class: "testing_filters::TestRelay"}
  sink: {class: "testing_filters::TestSink", args: {release_spinners: true}}
streams:
  - {from: src.out, to: mid.in}
  - {from: mid.out, to: sink.in}
)",
                              options, std::chrono::seconds(90));
  ASSERT_FALSE(out.failure) << out.failure->str();
  expect_each_exactly_once("sink", 1, 50000);
}

TEST_F(GraphSchedulingTest, ACopyAsleepInASystemCallDoesNotHoldBackItsWorkersOtherCopies) {
  // One consumer copy sleeps (as blocking I/O would) until the other copy of the same stream
  // has read 2,990 of the 3,000 buffers, then 2 ms per buffer; the source and the copy that
  // keeps up share workers with it. They must keep running while it sleeps: were they held
  // back, the gate would never open and the run would not end (run_within fails it).
  sluice::EngineOptions options;
  options.workers = 2;
  RunOutcome out = run_within(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 3000}}
  sink: {class: "testing_filters::TestSink", copies: 2,
         args: {slow_copy: 0, wait_for_gate: true, sleep_us: 2000, open_gate_after: 2990}}
streams:
  - {from: src.out, to: sink.in, policy: demand_driven, depth: 4}
)",
                              options, std::chrono::seconds(60));
  ASSERT_FALSE(out.failure) << out.failure->str();
  expect_each_exactly_once("sink", 1, 3000);
  std::lock_guard<std::mutex> lock(observed().mu);
  auto& received = observed().received["sink"];
  // The sleeper holds at most its queue (4) and the last ten.
  EXPECT_LE(received[0], 14u) << "slow copy got " << received[0] << ", fast copy " << received[1];
}

// A stream's depth is what may be in flight besides what the consumer holds: a consumer
// that holds one buffer from `a` while it waits on `b` leaves room in `a` for the depth, so
// their common producer gets past its depth + 1st write to `a` and on to `b`. (Reading runs
// in place from the queue's cells once broke this: the held buffer kept its cell.)
TEST_F(GraphSchedulingTest, AConsumerHoldingABufferFromOneInputLeavesTheDepthForItsProducer) {
  for (const bool tasks : {true, false}) {
    SCOPED_TRACE(tasks ? "tasks" : "threads");
    sluice::EngineOptions options;
    options.workers = 2;
    options.tasks = tasks;
    RunOutcome out = run_within(R"(
defaults: {buffer_size: 64B, depth: 8}
filters:
  src:  {class: "testing_filters::AheadOnOneOutput", args: {depth: 8, rounds: 2000}}
  sink: {class: "testing_filters::HoldOneWhileReadingTheOther", args: {depth: 8}}
streams:
  - {from: src.a, to: sink.a}
  - {from: src.b, to: sink.b}
)",
                                options, std::chrono::seconds(60));
    ASSERT_FALSE(out.failure) << out.failure->str();
    for (const auto& s : out.streams) {
      EXPECT_EQ(s.buffers, s.label.find(".a") != std::string::npos ? 2000u * 9u : 2000u) << s.label;
    }
  }
}

TEST_F(GraphSchedulingTest, ThreadsOnlyStillWorks) {
  // The scheduler can be turned off (EngineOptions::tasks): every copy on its own thread.
  sluice::EngineOptions options;
  options.tasks = false;
  RunOutcome out = run_within(R"(
filters:
  src:  {class: "testing_filters::TestSource", copies: 3, args: {count: 10000}}
  sink: {class: "testing_filters::TestSink", copies: 3}
streams:
  - {from: src.out, to: sink.in, policy: by_key}
)",
                              options, std::chrono::seconds(60));
  ASSERT_FALSE(out.failure) << out.failure->str();
  expect_each_exactly_once("sink", 3, 10000);
}

// Packed on one worker, spread over both, or the scheduler's trial between the two (which
// may move the copies while they run): the same buffers arrive, each once, in order per
// source. (Where the copies go is sched/scheduler_test.cc's.)
TEST_F(GraphSchedulingTest, EveryLayoutDeliversEveryBufferOnceInOrder) {
  for (const auto layout : {sluice::sched::LayoutChoice::kPacked, sluice::sched::LayoutChoice::kSpread,
                            sluice::sched::LayoutChoice::kAuto}) {
    SCOPED_TRACE(static_cast<int>(layout));
    observed().reset();
    sluice::EngineOptions options;
    options.workers = 2;
    options.layout = layout;
    RunOutcome out = run_within(R"(
defaults: {buffer_size: 128B, depth: 64}
filters:
  src:  {class: "testing_filters::TestSource", copies: 3, args: {count: 200000, size: 64}}
  a:    {class: "testing_filters::TestRelay", copies: 2}
  b:    {class: "testing_filters::TestRelay", copies: 2}
  sink: {class: "testing_filters::TestSink", copies: 3}
streams:
  - {from: src.out, to: a.in, policy: round_robin}
  - {from: a.out, to: b.in}
  - {from: b.out, to: sink.in, policy: by_key}
)",
                                options, std::chrono::seconds(120));
    ASSERT_FALSE(out.failure) << out.failure->str();
    for (const auto& st : out.streams) EXPECT_EQ(st.buffers, 3u * 200000u) << st.label;
    expect_each_exactly_once("sink", 3, 200000);
  }
}

// Sets an environment variable for its scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

TEST_F(GraphSchedulingTest, AnUnknownLayoutStopsTheRunSayingWhatToSet) {
  const sluice::topo::Topology topology = sluice::topo::parse_topology_text(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 10}}
  sink: {class: "testing_filters::TestSink"}
streams:
  - {from: src.out, to: sink.in}
)",
                                                                           "test.yaml", SLUICE_TEST_DATA_DIR);
  ScopedEnv layout("SLUICE_LAYOUT", "sideways");
  std::string message;
  try {
    sluice::Engine engine(topology, {});
  } catch (const sluice::Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("SLUICE_LAYOUT 'sideways' is not auto, packed or spread"), std::string::npos) << message;
  // A layout the program chose is not the environment's to change: the run starts. (An
  // Engine is destroyed after start(): before it, copies still creating their filters count
  // as stuck and are left behind.)
  sluice::EngineOptions options;
  options.layout = sluice::sched::LayoutChoice::kPacked;
  std::optional<sluice::Engine> engine;
  ASSERT_NO_THROW(engine.emplace(topology, options));
  const std::optional<sluice::Failure> failure = engine->start();
  EXPECT_FALSE(failure) << failure->str();
}

}  // namespace
}  // namespace testing_filters
