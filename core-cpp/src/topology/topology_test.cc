#include "topology/topology.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>

#include <gtest/gtest.h>

namespace sluice::topo {
namespace {

// Lines joined with '\n', so that a test's line numbers are the list's positions.
std::string yaml(std::initializer_list<std::string_view> lines) {
  std::string out;
  for (std::string_view line : lines) {
    out += line;
    out += '\n';
  }
  return out;
}

Topology parse(const std::string& text) { return parse_topology_text(text, "t.yaml", "/base"); }

std::vector<Diagnostic> diagnostics_of(const std::string& text) {
  try {
    parse(text);
  } catch (const TopologyError& e) {
    return e.diagnostics();
  }
  ADD_FAILURE() << "parsed without errors:\n" << text;
  return {};
}

std::string all(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) out += "  " + d.str() + "\n";
  return out;
}

// A diagnostic at line:column whose message holds every one of `words`.
::testing::AssertionResult Reported(const std::vector<Diagnostic>& diagnostics, int line,
                                    int column, const std::vector<std::string>& words) {
  for (const Diagnostic& d : diagnostics) {
    if (d.mark.line != line || d.mark.column != column) continue;
    const bool has_all = std::all_of(words.begin(), words.end(), [&](const std::string& w) {
      return d.message.find(w) != std::string::npos;
    });
    if (has_all) return ::testing::AssertionSuccess();
  }
  auto failure = ::testing::AssertionFailure();
  failure << "nothing at " << line << ":" << column << " saying";
  for (const std::string& w : words) failure << " [" << w << "]";
  return failure << "; got:\n" << all(diagnostics);
}

// `text` has exactly one problem, at line:column, and its message holds every one of `words`.
::testing::AssertionResult OnlyError(const std::string& text, int line, int column,
                                     const std::vector<std::string>& words) {
  const std::vector<Diagnostic> diagnostics = diagnostics_of(text);
  if (diagnostics.size() != 1) {
    return ::testing::AssertionFailure()
           << "expected one diagnostic, got " << diagnostics.size() << ":\n" << all(diagnostics);
  }
  return Reported(diagnostics, line, column, words);
}

bool suggests(const std::string& text) {
  const std::vector<Diagnostic> diagnostics = diagnostics_of(text);
  return !diagnostics.empty() &&
         diagnostics[0].message.find("did you mean") != std::string::npos;
}

// Filters a, b and c, for stream tests; streams start at line 5.
const std::string kThreeFilters = yaml({
    "filters:",
    "  a: {class: A}",
    "  b: {class: B}",
    "  c: {class: C}",
});

// The example from DESIGN.md.
const std::string kDesignExample = yaml({
    "name: upper-demo",
    "defaults: {buffer_size: 64KiB, depth: 16}",
    "hosts:                             # leave out to run everything in one process",
    "  a: 127.0.0.1:7700",
    "  b: 127.0.0.1:7701",
    "filters:",
    "  read:  {lang: cpp,  class: LineReader, library: build/examples/libexamples.so,",
    "          args: {path: examples/data/words.txt}, place: {a: 1}}",
    "  upper: {lang: java, class: org.sluice.examples.Upper,",
    "          classpath: [examples/java/target/examples.jar], place: {a: 1, b: 2}}",
    "  count: {lang: cpp,  class: WordCount, library: build/examples/libexamples.so, "
    "place: {b: 1}}",
    "streams:",
    "  - {from: read.out,  to: upper.in, policy: demand_driven}",
    "  - {from: upper.out, to: count.in, policy: by_key, buffer_size: 4KiB}",
    "work: [first-pass, second-pass]    # the UOW payloads",
});

void ExpectMark(Mark mark, int line, int column) {
  EXPECT_EQ(mark.line, line);
  EXPECT_EQ(mark.column, column);
}

// ---------------------------------------------------------------------------------------------
// What a valid file parses to.

TEST(Topology, DesignExampleTopLevel) {
  const Topology t = parse_topology_text(kDesignExample, "demo.yaml", "/proj");
  EXPECT_EQ(t.name, "upper-demo");
  EXPECT_EQ(t.file, "demo.yaml");
  EXPECT_EQ(t.dir, "/proj");
  EXPECT_EQ(t.defaults.buffer_size, 65536u);
  EXPECT_EQ(t.defaults.depth, 16u);
  ASSERT_EQ(t.hosts.size(), 2u);
  EXPECT_EQ(t.hosts[0].name, "a");
  EXPECT_EQ(t.hosts[0].address, "127.0.0.1:7700");
  ExpectMark(t.hosts[0].mark, 4, 3);
  EXPECT_EQ(t.hosts[1].name, "b");
  EXPECT_EQ(t.hosts[1].address, "127.0.0.1:7701");
  EXPECT_EQ(t.work, (std::vector<std::string>{"first-pass", "second-pass"}));
  EXPECT_EQ(t.jvm.heap, 0u);
  EXPECT_TRUE(t.jvm.options.empty());
  EXPECT_TRUE(t.has_java());
}

TEST(Topology, DesignExampleFilters) {
  const Topology t = parse_topology_text(kDesignExample, "demo.yaml", "/proj");
  ASSERT_EQ(t.filters.size(), 3u);

  const FilterSpec& read = t.filters[0];
  EXPECT_EQ(read.name, "read");
  EXPECT_EQ(read.lang, Lang::kCpp);
  EXPECT_EQ(read.class_name, "LineReader");
  EXPECT_EQ(read.library, "/proj/build/examples/libexamples.so");
  EXPECT_TRUE(read.classpath.empty());
  EXPECT_EQ(read.args, (std::map<std::string, std::string>{{"path", "examples/data/words.txt"}}));
  EXPECT_EQ(read.copies, 1);
  EXPECT_EQ(read.place, (std::vector<std::pair<std::string, int>>{{"a", 1}}));
  ExpectMark(read.mark, 7, 3);
  ExpectMark(read.class_mark, 7, 30);
  ExpectMark(read.library_mark, 7, 51);

  const FilterSpec& upper = t.filters[1];
  EXPECT_EQ(upper.name, "upper");
  EXPECT_EQ(upper.lang, Lang::kJava);
  EXPECT_EQ(upper.class_name, "org.sluice.examples.Upper");
  EXPECT_EQ(upper.library, "");
  EXPECT_EQ(upper.classpath, (std::vector<std::string>{"/proj/examples/java/target/examples.jar"}));
  EXPECT_TRUE(upper.args.empty());
  EXPECT_EQ(upper.copies, 3);
  EXPECT_EQ(upper.place, (std::vector<std::pair<std::string, int>>{{"a", 1}, {"b", 2}}));
  ExpectMark(upper.mark, 9, 3);
  ExpectMark(upper.classpath_mark, 10, 22);
  ExpectMark(upper.library_mark, 9, 3);  // no library: the filter's own mark

  EXPECT_EQ(t.filters[2].name, "count");
  EXPECT_EQ(t.filters[2].class_name, "WordCount");
  EXPECT_EQ(t.find_filter("upper"), &t.filters[1]);
  EXPECT_EQ(t.find_filter("nope"), nullptr);
}

TEST(Topology, DesignExampleStreams) {
  const Topology t = parse_topology_text(kDesignExample, "demo.yaml", "/proj");
  ASSERT_EQ(t.streams.size(), 2u);
  const StreamSpec& first = t.streams[0];
  EXPECT_EQ(first.from.str(), "read.out");
  EXPECT_EQ(first.from.filter, "read");
  EXPECT_EQ(first.from.port, "out");
  EXPECT_EQ(first.to.str(), "upper.in");
  EXPECT_EQ(first.policy, Policy::kDemandDriven);
  EXPECT_EQ(first.buffer_size, 65536u);
  EXPECT_EQ(first.depth, 16u);
  ExpectMark(first.mark, 13, 5);
  ExpectMark(first.from.mark, 13, 12);
  ExpectMark(first.to.mark, 13, 27);

  const StreamSpec& second = t.streams[1];
  EXPECT_EQ(second.from.str(), "upper.out");
  EXPECT_EQ(second.to.str(), "count.in");
  EXPECT_EQ(second.policy, Policy::kByKey);
  EXPECT_EQ(second.buffer_size, 4096u);
  EXPECT_EQ(second.depth, 16u);
}

TEST(Topology, DefaultsWhenLeftOut) {
  const Topology t = parse("filters: {a: {class: A}}\n");
  EXPECT_EQ(t.name, "t");  // the file name without extension
  EXPECT_EQ(t.file, "t.yaml");
  EXPECT_EQ(t.dir, "/base");
  EXPECT_EQ(t.defaults.buffer_size, kDefaultBufferSize);
  EXPECT_EQ(t.defaults.depth, kDefaultDepth);
  EXPECT_TRUE(t.hosts.empty());
  EXPECT_TRUE(t.streams.empty());
  EXPECT_EQ(t.work, (std::vector<std::string>{""}));
  ASSERT_EQ(t.filters.size(), 1u);
  const FilterSpec& a = t.filters[0];
  EXPECT_EQ(a.lang, Lang::kCpp);
  EXPECT_EQ(a.library, "");  // compiled into the program
  ExpectMark(a.library_mark, 1, 11);
  ExpectMark(a.classpath_mark, 1, 11);
  EXPECT_EQ(a.copies, 1);
  EXPECT_TRUE(a.place.empty());
  EXPECT_TRUE(a.args.empty());
  EXPECT_FALSE(t.has_java());
}

TEST(Topology, EmptyStreamsAreAllowed) {
  EXPECT_TRUE(parse("filters: {a: {class: A}}\nstreams: []\n").streams.empty());
  EXPECT_TRUE(parse("filters: {a: {class: A}}\nstreams:\n").streams.empty());
}

TEST(Topology, StreamsInheritDefaults) {
  const Topology t = parse(kThreeFilters + yaml({
                                               "defaults: {buffer_size: 1MiB, depth: 4}",
                                               "streams:",
                                               "  - {from: a.out, to: b.in}",
                                               "  - {from: b.out, to: c.in, buffer_size: 100B}",
                                               "  - {from: a.log, to: c.log, depth: 2}",
                                           }));
  ASSERT_EQ(t.streams.size(), 3u);
  EXPECT_EQ(t.streams[0].buffer_size, 1u << 20);
  EXPECT_EQ(t.streams[0].depth, 4u);
  EXPECT_EQ(t.streams[0].policy, Policy::kRoundRobin);
  EXPECT_EQ(t.streams[1].buffer_size, 100u);
  EXPECT_EQ(t.streams[1].depth, 4u);
  EXPECT_EQ(t.streams[2].buffer_size, 1u << 20);
  EXPECT_EQ(t.streams[2].depth, 2u);
}

TEST(Topology, EncryptIsOffByDefaultAndInheritsFromDefaults) {
  const Topology plain = parse(kThreeFilters + yaml({
                                                   "streams:",
                                                   "  - {from: a.out, to: b.in}",
                                                   "  - {from: b.out, to: c.in, encrypt: true}",
                                               }));
  EXPECT_FALSE(plain.streams[0].encrypt);
  EXPECT_TRUE(plain.streams[1].encrypt);
  const Topology all = parse(kThreeFilters + yaml({
                                                 "defaults: {encrypt: yes}",
                                                 "streams:",
                                                 "  - {from: a.out, to: b.in}",
                                                 "  - {from: b.out, to: c.in, encrypt: false}",
                                             }));
  EXPECT_TRUE(all.streams[0].encrypt);
  EXPECT_FALSE(all.streams[1].encrypt);
}

TEST(TopologyErrors, EncryptMustBeTrueOrFalse) {
  EXPECT_TRUE(OnlyError(kThreeFilters + "streams:\n  - {from: a.out, to: b.in, encrypt: maybe}\n", 6, 38,
                        {"encrypt: must be true or false, not 'maybe'"}));
}

TEST(Topology, DefaultsMayComeAfterStreams) {
  const Topology t = parse(kThreeFilters + yaml({
                                               "streams: [{from: a.out, to: b.in}]",
                                               "defaults: {buffer_size: 65536, depth: 1}",
                                           }));
  EXPECT_EQ(t.streams[0].buffer_size, 65536u);
  EXPECT_EQ(t.streams[0].depth, 1u);
}

TEST(Topology, EveryPolicy) {
  const Topology t =
      parse(kThreeFilters + yaml({
                                "streams:",
                                "  - {from: a.o1, to: b.i1, policy: round_robin}",
                                "  - {from: a.o2, to: b.i2, policy: demand_driven}",
                                "  - {from: a.o3, to: b.i3, policy: by_key}",
                                "  - {from: a.o4, to: b.i4, policy: broadcast}",
                            }));
  ASSERT_EQ(t.streams.size(), 4u);
  EXPECT_EQ(t.streams[0].policy, Policy::kRoundRobin);
  EXPECT_EQ(t.streams[1].policy, Policy::kDemandDriven);
  EXPECT_EQ(t.streams[2].policy, Policy::kByKey);
  EXPECT_EQ(t.streams[3].policy, Policy::kBroadcast);
}

TEST(Topology, PortsAreNamedPerDirection) {
  // b.x is both an input and an output: separate ports.
  const Topology t =
      parse(kThreeFilters + "streams: [{from: a.x, to: b.x}, {from: b.x, to: c.x}]\n");
  EXPECT_EQ(t.streams.size(), 2u);
}

TEST(Topology, DiamondIsNotACycle) {
  const Topology t = parse(yaml({
      "filters: {a: {class: A}, b: {class: B}, c: {class: C}, d: {class: D}}",
      "streams:",
      "  - {from: a.left, to: b.in}",
      "  - {from: a.right, to: c.in}",
      "  - {from: b.out, to: d.left}",
      "  - {from: c.out, to: d.right}",
  }));
  EXPECT_EQ(t.streams.size(), 4u);
}

TEST(Topology, PathsResolveAgainstTheTopologyDirectory) {
  const Topology t = parse_topology_text(
      yaml({
          "filters:",
          "  a: {class: A, library: lib/a.so}",
          "  b: {class: B, library: ../lib/./b.so}",
          "  c: {class: C, library: /opt/sluice/c.so}",
          "  d: {lang: java, class: D, classpath: d.jar}",
          "  e: {lang: java, class: E, classpath: [e.jar, /opt/jars/f.jar, classes/]}",
      }),
      "t.yaml", "/base/dir/");
  EXPECT_EQ(t.dir, "/base/dir");
  EXPECT_EQ(t.filters[0].library, "/base/dir/lib/a.so");
  EXPECT_EQ(t.filters[1].library, "/base/lib/b.so");
  EXPECT_EQ(t.filters[2].library, "/opt/sluice/c.so");
  EXPECT_EQ(t.filters[3].classpath, (std::vector<std::string>{"/base/dir/d.jar"}));
  EXPECT_EQ(t.filters[4].classpath, (std::vector<std::string>{"/base/dir/e.jar", "/opt/jars/f.jar",
                                                              "/base/dir/classes/"}));
  ExpectMark(t.filters[0].library_mark, 2, 26);
}

TEST(Topology, RelativeBaseDirIsMadeAbsolute) {
  const Topology t = parse_topology_text("filters: {a: {class: A, library: x.so}}\n", "t.yaml",
                                         "sub");
  const std::string cwd = std::filesystem::current_path().string();
  EXPECT_EQ(t.dir, cwd + "/sub");
  EXPECT_EQ(t.filters[0].library, cwd + "/sub/x.so");
}

TEST(Topology, CopiesAndPlace) {
  const Topology t = parse(yaml({
      "hosts: {a: 'h1:1', b: 'h2:2'}",
      "filters:",
      "  one: {class: X}",
      "  four: {class: X, copies: 4}",
      "  placed: {class: X, place: {b: 2, a: 3}}",
      "  agreed: {class: X, copies: 2, place: {a: 2}}",
  }));
  EXPECT_EQ(t.filters[0].copies, 1);
  EXPECT_TRUE(t.filters[0].place.empty());  // with hosts: but no place: the console chooses
  EXPECT_EQ(t.filters[1].copies, 4);
  EXPECT_EQ(t.filters[2].copies, 5);
  EXPECT_EQ(t.filters[2].place, (std::vector<std::pair<std::string, int>>{{"b", 2}, {"a", 3}}));
  EXPECT_EQ(t.filters[3].copies, 2);
}

TEST(Topology, ArgsKeepTheirText) {
  const Topology t = parse(yaml({
      "filters:",
      "  a:",
      "    class: A",
      "    args: {n: 42, f: 1.50, yes: true, s: \"two words\", e: , q: \"null\", h: 0x10}",
  }));
  EXPECT_EQ(t.filters[0].args, (std::map<std::string, std::string>{{"n", "42"},
                                                                    {"f", "1.50"},
                                                                    {"yes", "true"},
                                                                    {"s", "two words"},
                                                                    {"e", ""},
                                                                    {"q", "null"},
                                                                    {"h", "0x10"}}));
}

TEST(Topology, WorkPayloadsAsWritten) {
  const Topology t = parse("filters: {a: {class: A}}\nwork: [first, 2, \"\", 3.0]\n");
  EXPECT_EQ(t.work, (std::vector<std::string>{"first", "2", "", "3.0"}));
}

TEST(Topology, JvmSection) {
  const Topology t = parse(yaml({
      "filters: {a: {lang: java, class: A}}",
      "jvm: {heap: 512MiB, options: [-Xss2m, -Dkey=value]}",
  }));
  EXPECT_EQ(t.jvm.heap, 512u << 20);
  EXPECT_EQ(t.jvm.options, (std::vector<std::string>{"-Xss2m", "-Dkey=value"}));
}

TEST(Topology, HostAddresses) {
  const Topology t = parse(yaml({
      "hosts:",
      "  v6: '[::1]:7700'",
      "  named: node-1.example.org:65535",
      "  low_port: 10.0.0.1:1",
      "filters: {a: {class: A}}",
  }));
  ASSERT_EQ(t.hosts.size(), 3u);
  EXPECT_EQ(t.hosts[0].address, "[::1]:7700");
  EXPECT_EQ(t.hosts[1].address, "node-1.example.org:65535");
  EXPECT_EQ(t.hosts[2].name, "low_port");
}

TEST(Topology, FilterNamesMayHaveDashesAndUnderscores) {
  const Topology t = parse(yaml({
      "filters: {read-lines: {class: A}, _count2: {class: B}}",
      "streams: [{from: read-lines.out_1, to: _count2.in-a}]",
  }));
  EXPECT_EQ(t.streams[0].from.filter, "read-lines");
  EXPECT_EQ(t.streams[0].to.port, "in-a");
}

TEST(Topology, ToStringGivesTheYamlSpelling) {
  EXPECT_STREQ(to_string(Lang::kCpp), "cpp");
  EXPECT_STREQ(to_string(Lang::kJava), "java");
  EXPECT_STREQ(to_string(Policy::kRoundRobin), "round_robin");
  EXPECT_STREQ(to_string(Policy::kDemandDriven), "demand_driven");
  EXPECT_STREQ(to_string(Policy::kByKey), "by_key");
  EXPECT_STREQ(to_string(Policy::kBroadcast), "broadcast");
}

// ---------------------------------------------------------------------------------------------
// Files.

class TopologyFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sluice_topology_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const std::filesystem::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

