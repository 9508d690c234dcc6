// Java failures stop the run like C++ ones, reported with filter, copy, stage, unit and the
// full Java stack trace; classes that cannot be filters are refused before anything starts.
#include "java_test_support.h"
#include "topology/topology.h"

namespace jtest {
namespace {

using JavaFailureTest = JavaGraphTest;

// A Java relay copy throws while the source is blocked on a full stream (forever: it would
// never finish), the other copy and the sink wait: the whole graph stops within seconds.
TEST_F(JavaFailureTest, JavaExceptionStopsBlockedGraphWithStackTrace) {
  testing_filters::RunOutcome out = run(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {forever: true, size: 64}}
  mid:  {lang: java, class: org.sluice.nativetest.Relay, classpath: [@JAR@], copies: 2,
         args: {throw_copy: 1, throw_at: 50}}
  sink: {class: "testing_filters::TestSink", args: {sleep_us: 100}}
streams:
  - {from: src.out, to: mid.in, depth: 1}
  - {from: mid.out, to: sink.in, depth: 1}
work: [first, second]
)");
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->filter, "mid");
  EXPECT_EQ(out.failure->copy, 1);
  EXPECT_EQ(out.failure->stage, "process");
  EXPECT_EQ(out.failure->unit, 0u);
  const std::string& m = out.failure->message;
  EXPECT_EQ(m.rfind("java.lang.IllegalArgumentException: relay copy 1 refuses buffer 50\n", 0), 0u) << m;
  EXPECT_NE(m.find("\tat org.sluice.nativetest.Relay.refuse(Relay.java:"), std::string::npos) << m;
  EXPECT_NE(m.find("\tat org.sluice.nativetest.Relay.process(Relay.java:"), std::string::npos) << m;
  EXPECT_NE(out.failure->str().find("filter 'mid' copy 1 on host local failed in process (unit of work 0): "
                                    "java.lang.IllegalArgumentException"),
            std::string::npos) << out.failure->str();
  EXPECT_TRUE(out.stuck.empty());
  // A hang is caught by the stuck list and the test's own time limit; this bounds the
  // unwinding loosely (it includes the JVM's start in a fresh process on a loaded machine).
  EXPECT_LT(out.seconds, 60.0) << "the abort should unblock every thread, Java ones too";
}

struct StageCase {
  const char* stage;
  friend void PrintTo(const StageCase& c, std::ostream* os) { *os << c.stage; }
};

class JavaStageFailureTest : public JavaGraphTest, public ::testing::WithParamInterface<StageCase> {};

TEST_P(JavaStageFailureTest, ExceptionIsReportedWithItsStage) {
  testing_filters::RunOutcome out = run(std::string(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 10, size: 64}}
  bad:  {lang: java, class: org.sluice.nativetest.Thrower, classpath: [@JAR@], args: {in: )") +
                                        GetParam().stage + R"(}}
streams:
  - {from: src.out, to: bad.in}
)");
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->filter, "bad");
  EXPECT_EQ(out.failure->stage, GetParam().stage);
  EXPECT_EQ(out.failure->message.rfind(std::string("java.lang.UnsupportedOperationException: boom in ") +
                                           GetParam().stage, 0), 0u) << out.failure->message;
  EXPECT_NE(out.failure->message.find("\tat org.sluice.nativetest.Thrower.maybe(Thrower.java:"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Stages, JavaStageFailureTest,
                         ::testing::Values(StageCase{"init"}, StageCase{"process"}, StageCase{"finalize"}),
                         [](const auto& info) { return std::string(info.param.stage); });

// A NUL inside a Java exception's message does not end the report there (C strings would):
// it is shown escaped, and the rest and the stack trace follow.
TEST_F(JavaFailureTest, ANulInTheMessageDoesNotCutTheReport) {
  testing_filters::RunOutcome out = run(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 10, size: 64}}
  bad:  {lang: java, class: org.sluice.nativetest.Thrower, classpath: [@JAR@], args: {in: process, nul: yes}}
streams:
  - {from: src.out, to: bad.in}
)");
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->message.rfind("java.lang.UnsupportedOperationException: boom in process\\x00after a NUL\n", 0), 0u)
      << out.failure->message;
  EXPECT_NE(out.failure->message.find("\tat org.sluice.nativetest.Thrower.maybe(Thrower.java:"), std::string::npos)
      << out.failure->message;
}

TEST_F(JavaFailureTest, ConstructorExceptionIsReportedAtCreate) {
  testing_filters::RunOutcome out = run(R"(
filters:
  bad: {lang: java, class: org.sluice.nativetest.BadConstructor, classpath: [@JAR@]}
)");
  ASSERT_TRUE(out.failure);
  EXPECT_EQ(out.failure->filter, "bad");
  EXPECT_EQ(out.failure->stage, "create");
  EXPECT_EQ(out.failure->message.rfind("java.lang.IllegalStateException: cannot construct\n", 0), 0u)
      << out.failure->message;
  EXPECT_NE(out.failure->message.find("\tat org.sluice.nativetest.BadConstructor.<init>(BadConstructor.java:"),
            std::string::npos) << out.failure->message;
  EXPECT_EQ(out.failure->message.find("reflect"), std::string::npos) << "reflection frames are noise: "
                                                                      << out.failure->message;
}

// Validation: every class problem is found before anything starts, at the class: line.
std::string validation_errors(const std::string& yaml) {
  try {
    testing_filters::run_yaml(with_java(yaml));
  } catch (const sluice::topo::TopologyError& e) {
    return e.what();
  }
  return "";
}

