#include "runtime/crash_report.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <thread>

namespace sluice::crash {
namespace {

std::string line_for(int sig, const CopyRecord* record, std::size_t size = 1024) {
  std::string out(size, '\0');
  out.resize(format_line(out.data(), out.size(), sig, record));
  return out;
}

TEST(CrashLine, NamesFilterCopyHostStageAndUnit) {
  CopyRecord record("count", 1, "b");
  record.unit = 3;
  record.stage = "process";
  EXPECT_EQ(line_for(SIGSEGV, &record), "filter 'count' copy 1 on host b crashed with SIGSEGV in process (unit of work 3)\n");
  record.stage = "finalize";
  record.unit = 18446744073709551615ull;
  EXPECT_EQ(line_for(SIGABRT, &record),
            "filter 'count' copy 1 on host b crashed with SIGABRT in finalize (unit of work 18446744073709551615)\n");
  EXPECT_NE(line_for(SIGBUS, &record).find("crashed with SIGBUS"), std::string::npos);
  EXPECT_NE(line_for(SIGFPE, &record).find("crashed with SIGFPE"), std::string::npos);
  EXPECT_NE(line_for(SIGILL, &record).find("crashed with SIGILL"), std::string::npos);
  EXPECT_NE(line_for(SIGUSR1, &record).find("crashed with signal 10"), std::string::npos);
}

TEST(CrashLine, OutsideAnyFilterNamesTheThread) {
  std::string line;
  std::thread([&] {
    ::prctl(PR_SET_NAME, "net-io", 0, 0, 0);
    line = line_for(SIGSEGV, nullptr);
  }).join();
  EXPECT_EQ(line.rfind("crashed with SIGSEGV outside any filter (thread 'net-io', tid ", 0), 0u) << line;
  EXPECT_EQ(line.back(), '\n');
}

TEST(CrashLine, IsCutToFitAndStillEndsTheLine) {
  const std::string name(300, 'f');
  CopyRecord record(name.c_str(), 0, "local");
  const std::string line = line_for(SIGSEGV, &record, 64);
  EXPECT_EQ(line.size(), 63u);
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.rfind("filter 'fff", 0), 0u);
}

TEST(CurrentRecord, IsPerThreadAndScoped) {
  CopyRecord a("a", 0, "local");
  CopyRecord b("b", 1, "local");
  EXPECT_EQ(current(), nullptr);
  {
    ScopedCurrent outer(&a);
    EXPECT_EQ(current(), &a);
    {
      ScopedCurrent inner(&b);
      EXPECT_EQ(current(), &b);
      const CopyRecord* elsewhere = &a;
      std::thread([&] { elsewhere = current(); }).join();
      EXPECT_EQ(elsewhere, nullptr) << "another thread has no current record";
    }
    EXPECT_EQ(current(), &a);
  }
  EXPECT_EQ(current(), nullptr);
}

TEST(AltStack, IsTheThreadsForItsLifeAndLeavesAnExistingOneAlone) {
  std::thread([] {
    stack_t before{};
    ASSERT_EQ(::sigaltstack(nullptr, &before), 0);
    ASSERT_TRUE(before.ss_flags & SS_DISABLE) << "a new thread has no alternate stack";
    {
      AltStack alt;
      ASSERT_TRUE(alt.installed());
      stack_t now{};
      ASSERT_EQ(::sigaltstack(nullptr, &now), 0);
      EXPECT_FALSE(now.ss_flags & SS_DISABLE);
      EXPECT_GE(now.ss_size, 64u * 1024);
      {
        AltStack second;
        EXPECT_FALSE(second.installed());
      }
      stack_t still{};
      ASSERT_EQ(::sigaltstack(nullptr, &still), 0);
      EXPECT_EQ(still.ss_sp, now.ss_sp) << "the second one must not have touched the first";
    }
    stack_t after{};
    ASSERT_EQ(::sigaltstack(nullptr, &after), 0);
    EXPECT_TRUE(after.ss_flags & SS_DISABLE);
  }).join();
}

// A process that has crash handling of its own keeps it: sluice installs none, and the
// crash is that handler's (here: none for SIGSEGV, so the plain default action).
// Not a core file per test, wherever the system puts them.
void no_core_dump() {
  rlimit none{0, 0};
  ::getrlimit(RLIMIT_CORE, &none);
  none.rlim_cur = 0;
  ::setrlimit(RLIMIT_CORE, &none);
}

TEST(CrashHandlersDeathTest, LeaveAProcessWithHandlersOfItsOwnAlone) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        no_core_dump();
        struct sigaction own {};
        own.sa_handler = [](int) { ::_exit(7); };
        ::sigaction(SIGBUS, &own, nullptr);
        if (install_handlers() || handlers_installed()) std::exit(4);
        struct sigaction segv {};
        ::sigaction(SIGSEGV, nullptr, &segv);
        if (segv.sa_handler != SIG_DFL) std::exit(5);
        ::raise(SIGSEGV);
      },
      ::testing::KilledBySignal(SIGSEGV), "^$");
}

TEST(CrashHandlersDeathTest, AreInstalledOnceWhereThereAreNone) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        no_core_dump();
        if (!install_handlers() || !install_handlers() || !handlers_installed()) std::exit(4);
        for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
          struct sigaction now {};
          ::sigaction(sig, nullptr, &now);
          if (!(now.sa_flags & SA_SIGINFO) || !(now.sa_flags & SA_ONSTACK)) std::exit(5);
        }
        ::raise(SIGBUS);
      },
      ::testing::KilledBySignal(SIGBUS), "^sluice: crashed with SIGBUS outside any filter \\(thread '[^']+', tid [0-9]+\\)\n$");
}

// An exception nothing caught (a filter's own thread that misused a stream, say) ends in
// std::terminate and SIGABRT: the line says why, which across hosts is the only place the
// console learns it (an outside review saw "crashed with SIGABRT" alone).
TEST(CrashHandlersDeathTest, AnExceptionNothingCaughtIsNamedOnTheAbortLine) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        no_core_dump();
        if (!install_handlers()) std::exit(4);
        std::thread([] {
          throw std::runtime_error("used its output from a thread\nthat is not the copy's\x1b]0;title\x07\xc2\x9b");
        }).join();
      },
      ::testing::KilledBySignal(SIGABRT),
      // Alone on stderr (not libstdc++'s raw "terminate called ..."), its escapes escaped.
      "^sluice: crashed with SIGABRT outside any filter \\(thread '[^']+', tid [0-9]+\\) \\(std::terminate: an "
      "exception nothing caught: used its output from a thread that is not the copy's"
      "\\\\x1b]0;title\\\\x07\\\\xc2\\\\x9b\\)\n$");
}

}  // namespace
}  // namespace sluice::crash