  std::filesystem::path dir_;
};

TEST_F(TopologyFile, PathsAreRelativeToTheFile) {
  const std::string path = write("demo.yaml", "filters: {a: {class: A, library: libs/a.so}}\n");
  const Topology t = parse_topology_file(path);
  EXPECT_EQ(t.file, path);
  EXPECT_EQ(t.dir, dir_.string());
  EXPECT_EQ(t.name, "demo");
  EXPECT_EQ(t.filters[0].library, (dir_ / "libs/a.so").string());
}

TEST_F(TopologyFile, ErrorsNameTheFile) {
  const std::string path = write("bad.yaml", "filters: {a: {clas: A}}\n");
  try {
    parse_topology_file(path);
    FAIL() << "no error";
  } catch (const TopologyError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u);
    EXPECT_EQ(e.diagnostics()[0].file, path);
    EXPECT_EQ(e.diagnostics()[0].str().rfind(path + ":1:11: filter 'a' has no class:", 0), 0u)
        << e.what();
  }
}

TEST_F(TopologyFile, MissingFile) {
  const std::string path = (dir_ / "nope.yaml").string();
  try {
    parse_topology_file(path);
    FAIL() << "no error";
  } catch (const TopologyError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].mark.line, 0);
    EXPECT_EQ(std::string(e.what()),
              path + ": cannot open the topology file: No such file or directory; check the path");
  }
}