TEST_F(JavaFailureTest, MissingClassIsReportedAtItsLineWithASuggestion) {
  const std::string errors = validation_errors(R"(filters:
  up: {lang: java, class: org.sluice.nativetest.Rely, classpath: [@JAR@]}
)");
  EXPECT_NE(errors.find("test.yaml:3:27: filter 'up': class 'org.sluice.nativetest.Rely' is not in classpath ["),
            std::string::npos) << errors;
  EXPECT_NE(errors.find("did you mean 'org.sluice.nativetest.Relay'?"), std::string::npos) << errors;
}

TEST_F(JavaFailureTest, ClassesThatCannotBeFiltersAreRefused) {
  const std::string errors = validation_errors(R"(filters:
  a: {lang: java, class: org.sluice.nativetest.NotAFilter, classpath: [@JAR@]}
  b: {lang: java, class: org.sluice.nativetest.NoDefaultConstructor, classpath: [@JAR@]}
  c: {lang: java, class: org.sluice.nativetest.Relay, classpath: [/no/such.jar]}
  d: {lang: java, class: NotAFilter, classpath: [@JAR@]}
)");
  EXPECT_NE(errors.find("test.yaml:3:26: filter 'a': class 'org.sluice.nativetest.NotAFilter' does not implement "
                        "org.sluice.Filter; declare it as 'public class NotAFilter implements org.sluice.Filter'"),
            std::string::npos) << errors;
  EXPECT_NE(errors.find("filter 'b': class 'org.sluice.nativetest.NoDefaultConstructor' has no public no-argument "
                        "constructor; add 'public NoDefaultConstructor() {}'"),
            std::string::npos) << errors;
  EXPECT_NE(errors.find("filter 'c': classpath entry '/no/such.jar' does not exist"), std::string::npos) << errors;
  EXPECT_NE(errors.find("filter 'd': class 'NotAFilter' is not in classpath"), std::string::npos) << errors;
  EXPECT_NE(errors.find("did you mean 'org.sluice.nativetest.NotAFilter'?"), std::string::npos) << errors;
}

// A topology of one filter 'uses': class org.sluice.nativedependent.`java_class` (from the
// jar that needs java_test_dependency.jar) on `classpath`.
std::string uses(const std::string& java_class, const std::string& classpath) {
  return "filters:\n  uses: {lang: java, class: org.sluice.nativedependent." + java_class + ", classpath: [" +
         classpath + "]}\n";
}

const std::string kDependent = JAVA_TEST_DEPENDENT_JAR;
const std::string kWithDependency = kDependent + ", " + JAVA_TEST_DEPENDENCY_JAR;

// A dependency jar left off the classpath: found by validation, at classpath:, naming the
// class that is missing and what to do; with the jar the same filter runs.
TEST_F(JavaFailureTest, AMissingDependencyJarIsReportedAtTheClasspath) {
  const std::string errors = validation_errors(uses("UsesHelper", kDependent));
  EXPECT_NE(errors.find("test.yaml:3:79: filter 'uses': classpath [" + kDependent + "] lacks class "
                        "'org.sluice.nativedep.Helper', which class 'org.sluice.nativedependent.UsesHelper' needs "
                        "(its code uses it); add the jar that holds it to classpath: (in a Maven project, "
                        "mvn dependency:copy-dependencies copies every dependency jar to target/dependency/)"),
            std::string::npos) << errors;
  EXPECT_EQ(validation_errors(uses("UsesHelper", kWithDependency)), "");
}

// The verifier loads library types while linking the class (a subtype passed where the
// library takes its supertype): that too is a missing jar, said at classpath:, not a raw
// NoClassDefFoundError at class:.
TEST_F(JavaFailureTest, AMissingDependencyFoundWhileLinkingIsReportedAtTheClasspath) {
  const std::string errors = validation_errors(uses("PassesDerived", kDependent));
  EXPECT_NE(errors.find("test.yaml:3:82: filter 'uses': classpath [" + kDependent + "] lacks class 'org.sluice.nativedep."),
            std::string::npos) << errors;
  EXPECT_NE(errors.find("which class 'org.sluice.nativedependent.PassesDerived' needs (its code uses it); add the "
                        "jar that holds it to classpath:"),
            std::string::npos) << errors;
  EXPECT_EQ(errors.find("\tat "), std::string::npos) << "no stack trace: " << errors;
  EXPECT_EQ(validation_errors(uses("PassesDerived", kWithDependency)), "");
}

// DIR/* stands for the jars in DIR, as for java -cp (where copy-dependencies puts them).
TEST_F(JavaFailureTest, ADirectoryWildcardOnTheClasspathNamesItsJars) {
  const std::string dir = kDependent.substr(0, kDependent.rfind('/'));  // the dependency's jar is there too
  EXPECT_EQ(validation_errors(uses("PassesDerived", dir + "/*")), "");
  EXPECT_NE(validation_errors(uses("PassesDerived", "/no/such/dir/*"))
                .find("classpath entry '/no/such/dir/*': '/no/such/dir' is not a directory; a DIR/* entry names "
                      "the jars in DIR"),
            std::string::npos);
  EXPECT_NE(validation_errors(uses("PassesDerived", dir + "/java_test_*.jar")).find("only a whole DIR/* is expanded"),
            std::string::npos);
}

}  // namespace
}  // namespace jtest
