// Crashes in a process with a JVM. sluice's crash handlers are installed before the JVM is
// created; HotSpot keeps them and calls them for the signals that are not its own. So Java's
// own uses of SIGSEGV and SIGFPE (implicit null and zero-divisor checks in compiled code) stay
// ordinary Java exceptions, -Xcheck:jni sees its handlers untouched, and a real crash, in a
// C++ filter or in a Java one, is still named.
#include <dlfcn.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "java_test_support.h"
#include "runtime/crash_report.h"
#include "runtime/process_exit.h"

namespace jtest {
namespace {

// The file of the shared object that holds `sig`'s current handler ("" for SIG_DFL/SIG_IGN).
std::string handler_library(int sig) {
  struct sigaction now {};
  ::sigaction(sig, nullptr, &now);
  if (now.sa_handler == SIG_DFL || now.sa_handler == SIG_IGN) return "";
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(now.sa_sigaction), &info) == 0 || info.dli_fname == nullptr) return "?";
  return info.dli_fname;
}

struct FaultCase {
  const char* fault;
  const char* exception;
  const char* frame;
  friend void PrintTo(const FaultCase& c, std::ostream* os) { *os << c.fault; }
};

class JavaHotFaultTest : public JavaGraphTest, public ::testing::WithParamInterface<FaultCase> {};

// HotSpot turns these faults in JIT-compiled code into exceptions through its SIGSEGV and
// SIGFPE handlers (checked with strace: the null dereference takes two SIGSEGVs more than a
// run without it). With sluice's handlers chained behind HotSpot's, they must stay ordinary
// Java exceptions with their stack traces.
TEST_P(JavaHotFaultTest, CompiledCodesFaultIsAnOrdinaryJavaException) {
  ::testing::internal::CaptureStdout();  // where -Xcheck:jni warns about modified handlers
  testing_filters::RunOutcome out = run(std::string(R"(
filters:
  hot: {lang: java, class: org.sluice.nativetest.HotFault, classpath: [@JAR@], args: {fault: )") +
                                        GetParam().fault + "}}\n");
  const std::string jvm_said = ::testing::internal::GetCapturedStdout();
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->filter, "hot");
  EXPECT_EQ(out.failure->stage, "process");
  const std::string& m = out.failure->message;
  EXPECT_EQ(m.rfind(GetParam().exception, 0), 0u) << m;
  EXPECT_NE(m.find(GetParam().frame), std::string::npos) << m;
  EXPECT_NE(m.find("\tat org.sluice.nativetest.HotFault.process(HotFault.java:"), std::string::npos) << m;
  EXPECT_EQ(jvm_said.find("handler modified"), std::string::npos) << jvm_said;

  // sluice's handlers are installed, and the JVM's sit in front of them for its signals.
  EXPECT_TRUE(sluice::crash::handlers_installed());
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
    EXPECT_NE(handler_library(sig).find("libjvm.so"), std::string::npos) << "signal " << sig << ": " << handler_library(sig);
  }
  EXPECT_NE(handler_library(SIGABRT).find("libsluice.so"), std::string::npos) << handler_library(SIGABRT);
}

INSTANTIATE_TEST_SUITE_P(
    Faults, JavaHotFaultTest,
    ::testing::Values(FaultCase{"npe", "java.lang.NullPointerException", "\tat org.sluice.nativetest.HotFault.length(HotFault.java:"},
                      FaultCase{"div0", "java.lang.ArithmeticException: / by zero",
                                "\tat org.sluice.nativetest.HotFault.divide(HotFault.java:"}),
    [](const auto& info) { return std::string(info.param.fault); });

// --- Real crashes with a JVM in the process (gtest death tests, in a child process) ----------

class JavaCrashDeathTest : public JavaGraphTest {
 protected:
  void SetUp() override {
    JavaGraphTest::SetUp();
    GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child re-runs the binary
  }
};

[[noreturn]] void run_to_crash(const std::string& yaml) {
  rlimit core{0, 0};  // not a core file per test, wherever the system puts them
  ::getrlimit(RLIMIT_CORE, &core);
  core.rlim_cur = 0;
  ::setrlimit(RLIMIT_CORE, &core);
  testing_filters::RunOutcome out = run(yaml);
  std::fprintf(stderr, "the run ended without a crash: %s\n", out.failure ? out.failure->str().c_str() : "no failure");
  std::exit(3);
}

// A Java relay keeps the JVM busy beside the C++ filter that crashes.
std::string beside_java(const std::string& crash_args) {
  return R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 2000, size: 64}}
  java: {lang: java, class: org.sluice.nativetest.Relay, classpath: [@JAR@]}
  boom: {class: Crash, library: )" SLUICE_CRASH_LIB ", args: {" + crash_args + R"(}}
