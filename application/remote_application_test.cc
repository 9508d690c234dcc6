// The Application API across two real host daemons: results cross the data plane to this
// process (the client), units from several threads, failures, a lost client reader.
#include <fcntl.h>
#include <signal.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "application/daemons_fixture.h"
#include "application/results_check.h"
#include "application/thousand_units.h"
#include "testing/process_resources.h"
#include "sluice/application.h"
#include "sluice/filter.h"

namespace sluice {
namespace {

// src copies on both hosts, the stage on b, results to this process.
const std::string kTopology = std::string("name: app-remote\n") +
                              "hosts: {a: 127.0.0.1:1, b: 127.0.0.1:1}\n"  // replaced by --hosts
                              "filters:\n"
                              "  src:   {class: AppSource, library: " SLUICE_APP_FILTERS_LIB ", place: {a: 1, b: 1}}\n"
                              "  stage: {class: AppStage, library: " SLUICE_APP_FILTERS_LIB ", place: {b: 1}}\n"
                              "streams:\n"
                              "  - {from: src.out, to: stage.in, depth: 4, buffer_size: 4KiB}\n"
                              "  - {from: stage.out, to: client, depth: 4, buffer_size: 4KiB}\n";

class RemoteApplication : public ::testing::Test {
 protected:
  RemoteApplication() : daemons_(SLUICE_SLUICED, {"a", "b"}) {}
  Application open_app() {
    ApplicationOptions options;
    options.hosts = daemons_.hosts();
    options.token_file = daemons_.token_file();
    return Application::from_text(kTopology, "app-remote.yaml", "/tmp", options);
  }
  // A long unit under way (one result read), and host b's app daemon (-1 and a test
  // failure when there is not one).
  struct UnderWay {
    Unit unit;
    pid_t app_daemon_on_b;
  };
  UnderWay unit_under_way(Application& app);
  HostDaemons daemons_;
};

TEST_F(RemoteApplication, ThousandUnitsFromFourThreads) {
  Application app = open_app();
  ASSERT_TRUE(app.remote());
  app.start();
  submit_thousand_units(app, 50);
  app.stop();
}

TEST_F(RemoteApplication, AFailedUnitIsReportedWithItsHostAndTheNextSucceeds) {
  Application app = open_app();
  app.start();
  Unit failing = app.submit("count=20 fail=stage");
  Unit after = app.submit("count=20");
  const UnitReport bad = failing.wait();
  EXPECT_FALSE(bad.finished);
  EXPECT_EQ(bad.filter, "stage");
  EXPECT_EQ(bad.host, "b");
  EXPECT_EQ(bad.stage, "process");
  EXPECT_NE(bad.message.find("AppStage was told to fail"), std::string::npos) << bad.message;
  EXPECT_EQ(bad.crash, "") << "an exception is no crash";
  ResultsCheck check(after.index(), 2, 20, 64);
  while (auto b = after.results().read()) check.add(*b);
  const UnitReport good = after.wait();
  EXPECT_TRUE(good.finished) << good.str();
  EXPECT_TRUE(check.complete()) << check.problem();
  // The failed deployment's app daemons ended with it: one per host is left, not two. (Up
  // to 60 s: their host daemons give them a shutdown grace, and a loaded machine is slow.)
  int apps = 0;
  for (int i = 0; i < 1200 && (apps = daemons_.app_daemons()) != 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(apps, 2);
}

// Each failed unit's deployment goes with its client data plane (its event loop's files)
// and threads: a long-lived serve used to gain three files per failure until EMFILE.
TEST_F(RemoteApplication, FailedUnitsLeaveNoThreadsNorFilesBehind) {
  Application app = open_app();
  app.start();
  const auto fail_then_succeed = [&] {
    Unit failing = app.submit("count=20 fail=stage");
    EXPECT_FALSE(failing.wait().finished);
    Unit good = app.submit("count=20");
    while (good.results().read()) {
    }
    const UnitReport report = good.wait();
    EXPECT_TRUE(report.finished) << report.str();
  };
  fail_then_succeed();
  const testing::ProcessResources before;
  for (int i = 0; i < 6; ++i) fail_then_succeed();
  const testing::ProcessResources after;
  EXPECT_LE(after.threads, before.threads + 2) << "before: " << before.str() << "; after 6 failed units: " << after.str();
  EXPECT_LE(after.files, before.files + 2) << "before: " << before.str() << "; after 6 failed units: " << after.str();
  app.stop();
}

TEST_F(RemoteApplication, AReaderThatGoesAwayDoesNotBreakTheDeployment) {
  Application app = open_app();
  {
    Unit dropped = app.submit("count=300 size=4000");  // more than the credit windows hold
    ASSERT_TRUE(dropped.results().read().has_value());
  }  // destroyed half-read
  Unit cancelled = app.submit("count=100000 sleep_ms=1");
  ASSERT_TRUE(cancelled.results().read().has_value());
  cancelled.cancel();
  const UnitReport r = cancelled.wait();
  EXPECT_FALSE(r.finished);
  EXPECT_EQ(r.stage, "cancelled");
  Unit next = app.submit("count=30");
  ResultsCheck check(next.index(), 2, 30, 64);
  while (auto b = next.results().read()) check.add(*b);
  EXPECT_TRUE(next.wait().finished);
  EXPECT_TRUE(check.complete()) << check.problem();
}

// A deployment stays up while no unit runs, however long: the host daemons close a console
// they have not heard from for 3 s, so an idle Application must keep sending heartbeats. The
// unit after the pause runs on the same filter objects (their ids, and the units they ran).
TEST_F(RemoteApplication, ADeploymentOutlivesAnIdlePauseWithItsFilterObjects) {
  Application app = open_app();
  app.start();
  ResultsCheck first(0, 2, 20, 64);
  {
    Unit u = app.submit("count=20");
    while (auto b = u.results().read()) first.add(*b);
    ASSERT_TRUE(u.wait().finished);
    ASSERT_TRUE(first.complete()) << first.problem();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(4500));  // longer than the daemons' 3 s
  Unit after = app.submit("count=20");
  ResultsCheck second(after.index(), 2, 20, 64);
  while (auto b = after.results().read()) second.add(*b);
  const UnitReport r = after.wait();
  ASSERT_TRUE(r.finished) << r.str();
  ASSERT_TRUE(second.complete()) << second.problem();
  EXPECT_EQ(second.object_ids(), first.object_ids()) << "the pause cost the deployment its filter objects";
  for (const auto& [copy, units] : second.units_seen()) EXPECT_EQ(units, 1u) << "copy " << copy;
  EXPECT_EQ(daemons_.app_daemons(), 2);  // one per host: still the first deployment's
}

// An app daemon killed mid-unit: that unit's report names its host and the copies that went
// with it, the next unit runs on a fresh deployment, and the program's stderr is left alone
// (the client end's data plane used to log the lost connection there as an error).
RemoteApplication::UnderWay RemoteApplication::unit_under_way(Application& app) {
  app.start();
  Unit unit = app.submit("count=100000 sleep_ms=1");
  EXPECT_TRUE(unit.results().read().has_value());
  const std::vector<pid_t> on_b = daemons_.app_daemon_pids(1);
  EXPECT_EQ(on_b.size(), 1u);
  return {std::move(unit), on_b.empty() ? -1 : on_b.front()};
}

TEST_F(RemoteApplication, AKilledAppDaemonFailsItsUnitNamingHostAndCopies) {
  Application app = open_app();
  auto [unit, on_b] = unit_under_way(app);
  ASSERT_GT(on_b, 0);
  ::testing::internal::CaptureStderr();
  ::kill(on_b, SIGKILL);
  const UnitReport report = unit.wait();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_FALSE(report.finished);
  EXPECT_EQ(report.host, "b");
  EXPECT_NE(report.message.find("host b ran src#1, stage#0"), std::string::npos) << report.message;
  EXPECT_EQ(report.crash, "SIGKILL") << report.str();
  EXPECT_EQ(err.find("[error] sluice data plane (client)"), std::string::npos) << err;
  EXPECT_TRUE(app.submit("count=5").wait().finished);
  app.stop();
}

// A copy that dies of SIGSEGV: the report says so in `crash`, for a program that sets such a
// payload aside instead of retrying it, and still names the copy; the next unit runs.
TEST_F(RemoteApplication, ACrashingCopyIsReportedWithItsSignalAndTheNextUnitRuns) {
  Application app = open_app();
  app.start();
  ::testing::internal::CaptureStderr();
  const UnitReport report = app.submit("count=20 crash=stage").wait();
  ::testing::internal::GetCapturedStderr();  // the crash line, said on stderr too: not checked here
  EXPECT_FALSE(report.finished);
  EXPECT_EQ(report.crash, "SIGSEGV") << report.str();
  EXPECT_EQ(report.filter, "stage") << report.str();
  EXPECT_EQ(report.host, "b");
  EXPECT_EQ(report.stage, "process");
  EXPECT_NE(report.message.find("crashed with SIGSEGV in process"), std::string::npos) << report.message;
  // b's app daemon died before its final counts: the report says the counts are lower bounds.
  EXPECT_TRUE(std::any_of(report.partial_counts.begin(), report.partial_counts.end(),
                          [](const std::string& h) { return h.starts_with("b, "); }))
      << ::testing::PrintToString(report.partial_counts);
  const UnitReport next = app.submit("count=5").wait();
  EXPECT_TRUE(next.finished);
  EXPECT_TRUE(next.partial_counts.empty()) << ::testing::PrintToString(next.partial_counts);
  app.stop();
}

// A frozen app daemon (SIGSTOP) on b: host a's data connection from it goes silent at 3 s,
// a consequence; b's host daemon names the cause at 4 s. The report names b (it named a, the
// healthy host that noticed: a program acting on report.host picked the wrong one).
TEST_F(RemoteApplication, AFrozenAppDaemonIsNamedNotTheHostThatHeardNothingFromIt) {
  Application app = open_app();
  auto [unit, on_b] = unit_under_way(app);
  ASSERT_GT(on_b, 0);
  ::kill(on_b, SIGSTOP);
  const UnitReport report = unit.wait();
  EXPECT_FALSE(report.finished);
  EXPECT_EQ(report.host, "b") << report.str();
  EXPECT_EQ(report.stage, "app daemon") << report.str();
  EXPECT_NE(report.message.find("sent no heartbeat"), std::string::npos) << report.message;
  ::kill(on_b, SIGCONT);  // its host daemon killed it already; in case it did not
  EXPECT_TRUE(app.submit("count=5").wait().finished);
  app.stop();
}

// What start() throws with `options` ("" and a test failure when it does not throw).
std::string start_error(const ApplicationOptions& options) {
  Application app = Application::from_text(kTopology, "app-remote.yaml", "/tmp", options);
  try {
    app.start();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "start() succeeded";
  return "";
}

// What open() throws for `yaml` with `options` ("" and a test failure when it does not throw).
std::string open_error(const std::string& yaml, const std::string& name, const ApplicationOptions& options) {
  try {
    Application app = Application::from_text(yaml, name, "/tmp", options);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "open() succeeded";
  return "";
}

TEST_F(RemoteApplication, AnUnreachableHostFailsStartNamingIt) {
  ApplicationOptions options;
  options.hosts = "a=127.0.0.1:1,b=127.0.0.1:1";
  options.token_file = daemons_.token_file();
  // The reason reaches the caller (a submitter of sluice serve sees only this), per host.
  const std::string message = start_error(options);
  EXPECT_NE(message.find("host a (127.0.0.1:1): cannot connect"), std::string::npos) << message;
  EXPECT_NE(message.find("host b (127.0.0.1:1)"), std::string::npos) << message;
}

// A token file that cannot be used: the exception says why and which option names it (it
// said "the credentials cannot be used (see above)", and the reason went only to stderr).
TEST_F(RemoteApplication, AMissingTokenFileIsNamedInTheException) {
  ApplicationOptions options;
  options.hosts = daemons_.hosts();
  options.token_file = "/nonexistent/sluice-token";
  const std::string message = start_error(options);
  EXPECT_NE(message.find("token file '/nonexistent/sluice-token' does not exist"), std::string::npos) << message;
  EXPECT_NE(message.find("ApplicationOptions names them: token_file"), std::string::npos) << message;
  EXPECT_EQ(message.find("see above"), std::string::npos) << message;
}

// A filter compiled into this program (no library:) cannot run across hosts: open() says so,
// naming the filter (the app daemon said "this program has no filter class", of a program
// that has it).
class InProgramFilter : public Filter {
 public:
  void process(Context&) override {}
};
SLUICE_FILTER(InProgramFilter)

TEST_F(RemoteApplication, AFilterCompiledIntoTheProgramIsRefusedAcrossHostsNamingIt) {
  const std::string yaml = "name: in-program\n"
                           "filters:\n"
                           "  mine: {class: InProgramFilter}\n";
  // Embedded, it runs.
  Application embedded = Application::from_text(yaml, "in-program.yaml", "/tmp");
  EXPECT_TRUE(embedded.submit("").wait().finished);
  embedded.stop();
  ApplicationOptions options;
  options.hosts = daemons_.hosts();
  options.token_file = daemons_.token_file();
  const std::string message = open_error(yaml, "in-program.yaml", options);
  EXPECT_NE(message.find("in-program.yaml:3:3: filter 'mine' has no library:"), std::string::npos) << message;
  EXPECT_NE(message.find("name it with library: in the filter"), std::string::npos) << message;
}

// A payload too large for the control message that carries it to the hosts is refused by
// submit(), and the deployment goes on: sent, it closed the connection, and the unit's
// failure blamed a host daemon that "died".
TEST_F(RemoteApplication, APayloadTooLargeToCrossIsRefusedBySubmitAndTheNextUnitRuns) {
  Application app = open_app();
  app.start();
  try {
    (void)app.submit(std::string(17u << 20, 'x'));
    ADD_FAILURE() << "submit() accepted a 17 MiB payload across hosts";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("the payload is 17825792 bytes; a unit's payload may be at most"), std::string::npos) << message;
  }
  EXPECT_TRUE(app.submit("count=5").wait().finished);
  app.stop();
}

TEST_F(RemoteApplication, AMalformedHostsOptionIsNamedAsTheProgramSetIt) {
  ApplicationOptions options;
  options.hosts = "a=127.0.0.1";
  options.token_file = daemons_.token_file();
  const std::string message = open_error(kTopology, "app-remote.yaml", options);
  EXPECT_EQ(message.rfind("ApplicationOptions hosts: 'a=127.0.0.1' is not NAME=ADDR:PORT", 0), 0u) << message;
  EXPECT_EQ(message.find("--hosts"), std::string::npos) << message;  // no such option in a program
}

TEST_F(RemoteApplication, AUnitWhoseHostCannotBeReachedNamesThatHost) {
  // a is up, b is not: the unit's report names b, for a program that reads it.
  ApplicationOptions options;
  const std::string& both = daemons_.hosts();
  options.hosts = both.substr(0, both.find(',')) + ",b=127.0.0.1:1";
  ASSERT_EQ(options.hosts.rfind("a=", 0), 0u) << options.hosts;
  options.token_file = daemons_.token_file();
  Application app = Application::from_text(kTopology, "app-remote.yaml", "/tmp", options);
  const UnitReport report = app.submit("count=20").wait();
  EXPECT_FALSE(report.finished);
  EXPECT_EQ(report.stage, "connect");
  EXPECT_EQ(report.host, "b");
  EXPECT_NE(report.message.find("host b (127.0.0.1:1): cannot connect"), std::string::npos) << report.message;
  EXPECT_EQ(report.message.find("host a"), std::string::npos) << report.message;
}

}  // namespace
}  // namespace sluice