TEST_F(TopologyFile, DirectoryIsNotATopology) {
  try {
    parse_topology_file(dir_.string());
    FAIL() << "no error";
  } catch (const TopologyError& e) {
    EXPECT_EQ(std::string(e.what()),
              dir_.string() + ": cannot read the topology: it is a directory, not a file");
  }
}

// ---------------------------------------------------------------------------------------------
// The shape of errors.

TEST(TopologyErrors, DiagnosticStr) {
  EXPECT_EQ((Diagnostic{"t.yaml", {3, 7}, "bad"}).str(), "t.yaml:3:7: bad");
  EXPECT_EQ((Diagnostic{"t.yaml", {}, "bad"}).str(), "t.yaml: bad");
}

TEST(TopologyErrors, WhatIsEveryDiagnosticOnePerLine) {
  try {
    parse("filters: {a: {class: A, copies: 0}}\nwork: []\n");
    FAIL() << "no error";
  } catch (const TopologyError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u);
    EXPECT_EQ(std::string(e.what()), e.diagnostics()[0].str() + "\n" + e.diagnostics()[1].str());
    EXPECT_EQ(e.diagnostics()[0].str(),
              "t.yaml:1:33: copies must be a whole number from 1 to 1024, not '0'");
  }
}

TEST(TopologyErrors, IsASluiceError) {
  EXPECT_THROW(parse("filters: {}\n"), Error);
}

