// What a topology file gets wrong, where it is reported and what the message says. Most cases
// are one file with exactly one problem: they are rows of kErrorCases, each its own test named
// TopologyErrors/OneError.Reported/<row name>. What parses is in topology_test.cc.

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "topology/topology.h"

namespace sluice::topo {
namespace {

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

// Filters a, b and c, for stream cases; streams start at line 5.
const std::string kThreeFilters =
    "filters:\n"
    "  a: {class: A}\n"
    "  b: {class: B}\n"
    "  c: {class: C}\n";

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
  const std::vector<Diagnostic> d = diagnostics_of(
      "defaults: {buffer_size: 64KB}\n"                          // 1
      "filters:\n"                                               // 2
      "  read: {class: R, lang: jav}\n"                          // 3
      "  count: {class: C, copies: -2}\n"                        // 4
      "  read: {class: R2}\n"                                    // 5
      "streams:\n"                                               // 6
      "  - {from: read.out, to: cont.in, policy: fastest}\n"     // 7
      "  - {from: count.out, to: read.in, depth: 0}\n"           // 8
      "work: []\n");                                             // 9
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
  const std::vector<Diagnostic> d = diagnostics_of(
      "filters: {a: {class: A}, b: {class: B}}\n"
      "streams:\n"
      "  - {from: a.out, to: b.in}\n"
      "  - {from: b.out, to: a.in}\n"
      "defaults: {depth: 0}\n");
  ASSERT_EQ(d.size(), 2u) << all(d);
  EXPECT_EQ(d[0].mark.line, 4);  // the cycle, found last
  EXPECT_EQ(d[1].mark.line, 5);
}

// ---------------------------------------------------------------------------------------------
// Every error, where it is reported and what it says: one row a case. The file `text` has
// exactly one problem, at line:column, and its message holds every one of `fragments`.

struct ErrorCase {
  std::string name;  // the test's name: letters, digits and '_'
  std::string text;
  int line;
  int column;
  std::vector<std::string> fragments;
};

// How gtest shows a row when its test fails.
void PrintTo(const ErrorCase& c, std::ostream* out) {
  *out << c.name << ", expecting " << c.line << ":" << c.column << " in:\n" << c.text;
}

const std::vector<ErrorCase> kErrorCases = {
    // The file and its top level.
    {"YamlSyntax",
     "filters:\n  a: {class: X\n  b: 1\n", 3, 4,
     {"invalid YAML: end of map flow not found"}},
    {"YamlIndentedWithATab",
     "filters:\n  a: {class: X}\n\tb: {class: Y}\n", 3, 1,
     {"invalid YAML: a tab in the indentation; YAML indents with spaces only"}},
    {"TopLevelIsAList",
     "- a\n- b\n", 1, 1,
     {"the top level must be a map", "not a list"}},
    {"TopLevelIsAScalar",
     "hello\n", 1, 1,
     {"the top level must be a map", "not 'hello'"}},
    {"TwoDocuments",
     "filters: {a: {class: A}}\n---\nname: x\n", 3, 1,
     {"a topology file holds one YAML document"}},
    {"UnknownTopLevelKey",
     "filters: {a: {class: A}}\nstream: []\n", 2, 1,
     {"unknown key 'stream' at the top level; use one of name, defaults, "
      "hosts, filters, streams, work, jvm; did you mean 'streams'?"}},
    {"NameNotAString",
     "name: [a]\nfilters: {a: {class: A}}\n", 1, 7,
     {"name: must be a non-empty string, not a list"}},
    {"DuplicateTopLevelKey",
     "filters: {a: {class: A}}\nname: x\nname: y\n", 3, 1,
     {"duplicate key 'name'; the first is at line 2"}},
    {"NoFilters",
     "name: x\n", 1, 1,
     {"there is no filters: section", "at least one"}},
    {"EmptyFiltersMap",
     "filters: {}\n", 1, 10,
     {"filters: is empty", "at least one filter"}},
    {"EmptyFiltersValue",
     "filters:\n", 1, 1,
     {"filters: is empty"}},
    {"FiltersNotAMap",
     "filters: [a, b]\n", 1, 10,
     {"filters: must be a map from filter name to its settings", "not a list"}},

    // Filters: names, keys, lang and class.
    {"DuplicateFilterNamesTheFirst",
     "filters:\n  a: {class: A}\n  b: {class: B}\n  a: {class: C}\n", 4, 3,
     {"duplicate filter 'a'; the first is at line 2"}},
    {"FilterNameStartsWithADigit",
     "filters:\n  9lives: {class: A}\n", 2, 3,
     {"filter name '9lives' is not a valid name", "letters, digits"}},
    {"FilterNameWithASpace",
     "filters:\n  'my filter': {class: A}\n", 2, 3,
     {"filter name 'my filter' is not a valid name"}},
    {"ClientCannotNameAFilter",
     "filters:\n  client: {class: A}\n", 2, 3,
     {"'client' cannot name a filter"}},
    {"FilterNotAMap",
     "filters:\n  a: A\n", 2, 6,
     {"filter 'a' must be a map of settings", "not 'A'"}},
    {"FilterEmpty",
     "filters:\n  a:\n", 2, 3,
     {"filter 'a' must be a map", "empty"}},
    {"UnknownFilterKey",
     "filters:\n  a: {class: A, librar: x.so}\n", 2, 17,
     {"unknown key 'librar' in filter 'a'; use one of lang, class, library, "
      "classpath, args, copies, place; did you mean 'library'?"}},
    {"DuplicateFilterKey",
     "filters:\n  a: {class: A,\n      class: B}\n", 3, 7,
     {"duplicate key 'class'; the first is at line 2"}},
    {"UnknownLang",
     "filters: {a: {lang: c++, class: A}}\n", 1, 21,
     {"unknown lang 'c++'; use cpp or java; did you mean 'cpp'?"}},
    {"UnknownLangCapitalised",
     "filters: {a: {lang: Java, class: A}}\n", 1, 21,
     {"did you mean 'java'?"}},
    {"MissingClass",
     "filters:\n  a: {lang: cpp}\n", 2, 3,
     {"filter 'a' has no class:; add class:"}},
    {"ClassNotAString",
     "filters: {a: {class: [A]}}\n", 1, 22,
     {"class: must be a non-empty string, not a list"}},
    // An empty value is reported at its key.
    {"ClassEmpty",
     "filters:\n  a: {class: }\n", 2, 7,
     {"class: must be a non-empty string, not an empty value"}},

    // Filters: library, classpath and args.
    {"LibraryOnAJavaFilter",
     "filters: {a: {lang: java, class: A, library: a.so}}\n", 1, 37,
     {"library: is only for cpp filters", "classpath:"}},
    {"ClasspathOnACppFilter",
     "filters: {a: {class: A, classpath: a.jar}}\n", 1, 25,
     {"classpath: is only for java filters; add lang: java"}},
    {"EmptyClasspath",
     "filters: {a: {lang: java, class: A, classpath: []}}\n", 1, 48,
     {"classpath: is empty", "leave classpath: out"}},
    {"ClasspathEntryNotAString",
     "filters: {a: {lang: java, class: A, classpath: [a.jar, [b]]}}\n", 1, 56,
     {"classpath: must be a non-empty string, not a list"}},
    {"NestedArgMap",
     "filters: {a: {class: A, args: {ok: 1, deep: {x: 1}}}}\n", 1, 45,
     {"args: deep must be a plain value", "not a map"}},
    {"NestedArgList",
     "filters: {a: {class: A, args: {list: [1, 2]}}}\n", 1, 38,
     {"args: list must be a plain value", "not a list"}},
    {"ArgsNotAMap",
     "filters: {a: {class: A, args: [x]}}\n", 1, 31,
     {"args: must be a map of name: value"}},

    // Filters: copies and place.
    {"CopiesZero",
     "filters: {a: {class: A, copies: 0}}\n", 1, 33,
     {"copies must be a whole number from 1 to 1024", "not '0'"}},
    {"CopiesNegative",
     "filters: {a: {class: A, copies: -1}}\n", 1, 33,
     {"copies must be a whole number from 1 to 1024", "not '-1'"}},
    {"CopiesFraction",
     "filters: {a: {class: A, copies: 2.5}}\n", 1, 33,
     {"copies must be a whole number from 1 to 1024", "not '2.5'"}},
    {"CopiesTooMany",
     "filters: {a: {class: A, copies: 1025}}\n", 1, 33,
     {"copies must be a whole number from 1 to 1024", "not '1025'"}},
    {"CopiesAWord",
     "filters: {a: {class: A, copies: two}}\n", 1, 33,
     {"copies must be a whole number from 1 to 1024", "not 'two'"}},
    {"PlaceOnAHostNotListed",
     "hosts: {alpha: 'h:1', beta: 'h:2'}\n"
     "filters:\n"
     "  a: {class: A, place: {alpah: 1, beta: 1}}\n",
     3, 25,
     {"host 'alpah' is not listed in hosts: (listed: alpha, beta); did you "
      "mean 'alpha'?"}},
    {"PlaceWithoutHosts",
     "filters: {a: {class: A, place: {a: 1}}}\n", 1, 32,
     {"place: needs hosts:", "leave place: out"}},
    {"PlaceNeedsPositiveCounts",
     "hosts: {h: 'x:1'}\nfilters: {a: {class: A, place: {h: 0}}}\n", 2, 36,
     {"copies on host 'h' must be a whole number from 1 to 1024", "not '0'"}},
    {"PlaceEmpty",
     "hosts: {h: 'x:1'}\nfilters: {a: {class: A, place: {}}}\n", 2, 32,
     {"place: is empty"}},
    {"PlaceNotAMap",
     "hosts: {h: 'x:1'}\nfilters: {a: {class: A, place: [h]}}\n", 2, 32,
     {"place: must map host names to copies", "not a list"}},
    {"CopiesDisagreeWithPlace",
     "hosts: {h: 'x:1'}\nfilters: {a: {class: A, copies: 3, place: {h: 2}}}\n", 2, 33,
     {"copies: 3 does not match place:, which runs 2", "leave copies: out"}},
    {"TooManyPlacedCopies",
     "hosts: {h: 'x:1', i: 'y:1'}\n"
     "filters: {a: {class: A, place: {h: 1000, i: 1000}}}\n",
     2, 32,
     {"place: runs 2000 copies of filter 'a'; the maximum is 1024"}},

    // Hosts.
    {"HostNameNotAnIdentifier",
     "hosts:\n  'host a': 'x:1'\nfilters: {a: {class: A}}\n", 2, 3,
     {"host name 'host a' is not a valid name"}},
    {"ClientCannotNameAHost",
     "hosts: {client: 127.0.0.1:7700}\nfilters:\n  a: {class: A}\n", 1, 9,
     {"'client' cannot name a host", "client1"}},
    {"HostAddressWithoutPort",
     "filters: {a: {class: A}}\nhosts:\n  a: 127.0.0.1\n", 3, 6,
     {"host 'a': address '127.0.0.1' has no port; write host:port, e.g."}},
    {"HostPortZero",
     "filters: {a: {class: A}}\nhosts:\n  a: x:0\n", 3, 6,
     {"host 'a': '0' in 'x:0' is not a port; use a number from 1 to 65535"}},
    {"HostPortTooLarge",
     "filters: {a: {class: A}}\nhosts:\n  a: x:70000\n", 3, 6,
     {"'70000' in 'x:70000' is not a port"}},
    {"HostPortAName",
     "filters: {a: {class: A}}\nhosts:\n  a: x:http\n", 3, 6,
     {"'http' in 'x:http' is not a port"}},
    {"HostIPv6WithoutBrackets",
     "filters: {a: {class: A}}\nhosts:\n  a: '::1:7700'\n", 3, 6,
     {"IPv6 address '::1:7700' needs brackets around the host, e.g. [::1]:7700"}},
    {"HostIPv6WithoutColon",
     "filters: {a: {class: A}}\nhosts:\n  a: '[::1]7700'\n", 3, 6,
     {"'[::1]7700' is not an address; write host:port"}},
    {"HostAddressWithoutHost",
     "filters: {a: {class: A}}\nhosts:\n  a: ':7700'\n", 3, 6,
     {"':7700' is not an address"}},
    {"EmptyHosts",
     "filters: {a: {class: A}}\nhosts: {}\n", 2, 8,
     {"hosts: is empty", "leave hosts: out to run everything in one process"}},
    {"HostsNotAMap",
     "filters: {a: {class: A}}\nhosts: [a]\n", 2, 8,
     {"hosts: must be a map from host name to address:port", "not a list"}},

    // Streams: their shape and their ends.
    {"StreamsNotAList",
     kThreeFilters + "streams: {from: a.out, to: b.in}\n", 5, 10,
     {"streams: must be a list", "not a map"}},
    {"StreamNotAMap",
     kThreeFilters + "streams:\n  - a.out\n", 6, 5,
     {"a stream must be a map such as {from: read.out, to: upper.in}", "not 'a.out'"}},
    {"PortWithoutADot",
     kThreeFilters + "streams:\n  - {from: a, to: b.in}\n", 6, 12,
     {"is not a port; write filter.port, e.g."}},
    {"PortNameEmpty",
     kThreeFilters + "streams:\n  - {from: a., to: b.in}\n", 6, 12,
     {"is not a port; write filter.port, e.g."}},
    {"PortFilterEmpty",
     kThreeFilters + "streams:\n  - {from: .out, to: b.in}\n", 6, 12,
     {"is not a port; write filter.port, e.g."}},
    {"PortWithTwoDots",
     kThreeFilters + "streams:\n  - {from: a.out.x, to: b.in}\n", 6, 12,
     {"is not a port; write filter.port, e.g."}},
    {"PortNameWithASpace",
     kThreeFilters + "streams:\n  - {from: 'a.my port', to: b.in}\n", 6, 12,
     {"is not a port; write filter.port, e.g."}},
    {"PortNameStartsWithADigit",
     kThreeFilters + "streams:\n  - {from: a.9, to: b.in}\n", 6, 12,
     {"is not a port; write filter.port, e.g."}},
    {"ToAFilterWithoutPort",
     kThreeFilters + "streams:\n  - {from: a.out, to: b}\n", 6, 23,
     {"to: 'b' is not a port; write filter.port, e.g. b.in"}},
    {"ToTheClientMisspelt",
     kThreeFilters + "streams:\n  - {from: a.out, to: clint}\n", 6, 23,
     {"to: 'clint' is not a port; write filter.port, e.g. clint.in (names are letters, digits, '_' and '-'); did "
      "you mean 'client'? (the program that submits units)"}},
    {"UnknownFilterInStream",
     kThreeFilters + "streams:\n  - {from: a.out, to: bb.in}\n", 6, 23,
     {"no filter named 'bb' (filters: a, b, c); did you mean 'b'?"}},
    {"FromClient",
     kThreeFilters + "streams:\n  - {from: client, to: a.in}\n", 6, 12,
     {"from: client", "only receives"}},
    {"ToAClientPort",
     kThreeFilters + "streams:\n  - {from: a.out, to: client.in}\n", 6, 23,
     {"the client has no ports; write to: client"}},

    // Streams: their settings.
    {"MisspeltPolicy",
     kThreeFilters + "streams:\n  - {from: a.out, to: b.in, policy: round-robin}\n", 6, 37,
     {"unknown policy 'round-robin'; use one of round_robin, demand_driven, "
      "by_key, broadcast; did you mean 'round_robin'?"}},
    {"UnknownStreamKey",
     kThreeFilters + "streams:\n  - {from: a.out, to: b.in, polcy: by_key}\n", 6, 29,
     {"unknown key 'polcy' in a stream; use one of from, to, policy, "
      "buffer_size, depth, encrypt; did you mean 'policy'?"}},
    {"EncryptMustBeTrueOrFalse",
     kThreeFilters + "streams:\n  - {from: a.out, to: b.in, encrypt: maybe}\n", 6, 38,
     {"encrypt: must be true or false, not 'maybe'"}},

    // Streams: how they join filters (one stream a port, one to: client, no cycles).
    {"OutputPortFeedsOneStream",
     kThreeFilters +
         "streams:\n"
         "  - {from: a.out, to: b.in}\n"
         "  - {from: a.out, to: c.in}\n",
     7, 12,
     {"output a.out already feeds the stream at line 6", "an output port feeds one stream"}},
    {"InputPortFedByOneStream",
     kThreeFilters +
         "streams:\n"
         "  - {from: a.out, to: c.in}\n"
         "  - {from: b.out, to: c.in}\n",
     7, 23,
     {"input c.in is already fed by the stream at line 6", "an input port is fed by one stream"}},
    {"ClientTwice",
     kThreeFilters +
         "streams:\n"
         "  - {from: a.out, to: client}\n"
         "  - {from: b.out, to: client}\n",
     7, 23,
     {"a second stream to: client (the first is at line 6)", "merge the results in one filter"}},
    {"StreamToItself",
     kThreeFilters + "streams:\n  - {from: a.out, to: a.in}\n", 6, 5,
     {"stream from filter 'a' to itself; sluice graphs are acyclic"}},
    {"CycleIsNamed",
     kThreeFilters +
         "streams:\n"
         "  - {from: a.out, to: b.in}\n"
         "  - {from: b.out, to: c.in}\n"
         "  - {from: c.out, to: a.in}\n",
     8, 5,
     {"streams form a cycle: a -> b -> c -> a; sluice graphs are acyclic"}},

    // Sizes, depths and defaults:.
    {"MisspeltSizeKB",
     "defaults: {buffer_size: 64KB}\nfilters: {a: {class: A}}\n", 1, 25,
     {"buffer_size: '64KB' is not a size", "did you mean 64KiB?", "units: B, KiB, MiB, GiB"}},
    {"MisspeltSizeLowerCase",
     "defaults: {buffer_size: 64kb}\nfilters: {a: {class: A}}\n", 1, 25,
     {"buffer_size: '64kb' is not a size", "did you mean 64KiB?", "units: B, KiB, MiB, GiB"}},
    {"MisspeltSizeK",
     "defaults: {buffer_size: 64K}\nfilters: {a: {class: A}}\n", 1, 25,
     {"buffer_size: '64K' is not a size", "did you mean 64KiB?", "units: B, KiB, MiB, GiB"}},
    {"MisspeltSizeFraction",
     "defaults: {buffer_size: 1.5MiB}\nfilters: {a: {class: A}}\n", 1, 25,
     {"buffer_size: '1.5MiB' is not a size", "did you mean 1536KiB?",
      "units: B, KiB, MiB, GiB"}},
    {"BufferSizeZero",
     kThreeFilters + "streams: [{from: a.out, to: b.in, buffer_size: 0}]\n", 5, 48,
     {"buffer_size cannot be 0", "at least 1 byte"}},
    {"AbsurdBufferSize",
     kThreeFilters + "streams: [{from: a.out, to: b.in, buffer_size: 2GiB}]\n", 5, 48,
     {"buffer_size 2GiB is absurd; the maximum is 1GiB"}},
    {"BufferSizeNotAScalar",
     "defaults: {buffer_size: [1]}\nfilters: {a: {class: A}}\n", 1, 25,
     {"buffer_size must be a size such as 64KiB, not a list"}},
    {"DepthZero",
     "defaults: {depth: 0}\nfilters: {a: {class: A}}\n", 1, 19,
     {"depth must be a whole number from 1 to 65536", "not '0'"}},
    {"DepthTooLarge",
     "defaults: {depth: 65537}\nfilters: {a: {class: A}}\n", 1, 19,
     {"depth must be a whole number from 1 to 65536", "not '65537'"}},
    {"DepthAWord",
     "defaults: {depth: deep}\nfilters: {a: {class: A}}\n", 1, 19,
     {"depth must be a whole number from 1 to 65536", "not 'deep'"}},
    {"DepthFraction",
     "defaults: {depth: 1.5}\nfilters: {a: {class: A}}\n", 1, 19,
     {"depth must be a whole number from 1 to 65536", "not '1.5'"}},
    {"UnknownDefaultsKey",
     "defaults: {dept: 3}\nfilters: {a: {class: A}}\n", 1, 12,
     {"unknown key 'dept' in defaults:", "did you mean 'depth'?"}},
    {"DefaultsNotAMap",
     "defaults: 64KiB\nfilters: {a: {class: A}}\n", 1, 11,
     {"defaults: must be a map", "not '64KiB'"}},

    // work:.
    {"EmptyWork",
     "filters: {a: {class: A}}\nwork: []\n", 2, 7,
     {"work: is empty; leave work: out for one unit of work with an empty "
      "payload"}},
    {"WorkNotAList",
     "filters: {a: {class: A}}\nwork: first\n", 2, 7,
     {"work: must be a list of payloads", "not 'first'"}},
    {"NestedWorkPayload",
     "filters: {a: {class: A}}\nwork: [a, {b: 1}]\n", 2, 11,
     {"a work payload must be a plain value", "not a map"}},

    // jvm:.
    {"JvmHeapMisspelt",
     "filters: {a: {class: A}}\njvm: {heap: 512MB}\n", 2, 13,
     {"heap: '512MB' is not a size; did you mean 512MiB?"}},
    {"JvmHeapZero",
     "filters: {a: {class: A}}\njvm: {heap: 0}\n", 2, 13,
     {"heap cannot be 0; leave heap: out for the JVM's default"}},
    {"JvmOptionWithoutDash",
     "filters: {a: {class: A}}\njvm: {options: [-Xss2m, Xint]}\n", 2, 25,
     {"JVM option 'Xint' must start with '-', e.g. -Xint"}},
    {"JvmOptionValueAsItsOwnItem",
     "filters: {a: {class: A}}\njvm: {options: [--add-opens, java.base/java.nio=ALL-UNNAMED]}\n", 2, 30,
     {"as the value of --add-opens, write them as one item: --add-opens=java.base/java.nio=ALL-UNNAMED"}},
    {"JvmOptionsNotAList",
     "filters: {a: {class: A}}\njvm: {options: -Xint}\n", 2, 16,
     {"options: must be a list of JVM flags", "not '-Xint'"}},
    {"UnknownJvmKey",
     "filters: {a: {class: A}}\njvm: {heep: 1GiB}\n", 2, 7,
     {"unknown key 'heep' in jvm:", "did you mean 'heap'?"}},
    {"JvmNotAMap",
     "filters: {a: {class: A}}\njvm: 1GiB\n", 2, 6,
     {"jvm: must be a map", "not '1GiB'"}},

    // One problem is reported once: a broken filter is still known to the streams that name
    // it (they are not blamed too), and a bad lang does not also blame classpath:.
    {"ABrokenFilterIsStillKnownToStreams",
     "filters: {a: {class: A}, b: {copies: 0, class: B}}\n"
     "streams: [{from: a.out, to: b.in}]\n",
     1, 38,
     {"copies must be"}},
    {"ABadLangDoesNotAlsoBlameClasspath",
     "filters: {a: {lang: jvm, class: A, classpath: a.jar}}\n", 1, 21,
     {"unknown lang 'jvm'; use cpp or java"}},
};

class OneError : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(OneError, Reported) {
  const ErrorCase& c = GetParam();
  EXPECT_TRUE(OnlyError(c.text, c.line, c.column, c.fragments));
}

INSTANTIATE_TEST_SUITE_P(TopologyErrors, OneError, ::testing::ValuesIn(kErrorCases),
                         [](const ::testing::TestParamInfo<ErrorCase>& info) {
                           return info.param.name;
                         });

// ---------------------------------------------------------------------------------------------
// Errors the table does not fit: more than one diagnostic, none at a place, or no suggestion.

TEST(TopologyErrors, EmptyFile) {
  for (const char* text : {"", "# only a comment\n"}) {
    const std::vector<Diagnostic> d = diagnostics_of(text);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].mark.line, 0);
    EXPECT_EQ(d[0].str(), "t.yaml: the topology is empty; it needs at least filters:, e.g. "
                          "filters: {hello: {class: Hello}}");
  }
}

TEST(TopologyErrors, StreamWithoutEnds) {
  const std::vector<Diagnostic> d =
      diagnostics_of(kThreeFilters + "streams:\n  - {policy: by_key}\n");
  ASSERT_EQ(d.size(), 2u) << all(d);
  EXPECT_TRUE(Reported(d, 6, 5, {"stream has no from:; add from: filter.port"}));
  EXPECT_TRUE(Reported(d, 6, 5, {"stream has no to:; add to: filter.port"}));
}

// "did you mean" only when a name is close to one it could have meant.
TEST(TopologyErrors, NoSuggestionWhenNothingIsClose) {
  EXPECT_FALSE(suggests("filters: {a: {class: A}}\ncolour: red\n"));
  EXPECT_FALSE(suggests("filters: {a: {lang: python, class: A}}\n"));
  EXPECT_FALSE(suggests(kThreeFilters + "streams:\n  - {from: elsewhere.out, to: b.in}\n"));
  EXPECT_FALSE(
      suggests(kThreeFilters + "streams:\n  - {from: a.out, to: b.in, policy: fastest}\n"));
}

}  // namespace
}  // namespace sluice::topo
