#include "topology/suggest.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::topo {
namespace {

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(' ');
  if (first == std::string_view::npos) return "";
  return std::string(s.substr(first, s.find_last_not_of(' ') - first + 1));
}

// Every case of testing/data/closest_match.txt, the table org.sluice.Suggest's JUnit test
// (SuggestTest.java) reads too: "word | candidates | answer" per line.
TEST(ClosestMatch, AnswersTheSharedTableLikeTheJavaOne) {
  const std::string path = std::string(SLUICE_TESTING_DATA_DIR) + "/closest_match.txt";
  std::ifstream table(path);
  ASSERT_TRUE(table) << "cannot read " << path;
  int cases = 0;
  for (std::string line; std::getline(table, line);) {
    if (trim(line).empty() || line[0] == '#') continue;
    const auto bar1 = line.find('|');
    const auto bar2 = bar1 == std::string::npos ? bar1 : line.find('|', bar1 + 1);
    ASSERT_NE(bar2, std::string::npos) << path << ": not 'word | candidates | answer': " << line;
    std::vector<std::string> candidates;
    std::istringstream words(line.substr(bar1 + 1, bar2 - bar1 - 1));
    for (std::string w; words >> w;) candidates.push_back(w);
    EXPECT_EQ(closest_match(trim(line.substr(0, bar1)), candidates), trim(line.substr(bar2 + 1)))
        << path << ": " << line;
    ++cases;
  }
  EXPECT_GE(cases, 20) << path;
}

TEST(Join, Separators) {
  EXPECT_EQ(join({}), "");
  EXPECT_EQ(join({"a"}), "a");
  EXPECT_EQ(join({"a", "b", "c"}), "a, b, c");
  EXPECT_EQ(join({"a", "b"}, " -> "), "a -> b");
  EXPECT_EQ(join({"", "b"}), ", b");
}

}  // namespace
}  // namespace sluice::topo