TEST(TopologyErrors, ReportsEveryProblem) {
  const std::vector<Diagnostic> d = diagnostics_of(yaml({
      "defaults: {buffer_size: 64KB}",                           // 1
      "filters:",                                                // 2
      "  read: {class: R, lang: jav}",                           // 3
      "  count: {class: C, copies: -2}",                         // 4
      "  read: {class: R2}",                                     // 5
      "streams:",                                                // 6
      "  - {from: read.out, to: cont.in, policy: fastest}",      // 7
      "  - {from: count.out, to: read.in, depth: 0}",            // 8
      "work: []",                                                // 9
  }));
  ASSERT_EQ(d.size(), 8u) << all(d);
  EXPECT_TRUE(Reported(d, 1, 25, {"'64KB' is not a size; did you mean 64KiB?"}));
  EXPECT_TRUE(Reported(d, 3, 26, {"unknown lang 'jav'", "did you mean 'java'?"}));
  EXPECT_TRUE(Reported(d, 4, 29, {"copies must be", "not '-2'"}));
  EXPECT_TRUE(Reported(d, 5, 3, {"duplicate filter 'read'", "line 3"}));
  EXPECT_TRUE(Reported(d, 7, 26, {"no filter named 'cont'", "did you mean 'count'?"}));
  EXPECT_TRUE(Reported(d, 7, 43, {"unknown policy 'fastest'"}));
  EXPECT_TRUE(Reported(d, 8, 43, {"depth must be a whole number from 1 to 65536", "not '0'"}));
  EXPECT_TRUE(Reported(d, 9, 7, {"work: is empty"}));
}

