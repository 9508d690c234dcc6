// Java filters in graphs with C++ ones: integrity, copies and policies, units of work, zero
// copy, and the stale-handle guarantees.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdint>
#include <cstdlib>

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "java_test_support.h"

namespace jtest {
namespace {

// A million buffers cross C++ -> Java -> C++ -> Java -> Java -> C++, every Java stage
// rewriting every payload byte in place, with copies and three policies: nothing lost,
// duplicated, reordered per producer-consumer pair, or corrupted, and every write landed.
TEST_F(JavaGraphTest, MillionBuffersThroughMixedStagesWithJavaPayloadWrites) {
  testing_filters::RunOutcome out = run(R"(
defaults: {buffer_size: 256B, depth: 64}
filters:
  src:   {class: "testing_filters::TestSource", copies: 2, args: {count: 500000, size: 160}}
  java1: {lang: java, class: org.sluice.nativetest.Relay, classpath: [@JAR@], copies: 2}
  cpp:   {class: "testing_filters::TestRelay", copies: 2}
  java2: {lang: java, class: org.sluice.nativetest.Relay, classpath: [@JAR@], copies: 2}
  java3: {lang: java, class: org.sluice.nativetest.Relay, classpath: [@JAR@]}
  sink:  {class: "testing_filters::TestSink", copies: 2, args: {transforms: 3}}
streams:
  - {from: src.out,   to: java1.in}
  - {from: java1.out, to: cpp.in,   policy: demand_driven}
  - {from: cpp.out,   to: java2.in, policy: by_key}
  - {from: java2.out, to: java3.in}
  - {from: java3.out, to: sink.in}
)");
  ASSERT_FALSE(out.failure) << out.failure->str();
  EXPECT_EQ(violations(), std::vector<std::string>{});
  expect_each(2, 500000);
  ASSERT_EQ(out.streams.size(), 5u);
  for (const auto& s : out.streams) {
    EXPECT_EQ(s.buffers, 1000000u) << s.label;
    EXPECT_EQ(s.bytes, 160000000u) << s.label;
  }
}

struct PolicyCase {
  const char* policy;
  bool copy;            // the Java relay allocates new buffers (broadcast blocks are shared)
  std::uint32_t times;  // how often each record reaches the sink
  friend void PrintTo(const PolicyCase& c, std::ostream* os) { *os << c.policy; }
};

class JavaPolicyTest : public JavaGraphTest, public ::testing::WithParamInterface<PolicyCase> {};

// Three Java copies behind each policy, between two C++ source copies and a C++ sink.
TEST_P(JavaPolicyTest, JavaCopiesTakePartInThePolicy) {
  const PolicyCase& p = GetParam();
  testing_filters::RunOutcome out = run(std::string(R"(
filters:
  src:  {class: "testing_filters::TestSource", copies: 2, args: {count: 20000, keys: 97, size: 64}}
  mid:  {lang: java, class: org.sluice.nativetest.Relay, classpath: [@JAR@], copies: 3,
         args: {copy: )") + (p.copy ? "true" : "false") + R"(}}
  sink: {class: "testing_filters::TestSink", args: {transforms: 1, record_keys: true}}
streams:
  - {from: src.out, to: mid.in, policy: )" + p.policy + R"(, depth: 8}
  - {from: mid.out, to: sink.in}
)");
  ASSERT_FALSE(out.failure) << out.failure->str();
  EXPECT_EQ(violations(), std::vector<std::string>{});
  expect_each(2, 20000, p.times);
  std::lock_guard<std::mutex> lock(observed().mu);
  auto& o = observed();
  ASSERT_EQ(o.per_hop.size(), 3u) << "every Java copy should have worked";
  if (std::string(p.policy) == "by_key") {
    ASSERT_EQ(o.key_hops.size(), 97u);
    for (auto& [key, hops] : o.key_hops) EXPECT_EQ(hops.size(), 1u) << "key " << key << " met several copies";
  }
  if (std::string(p.policy) == "broadcast") {
    for (auto& [hop, n] : o.per_hop) EXPECT_EQ(n, 40000u) << "copy " << hop;
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, JavaPolicyTest,
                         ::testing::Values(PolicyCase{"round_robin", false, 1}, PolicyCase{"demand_driven", false, 1},
                                           PolicyCase{"by_key", false, 1}, PolicyCase{"broadcast", true, 3}),
                         [](const auto& info) { return std::string(info.param.policy); });

// One Java filter object lives across units of work; each unit gets init, process, finalize
// and a context that tells the unit apart.
TEST_F(JavaGraphTest, ThreeUnitsOfWorkThroughOneJavaFilter) {
  testing_filters::RunOutcome out = run(R"(
filters:
  src:   {class: "testing_filters::TestSource", args: {count: 100, size: 64}}
  probe: {lang: java, class: org.sluice.nativetest.UnitProbe, classpath: [@JAR@],
          args: {label: "ünïcode ok", n: 2KiB, ratio: 0.5, flag: yes}}
  sink:  {class: "testing_filters::TestSink", args: {transforms: 0}}
  text:  {class: "testing_filters::TestTextSink"}
streams:
  - {from: src.out, to: probe.in}
  - {from: probe.out, to: sink.in}
  - {from: probe.report, to: text.in}
work: [first, second, third]
)");
  ASSERT_FALSE(out.failure) << out.failure->str();
  EXPECT_EQ(violations(), std::vector<std::string>{});
  std::lock_guard<std::mutex> lock(observed().mu);
  const std::string common = " copy=0/1 host=local filter=probe buffers=100 label=ünïcode ok n=2048 ratio=0.5 "
                             "flag=true has_out=true has_left=false";
  EXPECT_EQ(observed().lines, (std::vector<std::string>{
                                  "unit=0 work=first inits=1 finalizes=0" + common,
                                  "unit=1 work=second inits=2 finalizes=1" + common,
                                  "unit=2 work=third inits=3 finalizes=2" + common,
                              }));
  EXPECT_EQ(observed().received["sink"][0], 300u);
}

// The embedded JVM opens no attach socket (/tmp/.java_pid<pid>: with -Xrs HotSpot starts its
// attach listener at once, a control socket into the process) and writes no perf-data file
// (/tmp/hsperfdata_<user>/<pid>): a process that ends without the JVM's own shutdown left
// both behind in /tmp, one pair per run.
TEST_F(JavaGraphTest, TheJvmLeavesNoAttachSocketNorPerfDataFileInTmp) {
  const std::string pid = std::to_string(::getpid());
  const char* user = std::getenv("USER");
  const std::vector<std::string> paths = {"/tmp/.java_pid" + pid,
                                          std::string("/tmp/hsperfdata_") + (user != nullptr ? user : "root") + "/" + pid};
  // A file of that name may be left from an earlier process that had this pid: only one this
  // run makes (a new inode, or a new change time) counts.
  const auto identity = [](const std::string& path) -> std::optional<std::pair<ino_t, std::int64_t>> {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    return std::make_pair(st.st_ino, static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec);
  };
  std::vector<std::optional<std::pair<ino_t, std::int64_t>>> before;
  for (const std::string& path : paths) before.push_back(identity(path));
  testing_filters::RunOutcome out = run(R"(
filters:
  src:   {class: "testing_filters::TestSource", args: {count: 10, size: 64}}
  java1: {lang: java, class: org.sluice.nativetest.Relay, classpath: [@JAR@]}
  sink:  {class: "testing_filters::TestSink", args: {transforms: 1}}
streams:
  - {from: src.out, to: java1.in}
  - {from: java1.out, to: sink.in}
)");
  ASSERT_FALSE(out.failure) << out.failure->str();
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const auto after = identity(paths[i]);
    EXPECT_TRUE(!after || after == before[i]) << "the run made " << paths[i];
  }
}

// The Java ByteBuffer is the native block: the source's payload address, the address Java's
// own java.nio.Buffer reports, and the sink's are one and the same, for every buffer; and the
// Java objects are made per block (and copy), not per buffer.
TEST_F(JavaGraphTest, JavaSeesTheNativeBufferItself) {
  // max_objects: one Buffer object per block of the probe's input pool, 16 + 1 + 1 + 8 (the
  // group of closes a Java consumer copy gives back at once, Graph::pool_count).
  testing_filters::RunOutcome out = run(R"(
filters:
  src:   {class: "testing_filters::TestSource", args: {count: 5000, size: 1000, record_address: true}}
  probe: {lang: java, class: org.sluice.nativetest.ZeroCopyProbe, classpath: [@JAR@], args: {max_objects: 26}}
  sink:  {class: "testing_filters::TestSink", args: {check_aux: true}}
streams:
  - {from: src.out, to: probe.in, buffer_size: 1KiB, depth: 16}
  - {from: probe.out, to: sink.in}
)");
  ASSERT_FALSE(out.failure) << out.failure->str();
  EXPECT_EQ(violations(), std::vector<std::string>{});
  std::lock_guard<std::mutex> lock(observed().mu);
  EXPECT_EQ(observed().address_checks, 5000u);
}

// Buffers after write/close, streams and contexts after their unit, calls from another
// thread: each gives IllegalStateException (never a crash), and a buffer left unwritten is
// taken back with a warning.
TEST_F(JavaGraphTest, StaleUseGivesIllegalStateException) {
  std::string err;
  testing_filters::RunOutcome out = run_capturing_stderr(R"(
filters:
  src:   {class: "testing_filters::TestSource", args: {count: 50, size: 64}}
  probe: {lang: java, class: org.sluice.nativetest.StaleProbe, classpath: [@JAR@], args: {label: text}}
  sink:  {class: "testing_filters::TestSink"}
  text:  {class: "testing_filters::TestTextSink"}
streams:
  - {from: src.out, to: probe.in}
  - {from: probe.out, to: sink.in}
  - {from: probe.report, to: text.in}
work: [zero, one]
)", &err);
  ASSERT_FALSE(out.failure) << out.failure->str();
  const std::multiset<std::string> expected = {
      "ok written-size", "ok written-data", "ok written-key", "ok written-rewrite", "ok written-close-is-harmless",
      "ok closed-key", "ok close-twice", "ok oversize", "ok other-thread-read", "ok other-thread-allocate",
      "ok other-thread-close", "ok unconnected-port", "ok missing-arg", "ok malformed-arg",
      "ok old-context-input", "ok old-context-work", "ok old-input-read", "ok old-output-allocate",
      "ok kept-buffer-released", "ok kept-buffer-close-is-harmless"};
  EXPECT_EQ(reported(), expected);
  EXPECT_NE(err.find("[probe#0@local] warn: process returned holding 2 buffer(s) it neither wrote nor closed"),
            std::string::npos) << err;
}

// The Java hot path's shortcuts: close() leaves the block for the copy's next stream call to
// give back (an allocate() on a drained pool then still finds it), write() keeps a spare block
// for the next allocate() (still refused on another thread, stale to a reference kept from an
// earlier round, and never counted as a buffer the filter holds: the probe returns with a
// spare and a close not yet given back, and no warning may follow), tryAllocate() gives null
// on a drained pool; and every buffer written arrives, once.
TEST_F(JavaGraphTest, ClosedBlocksComeBackAndSparesAreNotTheFiltersBuffers) {
  std::string err;
  testing_filters::RunOutcome out = run_capturing_stderr(R"(
filters:
  probe: {lang: java, class: org.sluice.nativetest.SpareProbe, classpath: [@JAR@], args: {count: 20000}}
  sink:  {class: "testing_filters::TestSink"}
  idle:  {class: "testing_filters::TestSink"}
  text:  {class: "testing_filters::TestTextSink"}
streams:
  - {from: probe.out, to: sink.in, buffer_size: 64B, depth: 8}
  - {from: probe.pool, to: idle.in, buffer_size: 64B, depth: 4}
  - {from: probe.report, to: text.in}
work: [zero, one]
)", &err);
  ASSERT_FALSE(out.failure) << out.failure->str();
  const std::vector<std::string> expected = {
      "ok kept-after-write-is-stale", "ok kept-rewrite-is-stale",   "ok allocate-other-thread",
      "ok try-allocate-runs-dry",     "ok try-allocate-fresh",      "ok closed-block-comes-back",
      "ok closed-blocks-come-back"};
  std::multiset<std::string> twice(expected.begin(), expected.end());
  twice.insert(expected.begin(), expected.end());  // once per unit of work
  EXPECT_EQ(reported(), twice);
  EXPECT_EQ(err.find("holding"), std::string::npos) << err;
  ASSERT_EQ(out.streams.size(), 3u);
  EXPECT_EQ(out.streams[0].buffers, 40000u) << out.streams[0].label;  // not one more: write(stale) sent nothing
  EXPECT_EQ(out.streams[1].buffers, 2u) << out.streams[1].label;      // the last write of each unit
}

// A Java read takes a batch of buffers in one native call (those already off the queue) and
// hands them out one by one. Two inputs read in turns, each with a batch pending while the
// other is read, and 40 buffers held then closed at once (more than the 8 closes the mailbox
// keeps between native calls): every record arrives once, in order and intact, both units of
// work, and the probe holds nothing at the end, so no warning may follow.
TEST_F(JavaGraphTest, ReadAheadKeepsEveryStreamWholeAndInOrder) {
  std::string err;
  testing_filters::RunOutcome out = run_capturing_stderr(R"(
filters:
  src:   {class: "testing_filters::TestSource", copies: 2, args: {count: 20000, size: 64}}
  side:  {class: "testing_filters::TestSource", args: {count: 30000, size: 64}}
  probe: {lang: java, class: org.sluice.nativetest.ReadAheadProbe, classpath: [@JAR@],
          args: {hold: 40, side_count: 30000}}
  sink:  {class: "testing_filters::TestSink"}
  text:  {class: "testing_filters::TestTextSink"}
streams:
  - {from: src.out, to: probe.in, buffer_size: 64B, depth: 64}
  - {from: side.out, to: probe.side, buffer_size: 64B, depth: 64}
  - {from: probe.out, to: sink.in}
  - {from: probe.report, to: text.in}
work: [zero, one]
)", &err);
  ASSERT_FALSE(out.failure) << out.failure->str();
  EXPECT_EQ(violations(), std::vector<std::string>{});
  expect_each(2, 20000, 2);  // both units
  EXPECT_EQ(reported(), (std::multiset<std::string>{"ok side-whole-and-in-order", "ok side-whole-and-in-order",
                                                    "ok stays-ended", "ok stays-ended"}));
  EXPECT_EQ(err.find("holding"), std::string::npos) << err;
}

// A Java filter returns after one read while the rest of that read's batch is still pending
// in its InputStream: those buffers were never the filter's, so the runtime takes them back
// as unread (not with the "returned holding" warning), a read in finalize gives null (not one
// of the released buffers), and the next unit of work reads afresh.
TEST_F(JavaGraphTest, BuffersReadAheadButNotHandedOutAreNotTheFiltersOwn) {
  std::string err;
  testing_filters::RunOutcome out = run_capturing_stderr(R"(
filters:
  src:   {class: "testing_filters::TestSource", args: {count: 64, size: 64}}
  probe: {lang: java, class: org.sluice.nativetest.ReadAheadProbe, classpath: [@JAR@],
          args: {stop_after: 1, wait_ms: 300}}
  sink:  {class: "testing_filters::TestSink"}
streams:
  - {from: src.out, to: probe.in, buffer_size: 64B, depth: 64}
  - {from: probe.out, to: sink.in}
work: [zero, one]
)", &err);
  ASSERT_FALSE(out.failure) << out.failure->str();
  EXPECT_EQ(violations(), std::vector<std::string>{});
  ASSERT_EQ(out.streams.size(), 2u);
  EXPECT_EQ(out.streams[1].buffers, 2u) << out.streams[1].label;  // one a unit
  EXPECT_EQ(err.find("holding"), std::string::npos) << err;
  EXPECT_NE(err.find("[probe#0@local] warn: process returned with 7 unread buffer(s) on input 'in' that the "
                     "runtime had already taken off the queue for it; they were discarded"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("finalize read: a buffer"), std::string::npos) << err;
  EXPECT_NE(err.find("finalize read: null"), std::string::npos) << err;
}

// Runs HeldBackProbe with a 16 MiB heap, which it fills, and exits 0 when the run was clean
// and every check passed. In a child process of its own (a death test re-runs the binary), so
// that its JVM gets that heap, and no other test's JVM is filled.
[[noreturn]] void read_both_inputs_out_of_memory() {
  testing_filters::RunOutcome out = run(R"(
filters:
  a:     {class: "testing_filters::TestSource", args: {count: 100, size: 64}}
  b:     {class: "testing_filters::TestSource", args: {count: 100, size: 64}}
  probe: {lang: java, class: org.sluice.nativetest.HeldBackProbe, classpath: [@JAR@], args: {count: 100}}
  text:  {class: "testing_filters::TestTextSink"}
streams:
  - {from: a.out, to: probe.a, buffer_size: 64B}
  - {from: b.out, to: probe.b, buffer_size: 64B}
  - {from: probe.report, to: text.in}
)", {}, "heap: 16MiB, ");
  if (out.failure) {
    std::fprintf(stderr, "run failed: %s\n", out.failure->str().c_str());
    std::_Exit(1);
  }
  int ok = 0;
  for (const std::string& line : observed().lines) {
    std::fprintf(stderr, "%s\n", line.c_str());
    ok += line.rfind("ok ", 0) == 0;
  }
  std::fprintf(stderr, "%d of %zu checks ok\n", ok, observed().lines.size());
  std::fflush(stderr);
  std::_Exit(0);
}

// The JVM is out of memory when a Java copy first reads each of its two inputs: binding the
// block of each stream's first buffer fails, and the filter gets OutOfMemoryError. Those two
// buffers were off their queues already; the runtime holds each back for its own stream's next
// read, so that once memory is back both streams arrive whole and in order. (One buffer held
// back for the whole copy lost the second stream's.)
TEST_F(JavaGraphTest, ReadsThatFailForWantOfMemoryLoseNoBufferOnAnyInput) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child re-runs the binary
  EXPECT_EXIT(read_both_inputs_out_of_memory(), ::testing::ExitedWithCode(0), "\n4 of 4 checks ok\n");
}

// A Java copy keeps a buffer it wrote and misuses it while another Java copy holds that very
// pool block: the misuse is an IllegalStateException in the copy that kept it, and the holder's
// buffer (size, key, bytes, data() view, handle) stays intact and writes on.
TEST_F(JavaGraphTest, StaleBufferNeverReachesAnotherJavaCopysBuffer) {
  testing_filters::RunOutcome out = run(R"(
filters:
  keeper: {lang: java, class: org.sluice.nativetest.StaleKeeper, classpath: [@JAR@],
           args: {text: "the holder's own", after: 8}}
  holder: {lang: java, class: org.sluice.nativetest.StaleHolder, classpath: [@JAR@],
           args: {text: "the holder's own", after: 8}}
  text:   {class: "testing_filters::TestTextSink"}
  notes1: {class: "testing_filters::TestTextSink"}
  notes2: {class: "testing_filters::TestTextSink"}
streams:
  - {from: keeper.out, to: holder.in, buffer_size: 64B, depth: 2}
  - {from: holder.out, to: text.in}
  - {from: keeper.report, to: notes1.in}
  - {from: holder.report, to: notes2.in}
)");
  ASSERT_FALSE(out.failure) << out.failure->str();
  std::multiset<std::string> expected = {"the holder's own"};
  for (const char* check : {"stale-size", "stale-data", "stale-key", "stale-set-size", "stale-set-key",
                            "stale-capacity", "stale-is-shared", "stale-to-string", "stale-write",
                            "stale-close-does-nothing"}) {
    expected.insert(std::string("ok keeper#0 ") + check);
  }
  for (const char* check : {"read-all", "held-intact", "held-write"}) expected.insert(std::string("ok holder#0 ") + check);
  EXPECT_EQ(reported(), expected);
}

// Broadcast blocks reach every Java copy as read-only views; one kept past its unit goes stale.
TEST_F(JavaGraphTest, SharedBuffersAreReadOnlyAndGoStaleToo) {
  testing_filters::RunOutcome out = run(R"(
filters:
  src:   {class: "testing_filters::TestSource", args: {count: 20, size: 64}}
  probe: {lang: java, class: org.sluice.nativetest.SharedProbe, classpath: [@JAR@], copies: 2}
  text:  {class: "testing_filters::TestTextSink"}
streams:
  - {from: src.out, to: probe.in, policy: broadcast}
  - {from: probe.report, to: text.in}
work: [zero, one]
)");
  ASSERT_FALSE(out.failure) << out.failure->str();
  EXPECT_EQ(reported(), (std::multiset<std::string>{"ok shared", "ok shared", "ok shared-read-only", "ok shared-read-only",
                                             "ok shared-released", "ok shared-released"}));
}

// A topology without Java filters never loads a JVM.
TEST_F(JavaGraphTest, NoJvmForACppOnlyTopology) {
  if (dlsym(RTLD_DEFAULT, "JNI_CreateJavaVM") != nullptr) GTEST_SKIP() << "an earlier test in this process loaded the JVM";
  testing_filters::RunOutcome out = run(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 10, size: 64}}
  sink: {class: "testing_filters::TestSink"}
streams:
  - {from: src.out, to: sink.in}
)");
  ASSERT_FALSE(out.failure) << out.failure->str();
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "JNI_CreateJavaVM"), nullptr) << "libjvm was loaded";
}

}  // namespace
}  // namespace jtest
