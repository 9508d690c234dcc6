// Filters that crash the process for real (core-cpp/tests/fixtures/crash_filters.cc), run
// through the Engine in a child process: it dies by the signal, and its stderr names the copy,
// host, stage and unit of work first.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "testing/graph_harness.h"
#include "runtime/crash_report.h"

namespace sluice::crash {
namespace {

class CrashDeathTest : public ::testing::Test {
 protected:
  // Re-executes the test binary for the child: the Engine's threads make fork() alone unsafe.
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// A producer of 100 buffers into the crash filter, one unit of work or two.
std::string topology(const std::string& crash_args, const std::string& work = "[only]") {
  return "filters:\n"
         "  src: {class: \"testing_filters::TestSource\", args: {count: 100}}\n"
         "  boom: {class: Crash, library: " SLUICE_CRASH_LIB ", copies: 2, args: {" + crash_args + "}}\n"
         "streams:\n"
         "  - {from: src.out, to: boom.in}\n"
         "work: " + work + "\n";
}

// Not a core file per test, wherever the system puts them.
void no_core_dump() {
  rlimit none{0, 0};
  ::getrlimit(RLIMIT_CORE, &none);
  none.rlim_cur = 0;
  ::setrlimit(RLIMIT_CORE, &none);
}

[[noreturn]] void run(const std::string& yaml) {
  no_core_dump();
  testing_filters::RunOutcome outcome = testing_filters::run_yaml(yaml);
  std::fprintf(stderr, "the run ended without a crash: %s\n",
               outcome.failure ? outcome.failure->str().c_str() : "no failure");
  std::exit(3);
}

struct Case {
  const char* name;
  const char* args;
  int signal;
  const char* line;  // a regular expression for stderr
  friend void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
};

class CrashKindTest : public CrashDeathTest, public ::testing::WithParamInterface<Case> {};

TEST_P(CrashKindTest, TheProcessDiesByTheSignalAfterNamingTheCopy) {
  EXPECT_EXIT(run(topology(GetParam().args, "[first, second]")), ::testing::KilledBySignal(GetParam().signal),
              GetParam().line);
}

INSTANTIATE_TEST_SUITE_P(
    Signals, CrashKindTest,
    ::testing::Values(
        Case{"SegvInProcess", "signal: segv, copy: 1, after: 10", SIGSEGV,
             "^sluice: filter 'boom' copy 1 on host local crashed with SIGSEGV in process \\(unit of work 0\\)\n"},
        Case{"BusInInit", "signal: bus, stage: init, copy: 0", SIGBUS,
             "^sluice: filter 'boom' copy 0 on host local crashed with SIGBUS in init \\(unit of work 0\\)\n"},
        Case{"FpeInFinalize", "signal: fpe, stage: finalize, copy: 1, unit: 1", SIGFPE,
             "^sluice: filter 'boom' copy 1 on host local crashed with SIGFPE in finalize \\(unit of work 1\\)\n"},
        Case{"IllegalInstruction", "signal: ill, copy: 0", SIGILL,
             "^sluice: filter 'boom' copy 0 on host local crashed with SIGILL in process \\(unit of work 0\\)\n"},
        Case{"Abort", "signal: abort, copy: 1, after: 5", SIGABRT,
             "^sluice: filter 'boom' copy 1 on host local crashed with SIGABRT in process \\(unit of work 0\\)\n"},
        Case{"StackOverflow", "signal: stack, copy: 0", SIGSEGV,
             "^sluice: filter 'boom' copy 0 on host local crashed with SIGSEGV \\(stack overflow: recursion too deep, "
             "or a local array larger than the stack\\) in process \\(unit of work 0\\)\n"},
        Case{"FrameLargerThanTheStack", "signal: frame, copy: 0", SIGSEGV,
             "^sluice: filter 'boom' copy 0 on host local crashed with SIGSEGV \\(stack overflow: recursion too deep, "
             "or a local array larger than the stack\\) in process \\(unit of work 0\\)\n"},
        Case{"SegvInDestructor", "signal: segv, stage: destroy, copy: 1", SIGSEGV,
             "^sluice: filter 'boom' copy 1 on host local crashed with SIGSEGV in destroy \\(unit of work 1\\)\n"},
        Case{"SegvOnAnotherThread", "signal: segv, thread: true, copy: 0", SIGSEGV,
             "^sluice: crashed with SIGSEGV outside any filter \\(thread '[^']*', tid [0-9]+\\)\n"}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// A copy's streams used from a thread the filter started: refused on their first slow path
// (the inline ones cannot check), named with the copy, whether the filter's thread hands the
// error back to process() or leaves it uncaught (which ends the process: the crash names the
// copy, not "outside any filter"). Depth 1: the first write waits.
std::string foreign_writer(const char* args) {
  return std::string("filters:\n"
                     "  w: {class: ForeignWriter, library: " SLUICE_CRASH_LIB ", args: {") + args + "}}\n"
         "  sink: {class: \"testing_filters::TestSink\"}\n"
         "streams:\n"
         "  - {from: w.out, to: sink.in, depth: 1}\n";
}

TEST(ForeignThread, AStreamUsedFromAThreadTheFilterStartedIsRefusedAndNamed) {
  testing_filters::RunOutcome outcome = testing_filters::run_yaml(foreign_writer("catch: true"));
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->filter, "w");
  EXPECT_EQ(outcome.failure->stage, "process");
  EXPECT_EQ(outcome.failure->message,
            "filter 'w' copy 0 used its output 'out' (w.out -> sink.in) from a thread that is not the copy's own (one "
            "the filter started?): a copy's streams are for its init, process and finalize only; hand buffers "
            "between your threads and process() yourself");
}

TEST_F(CrashDeathTest, AnUncaughtRefusalOnAThreadTheFilterStartedNamesTheCopy) {
  EXPECT_EXIT(run(foreign_writer("catch: false")), ::testing::KilledBySignal(SIGABRT),
              "sluice: filter 'w' copy 0 on host local crashed with SIGABRT in process \\(unit of work 0\\) "
              "\\(std::terminate: an exception nothing caught: filter 'w' copy 0 used its output 'out' "
              "\\(w.out -> sink.in\\) from a thread that is not the copy's own");
}

// A copy's task stack is as large as a thread's (8 MiB): a filter with a 2 MiB frame runs as
// it would on a thread of its own, on every copy at once.
TEST(TaskStack, AFrameOfTwoMiBRunsInEveryCopy) {
  testing_filters::RunOutcome outcome = testing_filters::run_yaml(
      "filters:\n"
      "  src: {class: \"testing_filters::TestSource\", args: {count: 1000}, copies: 2}\n"
      "  big: {class: BigFrame, library: " SLUICE_CRASH_LIB ", copies: 8}\n"
      "streams:\n"
      "  - {from: src.out, to: big.in}\n");
  EXPECT_FALSE(outcome.failure) << outcome.failure->str();
}

// The app daemon's way: a log-style line on stderr, and the bare line on a report fd.
TEST_F(CrashDeathTest, WritesTheLogLineAndTheReportFd) {
  // The same file in the parent and in the child (which re-runs this body: see SetUp).
  if (std::getenv("SLUICE_TEST_CRASH_REPORT") == nullptr) {
    const std::string path = ::testing::TempDir() + "sluice_crash_report_" + std::to_string(::getpid());
    ::setenv("SLUICE_TEST_CRASH_REPORT", path.c_str(), 1);
  }
  const std::string report = std::getenv("SLUICE_TEST_CRASH_REPORT");
  std::filesystem::remove(report);
  EXPECT_EXIT(
      {
        const int fd = ::open(report.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        set_output(Output{"sluice-appd(b)[1] [error] ", true, fd});
        run(topology("signal: segv, copy: 0"));
      },
      ::testing::KilledBySignal(SIGSEGV),
      "^20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\\.[0-9][0-9][0-9]Z sluice-appd\\(b\\)\\[1\\] "
      "\\[error\\] filter 'boom' copy 0 on host local crashed with SIGSEGV in process \\(unit of work 0\\)\n");
  std::ifstream in(report);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "filter 'boom' copy 0 on host local crashed with SIGSEGV in process (unit of work 0)\n");
  std::filesystem::remove(report);
}

// A report fd nobody reads any more (sluiced gone): the process still dies by the crash's
// signal, not by SIGPIPE.
TEST_F(CrashDeathTest, AReportFdWithoutAReaderDoesNotChangeTheSignal) {
  EXPECT_EXIT(
      {
        int fds[2];
        if (::pipe(fds) != 0) std::exit(4);
        ::close(fds[0]);
        ::signal(SIGPIPE, SIG_DFL);
        set_output(Output{"sluice: ", false, fds[1]});
        run(topology("signal: abort, copy: 0"));
      },
      ::testing::KilledBySignal(SIGABRT),
      "^sluice: filter 'boom' copy 0 on host local crashed with SIGABRT in process \\(unit of work 0\\)\n");
}

}  // namespace
}  // namespace sluice::crash