TEST(TopologyErrors, InFileOrder) {
  const std::vector<Diagnostic> d = diagnostics_of(yaml({
      "filters: {a: {class: A}, b: {class: B}}",
      "streams:",
      "  - {from: a.out, to: b.in}",
      "  - {from: b.out, to: a.in}",
      "defaults: {depth: 0}",
  }));
  ASSERT_EQ(d.size(), 2u) << all(d);
  EXPECT_EQ(d[0].mark.line, 4);  // the cycle, found last
  EXPECT_EQ(d[1].mark.line, 5);
}

TEST(TopologyErrors, ABrokenFilterIsStillKnownToStreams) {
  // Only the filter's own problem: the streams naming it are not blamed too.
  EXPECT_TRUE(OnlyError(yaml({
                            "filters: {a: {class: A}, b: {copies: 0, class: B}}",
                            "streams: [{from: a.out, to: b.in}]",
                        }),
                        1, 38, {"copies must be"}));
}

TEST(TopologyErrors, ABadLangDoesNotAlsoBlameClasspath) {
  EXPECT_TRUE(OnlyError("filters: {a: {lang: jvm, class: A, classpath: a.jar}}\n", 1, 21,
                        {"unknown lang 'jvm'; use cpp or java"}));
}

// ---------------------------------------------------------------------------------------------
// Every error, where it is reported and what it says.

TEST(TopologyErrors, YamlSyntax) {
  EXPECT_TRUE(OnlyError(yaml({"filters:", "  a: {class: X", "  b: 1"}), 3, 4,
                        {"invalid YAML: end of map flow not found"}));
}

TEST(TopologyErrors, EmptyFile) {
  for (const char* text : {"", "# only a comment\n"}) {
    const std::vector<Diagnostic> d = diagnostics_of(text);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].mark.line, 0);
    EXPECT_EQ(d[0].str(), "t.yaml: the topology is empty; it needs at least filters:, e.g. "
                          "filters: {hello: {class: Hello}}");
  }
}

TEST(TopologyErrors, TopLevelNotAMap) {
  EXPECT_TRUE(OnlyError("- a\n- b\n", 1, 1, {"the top level must be a map", "not a list"}));
  EXPECT_TRUE(OnlyError("hello\n", 1, 1, {"the top level must be a map", "not 'hello'"}));
}

TEST(TopologyErrors, TwoDocuments) {
  EXPECT_TRUE(OnlyError("filters: {a: {class: A}}\n---\nname: x\n", 3, 1,
                        {"a topology file holds one YAML document"}));
}

TEST(TopologyErrors, UnknownTopLevelKey) {
  EXPECT_TRUE(OnlyError("filters: {a: {class: A}}\nstream: []\n", 2, 1,
                        {"unknown key 'stream' at the top level; use one of name, defaults, "
                         "hosts, filters, streams, work, jvm; did you mean 'streams'?"}));
  EXPECT_FALSE(suggests("filters: {a: {class: A}}\ncolour: red\n"));
}

TEST(TopologyErrors, NameNotAString) {
  EXPECT_TRUE(OnlyError("name: [a]\nfilters: {a: {class: A}}\n", 1, 7,
                        {"name: must be a non-empty string, not a list"}));
}

TEST(TopologyErrors, DuplicateTopLevelKey) {
  EXPECT_TRUE(OnlyError("filters: {a: {class: A}}\nname: x\nname: y\n", 3, 1,
                        {"duplicate key 'name'; the first is at line 2"}));
}

TEST(TopologyErrors, NoFilters) {
  EXPECT_TRUE(OnlyError("name: x\n", 1, 1, {"there is no filters: section", "at least one"}));
}

TEST(TopologyErrors, EmptyFilters) {
  EXPECT_TRUE(OnlyError("filters: {}\n", 1, 10, {"filters: is empty", "at least one filter"}));
  EXPECT_TRUE(OnlyError("filters:\n", 1, 1, {"filters: is empty"}));
}

TEST(TopologyErrors, FiltersNotAMap) {
  EXPECT_TRUE(OnlyError("filters: [a, b]\n", 1, 10,
                        {"filters: must be a map from filter name to its settings", "not a list"}));
}

TEST(TopologyErrors, DuplicateFilterNamesTheFirst) {
  EXPECT_TRUE(OnlyError(yaml({"filters:", "  a: {class: A}", "  b: {class: B}", "  a: {class: C}"}),
                        4, 3, {"duplicate filter 'a'; the first is at line 2"}));
}

TEST(TopologyErrors, FilterNameNotAnIdentifier) {
  EXPECT_TRUE(OnlyError("filters:\n  9lives: {class: A}\n", 2, 3,
                        {"filter name '9lives' is not a valid name", "letters, digits"}));
  EXPECT_TRUE(OnlyError("filters:\n  'my filter': {class: A}\n", 2, 3,
                        {"filter name 'my filter' is not a valid name"}));
}

TEST(TopologyErrors, FilterNotAMap) {
  EXPECT_TRUE(OnlyError("filters:\n  a: A\n", 2, 6,
                        {"filter 'a' must be a map of settings", "not 'A'"}));
  EXPECT_TRUE(OnlyError("filters:\n  a:\n", 2, 3, {"filter 'a' must be a map", "empty"}));
}

TEST(TopologyErrors, UnknownFilterKey) {
  const std::string text = "filters:\n  a: {class: A, librar: x.so}\n";
  EXPECT_TRUE(OnlyError(text, 2, 17,
                        {"unknown key 'librar' in filter 'a'; use one of lang, class, library, "
                         "classpath, args, copies, place; did you mean 'library'?"}));
}

TEST(TopologyErrors, DuplicateFilterKey) {
  EXPECT_TRUE(OnlyError("filters:\n  a: {class: A,\n      class: B}\n", 3, 7,
                        {"duplicate key 'class'; the first is at line 2"}));
}

TEST(TopologyErrors, UnknownLang) {
  EXPECT_TRUE(OnlyError("filters: {a: {lang: c++, class: A}}\n", 1, 21,
                        {"unknown lang 'c++'; use cpp or java; did you mean 'cpp'?"}));
  EXPECT_TRUE(OnlyError("filters: {a: {lang: Java, class: A}}\n", 1, 21,
                        {"did you mean 'java'?"}));
  EXPECT_FALSE(suggests("filters: {a: {lang: python, class: A}}\n"));
}

