#include "topology/suggest.h"

#include <gtest/gtest.h>

namespace sluice::topo {
namespace {

const std::vector<std::string> kPolicies = {"round_robin", "demand_driven", "by_key", "broadcast"};
const std::vector<std::string> kKeys = {"from", "to", "policy", "buffer_size", "depth"};

TEST(ClosestMatch, OneEditAway) {
  EXPECT_EQ(closest_match("polcy", kKeys), "policy");        // deletion
  EXPECT_EQ(closest_match("pollicy", kKeys), "policy");      // insertion
  EXPECT_EQ(closest_match("round-robin", kPolicies), "round_robin");  // substitution
  EXPECT_EQ(closest_match("poilcy", kKeys), "policy");       // adjacent swap
}

TEST(ClosestMatch, IgnoresCase) {
  EXPECT_EQ(closest_match("Broadcast", kPolicies), "broadcast");
  EXPECT_EQ(closest_match("DEPTH", kKeys), "depth");
}

TEST(ClosestMatch, LongerWordsAllowMoreEdits) {
  // 3 edits: allowed for a 12-letter word (12 / 3 = 4), not for a 6-letter one (limit 2).
  EXPECT_EQ(closest_match("buffersize__", kKeys), "buffer_size");
  EXPECT_EQ(closest_match("pxlxcx", kKeys), "");
}

TEST(ClosestMatch, NothingCloseGivesEmpty) {
  EXPECT_EQ(closest_match("fastest", kPolicies), "");
  EXPECT_EQ(closest_match("colour", kKeys), "");
  EXPECT_EQ(closest_match("anything", {}), "");
}

TEST(ClosestMatch, ReplacingTheWholeWordIsNotATypo) {
  EXPECT_EQ(closest_match("x", {"to"}), "");
  EXPECT_EQ(closest_match("ab", {"cd"}), "");
  EXPECT_EQ(closest_match("", {"a"}), "");
  EXPECT_EQ(closest_match("b", {"a", "bb"}), "bb");
}

TEST(ClosestMatch, PicksTheClosestThenTheFirst) {
  EXPECT_EQ(closest_match("hostb", {"hosta", "hostb2", "hostb"}), "hostb");
  EXPECT_EQ(closest_match("hostc", {"hosta", "hostb"}), "hosta");
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
