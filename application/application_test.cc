// The Application API embedded (sluice/application.h): units submitted from several
// threads, results checked buffer by buffer, failures reported to their own unit only.
#include "sluice/application.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <thread>
#include <vector>

#include "application/results_check.h"
#include "application/thousand_units.h"
#include "testing/process_resources.h"

namespace sluice {
namespace {

std::string topology_text(int sources, const std::string& extra_streams = "") {
  return std::string("name: app-test\n") +
         "filters:\n"
         "  src:   {class: AppSource, library: " SLUICE_APP_FILTERS_LIB ", copies: " + std::to_string(sources) + "}\n"
         "  stage: {class: AppStage, library: " SLUICE_APP_FILTERS_LIB "}\n"
         "streams:\n"
         "  - {from: src.out, to: stage.in, depth: 4, buffer_size: 4KiB}\n"
         "  - {from: stage.out, to: client, depth: 4, buffer_size: 4KiB}\n" + extra_streams;
}

Application open_app(int sources = 2) {
  return Application::from_text(topology_text(sources), "app-test.yaml", "/tmp");
}

// Runs `what` on a thread of its own; fails the test (and ends the process: the thread
// cannot be taken back) when it has not returned within 20 s.
template <typename F>
void returns_within_20s(const char* name, F what) {
  std::promise<void> done;
  std::future<void> returned = done.get_future();
  std::thread t([&] {
    what();
    done.set_value();
  });
  if (returned.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    std::fprintf(stderr, "%s did not return within 20 s\n", name);
    std::abort();
  }
  t.join();
}

TEST(Application, OneUnitDeliversEveryResultInOrderPerProducer) {
  Application app = open_app();
  app.start();
  Unit unit = app.submit("count=50 size=100");
  ResultsCheck check(unit.index(), 2, 50, 100);
  while (auto b = unit.results().read()) check.add(*b);
  const UnitReport report = unit.wait();
  ASSERT_TRUE(report.finished) << report.str();
  EXPECT_TRUE(check.complete()) << check.problem();
  // As the header says: "unit 3 [payload] finished in 0.012 s", seconds to the millisecond.
  EXPECT_TRUE(std::regex_match(report.str(), std::regex(R"(unit \d+ \[count=50 size=100\] finished in \d+\.\d{3} s)")))
      << report.str();
  bool saw_client_stream = false;
  for (const UnitStreamCount& s : report.streams) {
    if (s.stream == "stage.out -> client") {
      saw_client_stream = true;
      EXPECT_EQ(s.buffers, 100u);
      EXPECT_EQ(s.bytes, 100u * 100u);
    }
  }
  EXPECT_TRUE(saw_client_stream);
  app.stop();
}

// CPU seconds this process has used so far (every thread).
double process_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// A started application with no unit to run waits, it does not spin: over a second idle its
// process uses a small fraction of a CPU (it used a whole one: the runner looped).
TEST(Application, AnIdleApplicationDoesNotSpin) {
  Application app = open_app();
  app.start();
  Unit warm = app.submit("count=5");
  while (warm.results().read()) {
  }
  ASSERT_TRUE(warm.wait().finished);
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double used = process_cpu_seconds() - before;
  EXPECT_LT(used, 0.3) << "an idle application used " << used << " CPU seconds in one second";
  app.stop();
}

// The issue's bar: 1,000 units from 4 client threads on one deployment, every result set
// checked, filter objects created once (each source object counts the units it ran).
TEST(Application, ThousandUnitsFromFourThreads) {
  Application app = open_app();
  app.start();
  submit_thousand_units(app);
  EXPECT_EQ(app.units_ended(), 1000u);
  app.stop();
}

TEST(Application, AFailedUnitIsReportedToItsSubmitterOnlyAndTheNextSucceeds) {
  Application app = open_app();
  app.start();
  Unit before = app.submit("count=20");
  Unit failing = app.submit("count=20 fail=stage");
  Unit after = app.submit("count=20");
  ResultsCheck first(before.index(), 2, 20, 64);
  while (auto b = before.results().read()) first.add(*b);
  EXPECT_TRUE(before.wait().finished);
  EXPECT_TRUE(first.complete()) << first.problem();
  while (failing.results().read()) {
  }
  const UnitReport bad = failing.wait();
  EXPECT_FALSE(bad.finished);
  EXPECT_EQ(bad.filter, "stage");
  EXPECT_EQ(bad.copy, 0);
  EXPECT_EQ(bad.stage, "process");
  EXPECT_NE(bad.message.find("AppStage was told to fail"), std::string::npos) << bad.message;
  EXPECT_EQ(bad.index, failing.index());
  ResultsCheck third(after.index(), 2, 20, 64);
  while (auto b = after.results().read()) third.add(*b);
  const UnitReport good = after.wait();
  EXPECT_TRUE(good.finished) << good.str();
  EXPECT_TRUE(third.complete()) << third.problem();
  app.stop();
}

// A failed unit's deployment is replaced; the old one's threads and files must go with it,
// or a long-lived client (sluice serve) runs out of them after a few hundred failures. A
// result buffer the client kept from the failed unit stays valid meanwhile.
TEST(Application, FailedUnitsLeaveNoThreadsNorFilesBehindAndKeptResultsStayValid) {
  Application app = open_app();
  app.start();
  const auto fail_then_succeed = [&](std::vector<Buffer>* keep) {
    Unit failing = app.submit("count=40 fail=source");
    while (auto b = failing.results().read()) {
      // Only a few: the blocks a client holds are its producers' no more (flow control).
      if (keep != nullptr && keep->size() < 2) keep->push_back(std::move(*b));
    }
    EXPECT_FALSE(failing.wait().finished);
    Unit good = app.submit("count=20");
    while (good.results().read()) {
    }
    EXPECT_TRUE(good.wait().finished);
    return failing.index();
  };
  std::vector<Buffer> kept;
  const std::uint64_t kept_unit = fail_then_succeed(&kept);
  ASSERT_FALSE(kept.empty()) << "the source fails half way: some results came first";
  const testing::ProcessResources before;
  for (int i = 0; i < 20; ++i) fail_then_succeed(nullptr);
  const testing::ProcessResources after;
  // Each failed deployment used to keep its copies' threads and a file until stop().
  EXPECT_LE(after.threads, before.threads + 2) << "before: " << before.str() << "; after 20 failed units: " << after.str();
  EXPECT_LE(after.files, before.files + 2) << "before: " << before.str() << "; after 20 failed units: " << after.str();
  // Results of the first failed unit, checked byte for byte after its deployment went.
  ResultsCheck check(kept_unit, 2, 40, 64);
  for (const Buffer& b : kept) check.add(b);
  EXPECT_TRUE(check.intact()) << check.problem();
  kept.clear();
  app.stop();
}

TEST(Application, AUnitDroppedUnreadOrCancelledDoesNotBreakTheNext) {
  Application app = open_app();
  {
    Unit dropped = app.submit("count=200 size=2000");  // more than the stream holds
    ASSERT_TRUE(dropped.results().read().has_value());
  }  // destroyed half-read: the application drains the rest
  Unit slow = app.submit("count=1000 sleep_ms=1");
  ASSERT_TRUE(slow.results().read().has_value());
  slow.cancel();
  const UnitReport cancelled = slow.wait();
  EXPECT_FALSE(cancelled.finished);
  EXPECT_EQ(cancelled.stage, "cancelled");
  Unit next = app.submit("count=30");
  ResultsCheck check(next.index(), 2, 30, 64);
  while (auto b = next.results().read()) check.add(*b);
  EXPECT_TRUE(next.wait().finished);
  EXPECT_TRUE(check.complete()) << check.problem();
}

// Destroying a Unit never waits: a function that returns early with two units, the earlier
// half-read, destroys the later one first (locals go in reverse order). That destructor used
// to wait for its unit, which could not start before the earlier one's results were read,
// by the same thread: a hang. The units still run to their end, the later after the earlier.
TEST(Application, DestroyingALaterUnitWhileHoldingAnEarlierUnreadOneDoesNotWait) {
  Application app = open_app();
  returns_within_20s("an early return with two units", [&] {
    Unit first = app.submit("count=200 size=2000");  // more than the stream holds
    Unit second = app.submit("count=200 size=2000");
    ASSERT_TRUE(first.results().read().has_value());
  });
  Unit third = app.submit("count=30");
  ResultsCheck check(third.index(), 2, 30, 64);
  while (auto b = third.results().read()) check.add(*b);
  EXPECT_TRUE(third.wait().finished);
  EXPECT_TRUE(check.complete()) << check.problem();
  EXPECT_EQ(app.units_ended(), 3u);  // the two dropped ones ran to their end, before it
}

// stop() from two threads at once, and stop() beside abort() (as ~Application's): each
// returns (they used to join the runner thread twice, and one hung for good).
TEST(Application, StopFromTwoThreadsAtOnceReturnsInBoth) {
  for (int round = 0; round < 20; ++round) {
    Application app = open_app();
    EXPECT_TRUE(app.submit("count=2").wait().finished);
    returns_within_20s("two stop()s at once", [&] {
      std::thread a([&] { app.stop(); });
      std::thread b([&] { round % 2 == 0 ? app.stop() : app.abort(); });
      a.join();
      b.join();
    });
  }
}

// A client that reads a later unit's results first waits for the earlier unit, which cannot
// end before its own results are read: that used to wait forever in silence. The waiting
// read now says which unit holds it back and what to do, and goes on once that one is read.
TEST(Application, ReadingALaterUnitFirstSaysWhichUnitHoldsItBack) {
  Application app = open_app();
  app.start();
  Unit first = app.submit("count=20 size=100");
  Unit second = app.submit("count=20 size=100");
  Unit third = app.submit("count=2");  // waited for (wait() drops its results), not read
  ::testing::internal::CaptureStderr();
  std::atomic<bool> second_read{false};
  std::thread reader([&] {
    ResultsCheck check(second.index(), 2, 20, 100);
    while (auto b = second.results().read()) check.add(*b);
    EXPECT_TRUE(check.complete()) << check.problem();
    second_read = true;
  });
  std::optional<UnitReport> third_report;
  std::thread waiter([&] { third_report = third.wait(); });
  // The warning comes 5 s after the first unit started, no result of it read.
  std::this_thread::sleep_for(std::chrono::milliseconds(6500));
  EXPECT_FALSE(second_read.load()) << "the second unit ran before the first one's results were read";
  ResultsCheck check(first.index(), 2, 20, 100);
  while (auto b = first.results().read()) check.add(*b);
  EXPECT_TRUE(first.wait().finished);
  EXPECT_TRUE(check.complete()) << check.problem();
  reader.join();
  waiter.join();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(second_read.load());
  EXPECT_TRUE(second.wait().finished);
  ASSERT_TRUE(third_report.has_value());
  EXPECT_TRUE(third_report->finished) << third_report->str();
  const std::string expected = "unit " + std::to_string(second.index()) + "'s results are waited for, but unit " +
                               std::to_string(first.index()) + " runs first and no one has read its results for 5 s";
  EXPECT_NE(err.find(expected), std::string::npos) << err;
  // A wait() is held back the same way, and hears the same (it was silent).
  EXPECT_NE(err.find("unit " + std::to_string(third.index()) + "'s results are waited for, but unit " +
                     std::to_string(first.index()) + " runs first"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("Read unit " + std::to_string(first.index()) + "'s results"), std::string::npos) << err;
  // Said once, not every window.
  EXPECT_EQ(err.find(expected), err.rfind(expected)) << err;
  app.stop();
}

// The same wait is quiet while another thread reads the earlier unit, however slowly.
TEST(Application, AWaitBehindAUnitThatIsBeingReadIsQuiet) {
  Application app = open_app();
  app.start();
  Unit first = app.submit("count=15 size=100");  // 30 results, read over 6 s
  Unit second = app.submit("count=5 size=100");
  ::testing::internal::CaptureStderr();
  std::thread slow_reader([&] {
    while (auto b = first.results().read()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  });
  while (second.results().read()) {
  }
  slow_reader.join();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(first.wait().finished);
  EXPECT_TRUE(second.wait().finished);
  EXPECT_EQ(err.find("runs first and no one has read its results"), std::string::npos) << err;
  app.stop();
}

TEST(Application, StopFinishesQueuedUnitsAndRefusesNewOnes) {
  Application app = open_app();
  std::vector<Unit> units;
  for (int i = 0; i < 5; ++i) units.push_back(app.submit("count=3"));
  std::thread stopper([&] { app.stop(); });
  for (Unit& u : units) EXPECT_TRUE(u.wait().finished);
  stopper.join();
  EXPECT_THROW(app.submit("count=1"), Error);
}

// As Java's stop(): results nobody read are discarded, so stop() returns (it used to wait
// for ever, in silence, for someone to read them); a later read says they were discarded.
TEST(Application, StopDiscardsTheResultsNobodyRead) {
  Application app = open_app();
  Unit first = app.submit("count=2000 size=100");  // far more than the streams hold: it ends only once read
  Unit second = app.submit("count=10");
  app.stop();
  EXPECT_TRUE(first.wait().finished);
  EXPECT_TRUE(second.wait().finished);
  for (Unit* u : {&first, &second}) {
    try {
      (void)u->results().read();
      ADD_FAILURE() << "a read of discarded results returned";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("the application was stopped; the results of this unit that had not "
                                            "been read were discarded"),
                std::string::npos)
          << e.what();
    }
  }
}

// A unit read to the end before stop() keeps its results: nothing was discarded.
TEST(Application, StopLeavesResultsReadToTheEndAlone) {
  Application app = open_app();
  Unit unit = app.submit("count=5");
  while (unit.results().read()) {
  }
  app.stop();
  EXPECT_FALSE(unit.results().read().has_value());
  EXPECT_TRUE(unit.wait().finished);
}

// A result buffer held past stop() still points into live memory (its pool waits for it); one
// held past the Application's end keeps its pool for good, and a warning says so.
TEST(Application, ResultBuffersHeldPastStopStayValid) {
  std::optional<Buffer> held;
  std::vector<std::byte> copy;
  ::testing::internal::CaptureStderr();
  {
    Application app = open_app(1);
    Unit unit = app.submit("count=3 size=1000");
    held = unit.results().read();
    ASSERT_TRUE(held.has_value());
    copy.assign(held->data(), held->data() + held->size());
    app.stop();
    EXPECT_TRUE(unit.wait().finished);
    ASSERT_EQ(held->size(), copy.size());
    EXPECT_EQ(std::memcmp(held->data(), copy.data(), copy.size()), 0) << "the held buffer changed under its holder";
    std::memset(held->data(), 0x5a, held->size());  // still the holder's to write
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("result buffers were still held when the application went; the memory of their pools ("),
            std::string::npos)
      << err;
  held.reset();  // back into the pool the application left behind
}

// A queued unit that is cancelled ends at once, not when the unit before it gets out of the
// way (a copy busy in its own code may take a while).
TEST(Application, ACancelledQueuedUnitEndsAtOnce) {
  Application app = open_app();
  Unit running = app.submit("count=100000 sleep_ms=1");  // 100 s unless cancelled
  Unit queued = app.submit("count=3");
  ASSERT_TRUE(running.results().read().has_value());
  queued.cancel();
  UnitReport report;
  returns_within_20s("a cancelled queued unit's wait()", [&] { report = queued.wait(); });
  EXPECT_FALSE(report.finished);
  EXPECT_EQ(report.stage, "cancelled");
  EXPECT_NE(report.message.find("before it ran"), std::string::npos) << report.message;
  EXPECT_TRUE(running.results().read().has_value()) << "the unit before it is still running";
  running.cancel();
  EXPECT_FALSE(running.wait().finished);
  Unit next = app.submit("count=3");
  EXPECT_TRUE(next.wait().finished);
  app.stop();
}

// cancel() ends a read() that waits at once, also while every copy is busy in its own code
// (the source sleeps 8 s before its first result): the read waited for the copy to return.
TEST(Application, CancelEndsAWaitingReadWhileTheCopiesAreBusyInTheirOwnCode) {
  Application app = open_app(1);
  Unit unit = app.submit("count=2 sleep_ms=8000");
  std::atomic<bool> ended{false};
  std::thread reader([&] {
    while (unit.results().read()) {
    }
    ended = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the reader waits by now
  const auto cancelled = std::chrono::steady_clock::now();
  unit.cancel();
  while (!ended && std::chrono::steady_clock::now() - cancelled < std::chrono::seconds(4)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(ended.load()) << "read() still waits 4 s after cancel(), for a copy busy in its own code";
  reader.join();
  const UnitReport report = unit.wait();
  EXPECT_FALSE(report.finished);
  EXPECT_EQ(report.stage, "cancelled");
  app.stop();
}

TEST(Application, AbortCancelsWhatIsQueued) {
  Application app = open_app();
  Unit running = app.submit("count=100000 sleep_ms=1");
  std::vector<Unit> queued;
  for (int i = 0; i < 3; ++i) queued.push_back(app.submit("count=3"));
  ASSERT_TRUE(running.results().read().has_value());
  app.abort();
  EXPECT_FALSE(running.wait().finished);
  for (Unit& u : queued) {
    const UnitReport r = u.wait();
    EXPECT_FALSE(r.finished);
    EXPECT_EQ(r.stage, "cancelled");
  }
}

// Destroying an Application that still has unread units must not wait for them.
TEST(Application, DestroyingItCancelsUnreadUnits) {
  std::vector<Unit> units;
  {
    Application app = open_app();
    for (int i = 0; i < 3; ++i) units.push_back(app.submit("count=1000 size=2000"));
    ASSERT_TRUE(units[0].results().read().has_value());  // running, holding back its producers
  }
  for (Unit& u : units) {
    const UnitReport r = u.wait();
    EXPECT_FALSE(r.finished);
    EXPECT_EQ(r.stage, "cancelled");
  }
}

// A unit whose producers are done but whose results sit unread (they fit in the stream):
// abort(), and so destroying the Application, cancels it instead of waiting for a reader.
TEST(Application, AbortDoesNotWaitForResultsNobodyReads) {
  Application app = open_app();
  Unit unit = app.submit("count=1");  // two results, one read
  ASSERT_TRUE(unit.results().read().has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the sources are done
  returns_within_20s("abort()", [&] { app.abort(); });
  const UnitReport report = unit.wait();
  EXPECT_FALSE(report.finished);
  EXPECT_EQ(report.stage, "cancelled");
  EXPECT_NE(report.message.find("the application was aborted"), std::string::npos) << report.message;
}

TEST(Application, DestroyingItDoesNotWaitForAHalfReadUnitHeldOutside) {
  std::vector<Unit> units;
  std::optional<Buffer> held;
  returns_within_20s("~Application", [&] {
    Application app = open_app();
    units.push_back(app.submit("count=2"));  // four results, one read and held
    held = units[0].results().read();
    ASSERT_TRUE(held.has_value());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  });
  EXPECT_FALSE(units[0].wait().finished);
  held.reset();
}

// ApplicationOptions::log_to_stderr = false: what the application logs (here, the warning for
// result buffers held past its end) reaches no stderr; by default it does. (The option did
// nothing: an embedding program could not keep the lines off its stderr.)
TEST(Application, LogToStderrFalseKeepsItsLinesOffStderr) {
  for (const bool to_stderr : {true, false}) {
    ApplicationOptions options;
    options.log_to_stderr = to_stderr;
    std::optional<Buffer> held;
    ::testing::internal::CaptureStderr();
    {
      Application app = Application::from_text(topology_text(1), "app-test.yaml", "/tmp", options);
      Unit unit = app.submit("count=3");
      held = unit.results().read();
      app.stop();
    }
    const std::string err = ::testing::internal::GetCapturedStderr();
    ASSERT_TRUE(held.has_value());
    held.reset();
    EXPECT_EQ(err.find("result buffers were still held") != std::string::npos, to_stderr)
        << "log_to_stderr " << to_stderr << ": " << err;
    if (!to_stderr) EXPECT_EQ(err, "");
  }
}

// work: in the topology is sluice run's; an Application says it does not run it (it was
// silently ignored), and runs only what is submitted.
TEST(Application, SaysThatTheTopologysWorkIsNotRun) {
  ::testing::internal::CaptureStderr();
  Application app = Application::from_text(topology_text(1) + "work: [count=1, count=2]\n", "app-test.yaml", "/tmp");
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("app-test.yaml: the topology's work: (2 unit(s)) is not run: only submitted units run "
                     "(Application::submit, or sluice submit to a sluice serve)"),
            std::string::npos)
      << err;
  EXPECT_TRUE(app.submit("count=3").wait().finished);
  app.stop();
  EXPECT_EQ(app.units_ended(), 1u);
}

// A report's text shows a long payload cut, as sluice run and serve do (it printed all of it,
// megabytes for a large query); the report's work keeps the whole.
TEST(Application, AReportsTextCutsALongPayload) {
  Application app = open_app(1);
  const std::string payload = "count=1 " + std::string(100000, 'x');
  const UnitReport report = app.submit(payload).wait();
  app.stop();
  EXPECT_EQ(report.work, payload);
  EXPECT_LT(report.str().size(), 400u) << report.str().substr(0, 400);
  EXPECT_NE(report.str().find("... (100008 bytes)]"), std::string::npos) << report.str().substr(0, 400);
}

// A moved-from Application or Unit says so from every call (name() used to crash, and
// index() to answer 0, a real unit's index).
TEST(Application, AMovedFromApplicationOrUnitSaysSo) {
  Application app = open_app(1);
  Unit unit = app.submit("count=1");
  Unit taken = std::move(unit);
  EXPECT_THROW((void)unit.index(), Error);
  EXPECT_THROW((void)unit.wait(), Error);
  EXPECT_EQ(taken.index(), 0u);
  EXPECT_TRUE(taken.wait().finished);
  Application moved = std::move(app);
  for (const auto& call : std::vector<std::function<void()>>{
           [&] { (void)app.name(); }, [&] { (void)app.remote(); }, [&] { (void)app.units_ended(); },
           [&] { (void)app.submit("count=1"); }}) {
    try {
      call();
      ADD_FAILURE() << "a call on a moved-from Application returned";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("on a moved-from Application"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(moved.name(), "app-test");
  moved.stop();
}

TEST(Application, WithoutAClientStreamResultsAreEmpty) {
  const std::string text = std::string("name: no-client\nfilters:\n") +
                           "  src:   {class: AppSource, library: " SLUICE_APP_FILTERS_LIB "}\n"
                           "  stage: {class: AppStage, library: " SLUICE_APP_FILTERS_LIB "}\n"
                           "streams:\n  - {from: src.out, to: stage.in}\n";
  Application app = Application::from_text(text, "no-client.yaml", "/tmp");
  Unit unit = app.submit("count=5");
  EXPECT_FALSE(unit.results().read().has_value());
  EXPECT_TRUE(unit.wait().finished);
}

TEST(Application, AStartThatFailsNamesWhatFailed) {
  const std::string text = std::string("name: missing\nfilters:\n") +
                           "  src:   {class: NoSuchFilter, library: " SLUICE_APP_FILTERS_LIB "}\n"
                           "streams:\n  - {from: src.out, to: client}\n";
  Application app = Application::from_text(text, "missing.yaml", "/tmp");
  try {
    app.start();
    FAIL() << "start() succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("NoSuchFilter"), std::string::npos) << e.what();
  }
  Unit unit = app.submit("count=1");
  const UnitReport r = unit.wait();
  EXPECT_FALSE(r.finished);
  EXPECT_NE(r.message.find("NoSuchFilter"), std::string::npos) << r.message;
}

TEST(Application, HalfASetOfCertificatesIsRefusedEmbeddedToo) {
  ApplicationOptions options;
  options.cert_file = "console.crt";  // no key_file, no ca_file
  try {
    Application::from_text(topology_text(1), "app-test.yaml", "/tmp", options);
    FAIL() << "an application with cert_file alone was opened";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "certificates need all three of cert_file, key_file and ca_file");
  }
}

TEST(Application, DataPortsThatAreNoRangeAreRefusedAtOpenSayingWhatToWrite) {
  ApplicationOptions options;
  options.data_ports = "7810-7801";
  try {
    Application::from_text(topology_text(1), "app-test.yaml", "/tmp", options);
    FAIL() << "an application with data_ports 7810-7801 was opened";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "data_ports: '7810-7801' is not a port range: 7810 is above 7801; write the lower port first (e.g. "
                 "7801-7810)");
  }
}

}  // namespace
}  // namespace sluice