streams:
  - {from: src.out, to: java.in}
  - {from: java.out, to: boom.in}
)";
}

TEST_F(JavaCrashDeathTest, CppSegvBesideJavaIsNamed) {
  EXPECT_EXIT(run_to_crash(beside_java("signal: segv, after: 100")), ::testing::KilledBySignal(SIGSEGV),
              "^sluice: filter 'boom' copy 0 on host local crashed with SIGSEGV in process \\(unit of work 0\\)\n");
}

TEST_F(JavaCrashDeathTest, CppDivisionByZeroBesideJavaIsNamed) {
  EXPECT_EXIT(run_to_crash(beside_java("signal: fpe, stage: init")), ::testing::KilledBySignal(SIGFPE),
              "^sluice: filter 'boom' copy 0 on host local crashed with SIGFPE in init \\(unit of work 0\\)\n");
}

TEST_F(JavaCrashDeathTest, CppBusErrorBesideJavaIsNamed) {
  EXPECT_EXIT(run_to_crash(beside_java("signal: bus, stage: finalize")), ::testing::KilledBySignal(SIGBUS),
              "^sluice: filter 'boom' copy 0 on host local crashed with SIGBUS in finalize \\(unit of work 0\\)\n");
}

TEST_F(JavaCrashDeathTest, CppAbortBesideJavaIsNamed) {
  EXPECT_EXIT(run_to_crash(beside_java("signal: abort, after: 1")), ::testing::KilledBySignal(SIGABRT),
              "^sluice: filter 'boom' copy 0 on host local crashed with SIGABRT in process \\(unit of work 0\\)\n");
}

// A Java filter that crashes the process (as a bad JNI library would) is named too: the copy's
// thread is a JVM thread, and HotSpot passes the fault on to sluice's handler. Four copies fault
// at the same moment (UnsafeCrash waits for all of them): one is named, the others wait for it,
// and the process dies by SIGSEGV, never by HotSpot's own fatal-error abort. (With
// SA_RESETHAND on sluice's handler, HotSpot chained the first fault only and aborted on the
// second: "thread N also had an error", SIGABRT, sometimes no line at all.)
TEST_F(JavaCrashDeathTest, JavaFilterThatCrashesTheProcessIsNamed) {
  EXPECT_EXIT(run_to_crash(R"(
filters:
  unsafe: {lang: java, class: org.sluice.nativetest.UnsafeCrash, classpath: [@JAR@], copies: 4}
)"),
              ::testing::KilledBySignal(SIGSEGV),
              "^sluice: filter 'unsafe' copy [0-3] on host local crashed with SIGSEGV in process \\(unit of work 0\\)\n");
}

// --- Ending a process that hosts a JVM ----------------------------------------------------

// sluice never destroys the JVM it creates, so the JVM's threads still run while exit() runs
// the process's exit handlers. A program that owns its process (the console, sluice-appd)
// asks to end before the destructors of libjvm's static objects run under those threads
// (HotSpot's -Xcheck:jni signal check read them freed and printed "SIGSEGV handler modified!"
// with garbage). Those destructors were registered when libjvm was loaded; a handler
// registered before the JVM started stands in for them here: when it runs, the process ends
// with status 42 instead. A program that embeds sluice and did not ask keeps ordinary exit():
// its own handlers run.
void late_exit_handler() {
  std::fflush(stderr);
  std::_Exit(42);
}

[[noreturn]] void run_java_then_exit(int status) {
  std::atexit(late_exit_handler);
  testing_filters::RunOutcome out = run(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 100, size: 64}}
  java: {lang: java, class: org.sluice.nativetest.Relay, classpath: [@JAR@]}
  sink: {class: "testing_filters::TestSink"}
streams:
  - {from: src.out, to: java.in}
  - {from: java.out, to: sink.in}
)");
  std::fprintf(stderr, "run %s; ", out.failure ? out.failure->str().c_str() : "ok");
  setvbuf(stderr, nullptr, _IOFBF, BUFSIZ);  // buffered: only a flush at exit shows this
  std::fputs("buffered until exit\n", stderr);
  std::exit(status);
}

TEST_F(JavaCrashDeathTest, AProgramThatOwnsItsProcessEndsBeforeTheJvmsStatics) {
  EXPECT_EXIT(
      {
        sluice::process::end_before_jvm_statics_at_exit();
        run_java_then_exit(7);
      },
      ::testing::ExitedWithCode(7), "run ok; buffered until exit\n");
}

TEST_F(JavaCrashDeathTest, AnEmbeddingProgramKeepsItsExitHandlers) {
  EXPECT_EXIT(run_java_then_exit(5), ::testing::ExitedWithCode(42), "run ok; buffered until exit\n");
}

}  // namespace
}  // namespace jtest
