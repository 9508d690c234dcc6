#include "runtime/plugin_loader.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "sluice/error.h"

namespace sluice {
namespace {

// The message of the sluice::Error that find_filter_factory throws ("" if it returns).
std::string load_error(const std::string& library, const std::string& class_name) {
  try {
    find_filter_factory(library, class_name);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "loaded " << class_name << " from '" << library << "'";
  return "";
}

::testing::AssertionResult Says(const std::string& message,
                                const std::vector<std::string>& words) {
  for (const std::string& w : words) {
    if (message.find(w) == std::string::npos) {
      return ::testing::AssertionFailure() << "[" << w << "] not in: " << message;
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(PluginLoader, AMissingLibraryNamesThePathAndWhatToDo) {
  const std::string path = "/nonexistent/sluice/libno_such_filters.so";
  const std::string message = load_error(path, "Anything");
  EXPECT_TRUE(Says(message, {"cannot load filter library '" + path + "'",
                             "No such file or directory", "build it first, or fix the path"}));
  // A failed load is not remembered as an empty library: the next attempt fails the same way.
  EXPECT_TRUE(Says(load_error(path, "Anything"), {"cannot load filter library"}));
  EXPECT_TRUE(registered_classes(path).empty());
}

// What the path holds instead of a library says what to do (it said "build it first" for all).
TEST(PluginLoader, APathThatHoldsSomethingElseSaysWhatToDo) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("sluice-loader-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "libnums.so") << "not an ELF file";
  std::ofstream(dir / "filters.jar") << "PK";
  EXPECT_TRUE(Says(load_error(dir.string(), "Gen"), {"it is a directory: name the library file in it (it holds libnums.so)"}));
  EXPECT_TRUE(Says(load_error((dir / "filters.jar").string(), "Gen"),
                   {"it is Java: give the filter lang: java and classpath: [" + (dir / "filters.jar").string() + "]"}));
  EXPECT_TRUE(Says(load_error((dir / "nums.so").string(), "Gen"), {"did you mean '" + (dir / "libnums.so").string() + "'?"}));
  std::filesystem::remove_all(dir);
}

TEST(PluginLoader, ALibraryWithAnUndefinedSymbolSaysSo) {
  const std::string message = load_error(SLUICE_UNDEFINED_LIB, "NeedsMissingSymbol");
  EXPECT_TRUE(Says(message, {"cannot load filter library '" SLUICE_UNDEFINED_LIB "'",
                             "undefined symbol", "sluice_test_no_such_function",
                             "link the library against everything it uses"}));
}

TEST(PluginLoader, AnUndefinedCppSymbolIsShownDemangled) {
  const std::string message = load_error(SLUICE_UNDEFINED_CPP_LIB, "NeedsMissingHelper");
  EXPECT_TRUE(Says(message, {"undefined symbol", "_Z26sluice_test_missing_helperi",
                             "(that is: sluice_test_missing_helper(int))",
                             "link the library against everything it uses"}));
}

// A library built without -O (CMake with no build type) works, and says once that its
// stream calls are slow and how to build it.
TEST(PluginLoader, ALibraryBuiltWithoutOptimizationWarnsOnce) {
  testing::internal::CaptureStderr();
  EXPECT_NE(find_filter_factory(SLUICE_UNOPTIMIZED_LIB, "BuiltWithoutOptimization"), nullptr);
  EXPECT_NE(find_filter_factory(SLUICE_UNOPTIMIZED_LIB, "BuiltWithoutOptimization"), nullptr);
  EXPECT_NE(find_filter_factory(SLUICE_EXAMPLES_LIB, "WordCount"), nullptr);  // optimized: quiet
  const std::string err = testing::internal::GetCapturedStderr();
  const std::string warning = "' was compiled without optimization";
  EXPECT_TRUE(Says(err, {"filter library '", "sluice_test_unoptimized", warning, "-DCMAKE_BUILD_TYPE=Release"}));
  EXPECT_EQ(err.find(warning), err.rfind(warning)) << "warned more than once: " << err;
#if defined(__OPTIMIZE__)  // the examples are built as sluice is (a Debug build warns of them too)
  EXPECT_EQ(err.find("examples"), std::string::npos) << err;
#endif
}

TEST(PluginLoader, AClassTheLibraryDoesNotRegisterSuggestsSluiceFilter) {
  EXPECT_TRUE(Says(load_error(SLUICE_EXAMPLES_LIB, "Forgotten"),
                   {"has no filter class 'Forgotten'", "(it registers: ",
                    "register it: SLUICE_FILTER(Forgotten) in one of its .cc files"}));
}

TEST(PluginLoader, ALibraryBuiltAgainstOtherHeadersSaysToRebuildIt) {
  const std::string message = load_error(SLUICE_OLDER_ABI_LIB, "BuiltAgainstOlderHeaders");
  EXPECT_TRUE(Says(message, {"cannot load filter library '" SLUICE_OLDER_ABI_LIB "'", "register_filter",
                             "built against the headers of another sluice version",
                             "rebuild it against this one"}));
}

// A library built with libstdc++'s old std::string passed validate and then failed in
// process with "basic_string::_S_create" (an outside review): it is refused at load, saying why.
TEST(PluginLoader, ALibraryBuiltWithTheOldStdStringSaysToRebuildWithoutIt) {
  const std::string message = load_error(SLUICE_OLD_STRING_ABI_LIB, "BuiltWithTheOldString");
  EXPECT_TRUE(Says(message, {"cannot load filter library '" SLUICE_OLD_STRING_ABI_LIB "'",
                             "it was built with -D_GLIBCXX_USE_CXX11_ABI=0 (libstdc++'s old std::string)",
                             "rebuild it without that definition"}));
}

// Two SLUICE_FILTER(Twice) in one library: the first registered ran, silently (an outside
// review); the name is refused, saying what to do.
TEST(PluginLoader, AClassNameRegisteredTwiceInOneLibraryIsRefused) {
  EXPECT_TRUE(Says(load_error(SLUICE_DUPLICATE_LIB, "Twice"),
                   {"registers filter class 'Twice' twice", "give one of the classes another name"}));
}

TEST(PluginLoader, TheExamplesLibraryRegistersItsFilters) {
  const FilterFactory factory = find_filter_factory(SLUICE_EXAMPLES_LIB, "WordCount");
  ASSERT_NE(factory, nullptr);
  std::unique_ptr<Filter> filter = factory();
  EXPECT_NE(filter, nullptr);
  EXPECT_EQ(registered_classes(SLUICE_EXAMPLES_LIB),
            (std::vector<std::string>{"Consume", "Downsample", "Forward", "LineReader", "MergeTopN", "PartialTopN",
                                      "Produce", "TileSource", "Tokenize", "TopWords", "WordCount"}));
  for (const char* name : {"LineReader", "Tokenize", "TopWords", "Produce", "Forward", "Consume", "PartialTopN",
                           "MergeTopN"}) {
    EXPECT_NE(find_filter_factory(SLUICE_EXAMPLES_LIB, name), nullptr) << name;
  }
}

TEST(PluginLoader, LoadingALibraryTwiceGivesTheSameFactory) {
  const FilterFactory first = find_filter_factory(SLUICE_EXAMPLES_LIB, "Tokenize");
  const FilterFactory again = find_filter_factory(SLUICE_EXAMPLES_LIB, "Tokenize");
  EXPECT_EQ(first, again);
  EXPECT_NE(first, find_filter_factory(SLUICE_EXAMPLES_LIB, "WordCount"));
}

TEST(PluginLoader, AnUnknownClassListsWhatTheLibraryRegistersAndSuggestsTheClosest) {
  const std::string message = load_error(SLUICE_EXAMPLES_LIB, "WordCont");
  EXPECT_TRUE(Says(message, {"library '" SLUICE_EXAMPLES_LIB "' has no filter class 'WordCont'",
                             "did you mean 'WordCount'?",
                             "(it registers: Consume, Downsample, Forward, LineReader, MergeTopN, PartialTopN, "
                             "Produce, TileSource, Tokenize, TopWords, WordCount)"}));
  // Nothing close: the list, without a guess.
  const std::string far = load_error(SLUICE_EXAMPLES_LIB, "Zebra");
  EXPECT_TRUE(Says(far, {"has no filter class 'Zebra'", "it registers: Consume"}));
  EXPECT_EQ(far.find("did you mean"), std::string::npos) << far;
}

TEST(PluginLoader, ClassesLinkedIntoTheProgramNeedNoLibrary) {
  // The test binary links test_filters.cc, whose filters register as built-ins.
  EXPECT_NE(find_filter_factory("", "testing_filters::TestSource"), nullptr);
  const std::string message = load_error("", "testing_filters::TestSourse");
  EXPECT_TRUE(Says(message, {"this program has no filter class 'testing_filters::TestSourse'",
                             "did you mean 'testing_filters::TestSource'?"}));
  // A class registered in a namespace, named without it.
  EXPECT_TRUE(Says(load_error("", "TestSource"), {"did you mean 'testing_filters::TestSource'?"}));
}

// A filter without library: looks only in the program, which is rarely where it is: the
// message says to name the library.
TEST(PluginLoader, AClassNotInTheProgramAsksForTheLibrary) {
  const std::string message = load_error("", "Gen");
  EXPECT_TRUE(Says(message, {"this program has no filter class 'Gen'", "with library: in the filter"}));
  EXPECT_EQ(message.find("SLUICE_FILTER"), std::string::npos) << message;
  EXPECT_EQ(message.find("defaults:"), std::string::npos) << message;  // defaults: takes no library
}

// A library that another filter named is not the program: a filter without library: does not
// find its classes (which filter the topology lists first decided what ran, or whether the
// topology was valid at all).
TEST(PluginLoader, ALoadedLibraryDoesNotServeAFilterWithoutOne) {
  ASSERT_NE(find_filter_factory(SLUICE_EXAMPLES_LIB, "Tokenize"), nullptr);
  EXPECT_TRUE(Says(load_error("", "Tokenize"), {"this program has no filter class 'Tokenize'", "with library:"}));
}

}  // namespace
}  // namespace sluice
