// What a valid topology file parses to, and topology files on disk. What a file gets wrong
// (every error, where and what it says) is in topology_errors_test.cc.

#include "topology/topology.h"

#include <unistd.h>

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

// A stream whose depth nobody sets gets the largest power of two of buffers that fits in 1 MiB,
// from 16 to 1024; a depth set in `defaults:` or on the stream is kept whatever the buffer size.
TEST(Topology, DepthLeftOutFollowsTheBufferSize) {
  const Topology t = parse(
      "filters: {a: {class: A}, b: {class: B}}\n"
      "streams:\n"
      "  - {from: a.o1, to: b.i1}\n"
      "  - {from: a.o2, to: b.i2, buffer_size: 4KiB}\n"
      "  - {from: a.o3, to: b.i3, buffer_size: 100B}\n"
      "  - {from: a.o4, to: b.i4, buffer_size: 1MiB}\n"
      "  - {from: a.o5, to: b.i5, buffer_size: 100B, depth: 8}\n"
      "  - {from: a.o6, to: b.i6, buffer_size: 2040B}\n");
  ASSERT_EQ(t.streams.size(), 6u);
  EXPECT_EQ(t.streams[0].depth, 16u);    // 64 KiB: 16 fit in 1 MiB
  EXPECT_EQ(t.streams[1].depth, 256u);   // 4 KiB
  EXPECT_EQ(t.streams[2].depth, 1024u);  // 100 B: at most 1024
  EXPECT_EQ(t.streams[3].depth, 16u);    // 1 MiB: at least 16
  EXPECT_EQ(t.streams[4].depth, 8u);     // set on the stream
  EXPECT_EQ(t.streams[5].depth, 512u);   // 514 fit: a power of two, as queues round up to one
  const Topology d = parse(
      "defaults: {depth: 4}\n"
      "filters: {a: {class: A}, b: {class: B}}\n"
      "streams: [{from: a.out, to: b.in, buffer_size: 100B}]\n");
  EXPECT_EQ(d.streams[0].depth, 4u);  // set in defaults
}

TEST(Topology, DefaultsWhenLeftOut) {
  const Topology t = parse("filters: {a: {class: A}}\n");
  EXPECT_EQ(t.name, "t");  // the file name without extension
  EXPECT_EQ(t.file, "t.yaml");
  EXPECT_EQ(t.dir, "/base");
  EXPECT_EQ(t.defaults.buffer_size, kDefaultBufferSize);
  EXPECT_EQ(t.defaults.depth, 0u);  // not set: each stream's depth follows its buffer size
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

}  // namespace
}  // namespace sluice::topo
