// check_loadable: code that does not load is reported at the topology line to change.
#include "runtime/backends.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "sluice/error.h"

namespace sluice {
namespace {

topo::Topology parse(const std::string& yaml) {
  return topo::parse_topology_text(yaml, "t.yaml", "/tmp");
}

TEST(CheckLoadable, MissingLibraryIsReportedAtItsLibraryValue) {
  topo::Topology t = parse(
      "filters:\n"
      "  a: {class: X, library: /nonexistent/libnope.so}\n");
  try {
    check_loadable(t);
    FAIL() << "expected a TopologyError";
  } catch (const topo::TopologyError& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].mark.line, 2);
    EXPECT_EQ(e.diagnostics()[0].mark.column, 26);
    EXPECT_NE(e.diagnostics()[0].message.find("filter 'a': cannot load filter library '/nonexistent/libnope.so'"),
              std::string::npos) << e.diagnostics()[0].message;
  }
}

TEST(CheckLoadable, UnknownBuiltinClassIsReportedAtItsClassValue) {
  topo::Topology t = parse(
      "filters:\n"
      "  a: {class: \"testing_filters::TestSorce\"}\n"
      "  b: {class: NoSuchThing}\n");
  try {
    check_loadable(t);
    FAIL() << "expected a TopologyError";
  } catch (const topo::TopologyError& e) {
    ASSERT_EQ(e.diagnostics().size(), 2u) << e.what();
    EXPECT_EQ(e.diagnostics()[0].mark.line, 2);
    EXPECT_EQ(e.diagnostics()[0].mark.column, 14);
    EXPECT_NE(e.diagnostics()[0].message.find("did you mean 'testing_filters::TestSource'?"), std::string::npos)
        << e.diagnostics()[0].message;
    EXPECT_EQ(e.diagnostics()[1].mark.line, 3);
    EXPECT_NE(e.diagnostics()[1].message.find("this program has no filter class 'NoSuchThing'"), std::string::npos);
  }
}

// A JNI bridge built against another version's headers would call into this runtime the
// wrong way (the streams' inline paths it compiled in): it must not load, and say why.
TEST(JavaBackend, ABridgeBuiltAgainstOtherHeadersIsRefusedWithWhatToDo) {
  ASSERT_EQ(setenv("SLUICE_JNI_LIBRARY", SLUICE_OLDER_ABI_BRIDGE_LIB, 1), 0);
  try {
    backend_for(topo::Lang::kJava);
    FAIL() << "an older bridge loaded";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("built against the headers of another sluice version"), std::string::npos) << m;
    EXPECT_NE(m.find("register_backend"), std::string::npos) << m;
    EXPECT_NE(m.find("SLUICE_JNI_LIBRARY"), std::string::npos) << m;
  }
  unsetenv("SLUICE_JNI_LIBRARY");
}

TEST(CheckLoadable, BuiltinClassesLoad) {
  EXPECT_NO_THROW(check_loadable(parse("filters:\n  a: {class: \"testing_filters::TestSource\"}\n")));
}

}  // namespace
}  // namespace sluice
