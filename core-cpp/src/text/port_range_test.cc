#include "text/port_range.h"

#include <gtest/gtest.h>

namespace sluice::text {
namespace {

TEST(PortRange, ReadsARangeAndASinglePort) {
  const auto range = parse_port_range("7701-7799", nullptr);
  ASSERT_TRUE(range);
  EXPECT_EQ(range->first, 7701);
  EXPECT_EQ(range->last, 7799);
  EXPECT_EQ(range->size(), 99);
  EXPECT_TRUE(range->contains(7701) && range->contains(7799));
  EXPECT_FALSE(range->contains(7700) || range->contains(7800) || PortRange{}.contains(0));
  EXPECT_EQ(range->text(), "7701-7799");
  const auto one = parse_port_range("65535", nullptr);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->first, 65535);
  EXPECT_EQ(one->last, 65535);
  EXPECT_EQ(one->text(), "65535");
  EXPECT_TRUE(PortRange{}.any());
}

TEST(PortRange, RefusesWhatIsNotARangeAndSaysWhatToWrite) {
  for (const char* bad : {"", "-", "7701-", "-7799", "0-10", "7701-65536", "77o1-7799", "7701-7799-7800", " 7701-7799",
                          "7701 - 7799", "+7701"}) {
    std::string problem;
    EXPECT_FALSE(parse_port_range(bad, &problem)) << bad;
    EXPECT_NE(problem.find("write LO-HI"), std::string::npos) << bad << ": " << problem;
  }
  std::string problem;
  EXPECT_FALSE(parse_port_range("7799-7701", &problem));
  EXPECT_EQ(problem, "'7799-7701' is not a port range: 7799 is above 7701; write the lower port first (e.g. 7701-7799)");
}

}  // namespace
}  // namespace sluice::text