TEST(TopologyErrors, MissingClass) {
  EXPECT_TRUE(OnlyError("filters:\n  a: {lang: cpp}\n", 2, 3,
                        {"filter 'a' has no class:; add class:"}));
}

TEST(TopologyErrors, ClassNotAString) {
  EXPECT_TRUE(OnlyError("filters: {a: {class: [A]}}\n", 1, 22,
                        {"class: must be a non-empty string, not a list"}));
  // An empty value is reported at its key.
  EXPECT_TRUE(OnlyError("filters:\n  a: {class: }\n", 2, 7,
                        {"class: must be a non-empty string, not an empty value"}));
}

TEST(TopologyErrors, LibraryOnAJavaFilter) {
  EXPECT_TRUE(OnlyError("filters: {a: {lang: java, class: A, library: a.so}}\n", 1, 37,
                        {"library: is only for cpp filters", "classpath:"}));
}

TEST(TopologyErrors, ClasspathOnACppFilter) {
  EXPECT_TRUE(OnlyError("filters: {a: {class: A, classpath: a.jar}}\n", 1, 25,
                        {"classpath: is only for java filters; add lang: java"}));
}

TEST(TopologyErrors, EmptyClasspath) {
  EXPECT_TRUE(OnlyError("filters: {a: {lang: java, class: A, classpath: []}}\n", 1, 48,
                        {"classpath: is empty", "leave classpath: out"}));
}

TEST(TopologyErrors, ClasspathEntryNotAString) {
  EXPECT_TRUE(OnlyError("filters: {a: {lang: java, class: A, classpath: [a.jar, [b]]}}\n", 1, 56,
                        {"classpath: must be a non-empty string, not a list"}));
}

TEST(TopologyErrors, NestedArg) {
  EXPECT_TRUE(OnlyError("filters: {a: {class: A, args: {ok: 1, deep: {x: 1}}}}\n", 1, 45,
                        {"args: deep must be a plain value", "not a map"}));
  EXPECT_TRUE(OnlyError("filters: {a: {class: A, args: {list: [1, 2]}}}\n", 1, 38,
                        {"args: list must be a plain value", "not a list"}));
}

TEST(TopologyErrors, ArgsNotAMap) {
  EXPECT_TRUE(OnlyError("filters: {a: {class: A, args: [x]}}\n", 1, 31,
                        {"args: must be a map of name: value"}));
}

TEST(TopologyErrors, BadCopies) {
  for (const char* copies : {"0", "-1", "2.5", "1025", "two"}) {
    EXPECT_TRUE(OnlyError("filters: {a: {class: A, copies: " + std::string(copies) + "}}\n", 1,
                          33,
                          {"copies must be a whole number from 1 to 1024",
                           "not '" + std::string(copies) + "'"}));
  }
}

TEST(TopologyErrors, PlaceOnAHostNotListed) {
  const std::string text = yaml({
      "hosts: {alpha: 'h:1', beta: 'h:2'}",
      "filters:",
      "  a: {class: A, place: {alpah: 1, beta: 1}}",
  });
  EXPECT_TRUE(OnlyError(text, 3, 25,
                        {"host 'alpah' is not listed in hosts: (listed: alpha, beta); did you "
                         "mean 'alpha'?"}));
}

TEST(TopologyErrors, PlaceWithoutHosts) {
  EXPECT_TRUE(OnlyError("filters: {a: {class: A, place: {a: 1}}}\n", 1, 32,
                        {"place: needs hosts:", "leave place: out"}));
}

TEST(TopologyErrors, PlaceNeedsPositiveCounts) {
  EXPECT_TRUE(OnlyError("hosts: {h: 'x:1'}\nfilters: {a: {class: A, place: {h: 0}}}\n", 2, 36,
                        {"copies on host 'h' must be a whole number from 1 to 1024", "not '0'"}));
}

TEST(TopologyErrors, PlaceEmptyOrNotAMap) {
  EXPECT_TRUE(OnlyError("hosts: {h: 'x:1'}\nfilters: {a: {class: A, place: {}}}\n", 2, 32,
                        {"place: is empty"}));
  EXPECT_TRUE(OnlyError("hosts: {h: 'x:1'}\nfilters: {a: {class: A, place: [h]}}\n", 2, 32,
                        {"place: must map host names to copies", "not a list"}));
}

TEST(TopologyErrors, CopiesDisagreeWithPlace) {
  EXPECT_TRUE(OnlyError("hosts: {h: 'x:1'}\nfilters: {a: {class: A, copies: 3, place: {h: 2}}}\n",
                        2, 33,
                        {"copies: 3 does not match place:, which runs 2", "leave copies: out"}));
}

TEST(TopologyErrors, TooManyPlacedCopies) {
  EXPECT_TRUE(OnlyError("hosts: {h: 'x:1', i: 'y:1'}\n"
                        "filters: {a: {class: A, place: {h: 1000, i: 1000}}}\n",
                        2, 32, {"place: runs 2000 copies of filter 'a'; the maximum is 1024"}));
}

TEST(TopologyErrors, HostNameNotAnIdentifier) {
  EXPECT_TRUE(OnlyError("hosts:\n  'host a': 'x:1'\nfilters: {a: {class: A}}\n", 2, 3,
                        {"host name 'host a' is not a valid name"}));
}

TEST(TopologyErrors, BadHostAddresses) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"127.0.0.1", "host 'a': address '127.0.0.1' has no port; write host:port, e.g."},
      {"x:0", "host 'a': '0' in 'x:0' is not a port; use a number from 1 to 65535"},
      {"x:70000", "'70000' in 'x:70000' is not a port"},
      {"x:http", "'http' in 'x:http' is not a port"},
      {"'::1:7700'", "IPv6 address '::1:7700' needs brackets around the host, e.g. [::1]:7700"},
      {"'[::1]7700'", "'[::1]7700' is not an address; write host:port"},
      {"':7700'", "':7700' is not an address"},
  };
  for (const auto& [address, message] : cases) {
    EXPECT_TRUE(OnlyError("filters: {a: {class: A}}\nhosts:\n  a: " + address + "\n", 3, 6,
                          {message}));
  }
}

TEST(TopologyErrors, EmptyHosts) {
  EXPECT_TRUE(OnlyError("filters: {a: {class: A}}\nhosts: {}\n", 2, 8,
                        {"hosts: is empty", "leave hosts: out to run everything in one process"}));
}

TEST(TopologyErrors, HostsNotAMap) {
  EXPECT_TRUE(OnlyError("filters: {a: {class: A}}\nhosts: [a]\n", 2, 8,
                        {"hosts: must be a map from host name to address:port", "not a list"}));
}

TEST(TopologyErrors, StreamsNotAList) {
  EXPECT_TRUE(OnlyError(kThreeFilters + "streams: {from: a.out, to: b.in}\n", 5, 10,
                        {"streams: must be a list", "not a map"}));
}

TEST(TopologyErrors, StreamNotAMap) {
  EXPECT_TRUE(OnlyError(kThreeFilters + "streams:\n  - a.out\n", 6, 5,
                        {"a stream must be a map such as {from: read.out, to: upper.in}",
                         "not 'a.out'"}));
}

TEST(TopologyErrors, StreamWithoutEnds) {
  const std::vector<Diagnostic> d =
      diagnostics_of(kThreeFilters + "streams:\n  - {policy: by_key}\n");
  ASSERT_EQ(d.size(), 2u) << all(d);
  EXPECT_TRUE(Reported(d, 6, 5, {"stream has no from:; add from: filter.port"}));
  EXPECT_TRUE(Reported(d, 6, 5, {"stream has no to:; add to: filter.port"}));
}

TEST(TopologyErrors, PortNotFilterDotPort) {
  for (const char* port : {"a", "a.", ".out", "a.out.x", "'a.my port'", "a.9"}) {
    EXPECT_TRUE(OnlyError(kThreeFilters + "streams:\n  - {from: " + port + ", to: b.in}\n", 6,
                          12, {"is not a port; write filter.port, e.g."}))
        << port;
  }
  EXPECT_TRUE(OnlyError(kThreeFilters + "streams:\n  - {from: a.out, to: b}\n", 6, 23,
                        {"to: 'b' is not a port; write filter.port, e.g. b.in"}));
}

TEST(TopologyErrors, UnknownFilterInStream) {
  EXPECT_TRUE(OnlyError(kThreeFilters + "streams:\n  - {from: a.out, to: bb.in}\n", 6, 23,
                        {"no filter named 'bb' (filters: a, b, c); did you mean 'b'?"}));
  EXPECT_FALSE(suggests(kThreeFilters + "streams:\n  - {from: elsewhere.out, to: b.in}\n"));
}

TEST(TopologyErrors, MisspeltPolicy) {
  const std::string stream = "  - {from: a.out, to: b.in, policy: round-robin}\n";
  EXPECT_TRUE(OnlyError(kThreeFilters + "streams:\n" + stream, 6, 37,
                        {"unknown policy 'round-robin'; use one of round_robin, demand_driven, "
                         "by_key, broadcast; did you mean 'round_robin'?"}));
  EXPECT_FALSE(
      suggests(kThreeFilters + "streams:\n  - {from: a.out, to: b.in, policy: fastest}\n"));
}

TEST(TopologyErrors, UnknownStreamKey) {
  EXPECT_TRUE(OnlyError(kThreeFilters + "streams:\n  - {from: a.out, to: b.in, polcy: by_key}\n",
                        6, 29,
                        {"unknown key 'polcy' in a stream; use one of from, to, policy, "
                         "buffer_size, depth, encrypt; did you mean 'policy'?"}));
}

TEST(TopologyErrors, OutputPortFeedsOneStream) {
  EXPECT_TRUE(OnlyError(kThreeFilters + yaml({
                                            "streams:",
                                            "  - {from: a.out, to: b.in}",
                                            "  - {from: a.out, to: c.in}",
                                        }),
                        7, 12,
                        {"output a.out already feeds the stream at line 6",
                         "an output port feeds one stream"}));
}

TEST(TopologyErrors, InputPortFedByOneStream) {
  EXPECT_TRUE(OnlyError(kThreeFilters + yaml({
                                            "streams:",
                                            "  - {from: a.out, to: c.in}",
                                            "  - {from: b.out, to: c.in}",
                                        }),
                        7, 23,
                        {"input c.in is already fed by the stream at line 6",
                         "an input port is fed by one stream"}));
}

TEST(TopologyErrors, StreamToItself) {
  EXPECT_TRUE(OnlyError(kThreeFilters + "streams:\n  - {from: a.out, to: a.in}\n", 6, 5,
                        {"stream from filter 'a' to itself; sluice graphs are acyclic"}));
}

TEST(TopologyErrors, CycleIsNamed) {
  EXPECT_TRUE(OnlyError(kThreeFilters + yaml({
                                            "streams:",
                                            "  - {from: a.out, to: b.in}",
                                            "  - {from: b.out, to: c.in}",
                                            "  - {from: c.out, to: a.in}",
                                        }),
                        8, 5,
                        {"streams form a cycle: a -> b -> c -> a; sluice graphs are acyclic"}));
}

TEST(TopologyErrors, MisspeltSizes) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"64KB", "did you mean 64KiB?"},
      {"64kb", "did you mean 64KiB?"},
      {"64K", "did you mean 64KiB?"},
      {"1.5MiB", "did you mean 1536KiB?"},
  };
  for (const auto& [size, suggestion] : cases) {
    EXPECT_TRUE(OnlyError("defaults: {buffer_size: " + size + "}\nfilters: {a: {class: A}}\n", 1,
                          25,
                          {"buffer_size: '" + size + "' is not a size", suggestion,
                           "units: B, KiB, MiB, GiB"}));
  }
}

TEST(TopologyErrors, BufferSizeZero) {
  EXPECT_TRUE(OnlyError(kThreeFilters + "streams: [{from: a.out, to: b.in, buffer_size: 0}]\n", 5,
                        48, {"buffer_size cannot be 0", "at least 1 byte"}));
}

TEST(TopologyErrors, AbsurdBufferSize) {
  EXPECT_TRUE(OnlyError(kThreeFilters + "streams: [{from: a.out, to: b.in, buffer_size: 2GiB}]\n",
                        5, 48, {"buffer_size 2GiB is absurd; the maximum is 1GiB"}));
}

TEST(TopologyErrors, BufferSizeNotAScalar) {
  EXPECT_TRUE(OnlyError("defaults: {buffer_size: [1]}\nfilters: {a: {class: A}}\n", 1, 25,
                        {"buffer_size must be a size such as 64KiB, not a list"}));
}

TEST(TopologyErrors, BadDepth) {
  for (const char* depth : {"0", "65537", "deep", "1.5"}) {
    const std::string text = "defaults: {depth: " + std::string(depth) + "}\n";
    EXPECT_TRUE(OnlyError(text + "filters: {a: {class: A}}\n", 1, 19,
                          {"depth must be a whole number from 1 to 65536",
                           "not '" + std::string(depth) + "'"}));
  }
}

TEST(TopologyErrors, UnknownDefaultsKey) {
  EXPECT_TRUE(OnlyError("defaults: {dept: 3}\nfilters: {a: {class: A}}\n", 1, 12,
                        {"unknown key 'dept' in defaults:", "did you mean 'depth'?"}));
}

TEST(TopologyErrors, DefaultsNotAMap) {
  EXPECT_TRUE(OnlyError("defaults: 64KiB\nfilters: {a: {class: A}}\n", 1, 11,
                        {"defaults: must be a map", "not '64KiB'"}));
}

TEST(TopologyErrors, EmptyWork) {
  EXPECT_TRUE(OnlyError("filters: {a: {class: A}}\nwork: []\n", 2, 7,
                        {"work: is empty; leave work: out for one unit of work with an empty "
                         "payload"}));
}

TEST(TopologyErrors, WorkNotAList) {
  EXPECT_TRUE(OnlyError("filters: {a: {class: A}}\nwork: first\n", 2, 7,
                        {"work: must be a list of payloads", "not 'first'"}));
}

TEST(TopologyErrors, NestedWorkPayload) {
  EXPECT_TRUE(OnlyError("filters: {a: {class: A}}\nwork: [a, {b: 1}]\n", 2, 11,
                        {"a work payload must be a plain value", "not a map"}));
}

TEST(TopologyErrors, BadJvmHeap) {
  EXPECT_TRUE(OnlyError("filters: {a: {class: A}}\njvm: {heap: 512MB}\n", 2, 13,
                        {"heap: '512MB' is not a size; did you mean 512MiB?"}));
  EXPECT_TRUE(OnlyError("filters: {a: {class: A}}\njvm: {heap: 0}\n", 2, 13,
                        {"heap cannot be 0; leave heap: out for the JVM's default"}));
}

TEST(TopologyErrors, JvmOptions) {
  EXPECT_TRUE(OnlyError("filters: {a: {class: A}}\njvm: {options: [-Xss2m, Xint]}\n", 2, 25,
                        {"JVM option 'Xint' must start with '-', e.g. -Xint"}));
  EXPECT_TRUE(OnlyError("filters: {a: {class: A}}\njvm: {options: -Xint}\n", 2, 16,
                        {"options: must be a list of JVM flags", "not '-Xint'"}));
}

TEST(TopologyErrors, JvmKeysAndShape) {
  EXPECT_TRUE(OnlyError("filters: {a: {class: A}}\njvm: {heep: 1GiB}\n", 2, 7,
                        {"unknown key 'heep' in jvm:", "did you mean 'heap'?"}));
  EXPECT_TRUE(OnlyError("filters: {a: {class: A}}\njvm: 1GiB\n", 2, 6,
                        {"jvm: must be a map", "not '1GiB'"}));
}

// `to: client`: the stream's consumer is the program that submits units (application.h).
TEST(Topology, StreamToClient) {
  const Topology t = parse(kThreeFilters + "streams:\n  - {from: a.out, to: b.in}\n  - {from: b.out, to: client}\n");
  ASSERT_NE(t.client_stream(), nullptr);
  EXPECT_EQ(t.client_stream()->from.str(), "b.out");
  EXPECT_EQ(t.client_stream()->to.str(), "client");
  EXPECT_TRUE(t.client_stream()->to_client());
  EXPECT_EQ(t.copies_of("client"), 1);
  EXPECT_EQ(parse(kThreeFilters).client_stream(), nullptr);
}

TEST(TopologyErrors, ClientTwice) {
  EXPECT_TRUE(OnlyError(kThreeFilters + "streams:\n  - {from: a.out, to: client}\n  - {from: b.out, to: client}\n", 7,
                        23, {"a second stream to: client (the first is at line 6)", "merge the results in one filter"}));
}

TEST(TopologyErrors, ClientOnlyReceives) {
  EXPECT_TRUE(OnlyError(kThreeFilters + "streams:\n  - {from: client, to: a.in}\n", 6, 12,
                        {"from: client", "only receives"}));
  EXPECT_TRUE(OnlyError(kThreeFilters + "streams:\n  - {from: a.out, to: client.in}\n", 6, 23,
                        {"the client has no ports; write to: client"}));
}

TEST(TopologyErrors, ClientIsReserved) {
  EXPECT_TRUE(OnlyError("filters:\n  client: {class: A}\n", 2, 3, {"'client' cannot name a filter"}));
  EXPECT_TRUE(OnlyError("hosts: {client: 127.0.0.1:7700}\nfilters:\n  a: {class: A}\n", 1, 9,
                        {"'client' cannot name a host", "client1"}));
}


}  // namespace
}  // namespace sluice::topo
