#include "topology/size.h"

#include <gtest/gtest.h>

namespace sluice::topo {
namespace {

std::size_t size_of(std::string_view text) {
  std::string why;
  const std::optional<std::size_t> bytes = parse_size(text, &why);
  EXPECT_TRUE(bytes.has_value()) << text << ": " << why;
  return bytes.value_or(0);
}

std::string why_not(std::string_view text) {
  std::string why;
  EXPECT_FALSE(parse_size(text, &why).has_value()) << text << " parsed";
  return why;
}

TEST(ParseSize, PlainNumbersAreBytes) {
  EXPECT_EQ(size_of("65536"), 65536u);
  EXPECT_EQ(size_of("1"), 1u);
  EXPECT_EQ(size_of("0"), 0u);  // a valid size; callers decide whether 0 makes sense
}

TEST(ParseSize, Units) {
  EXPECT_EQ(size_of("100B"), 100u);
  EXPECT_EQ(size_of("64KiB"), 64u * 1024);
  EXPECT_EQ(size_of("1MiB"), 1024u * 1024);
  EXPECT_EQ(size_of("3GiB"), std::size_t{3} << 30);
  EXPECT_EQ(size_of("0KiB"), 0u);
}

TEST(ParseSize, SpaceBeforeTheUnitIsAllowed) { EXPECT_EQ(size_of("64 KiB"), 65536u); }

TEST(ParseSize, DecimalUnitsSuggestTheBinaryOne) {
  EXPECT_EQ(why_not("64KB"), "'64KB' is not a size; did you mean 64KiB? units: B, KiB, MiB, GiB");
  EXPECT_EQ(why_not("64kb"), "'64kb' is not a size; did you mean 64KiB? units: B, KiB, MiB, GiB");
  EXPECT_EQ(why_not("64K"), "'64K' is not a size; did you mean 64KiB? units: B, KiB, MiB, GiB");
  EXPECT_EQ(why_not("64kib"), "'64kib' is not a size; did you mean 64KiB? units: B, KiB, MiB, GiB");
  EXPECT_EQ(why_not("2MB"), "'2MB' is not a size; did you mean 2MiB? units: B, KiB, MiB, GiB");
  EXPECT_EQ(why_not("1g"), "'1g' is not a size; did you mean 1GiB? units: B, KiB, MiB, GiB");
  EXPECT_EQ(why_not("10bytes"),
            "'10bytes' is not a size; did you mean 10B? units: B, KiB, MiB, GiB");
}

TEST(ParseSize, FractionsSuggestAnExactWholeSpelling) {
  EXPECT_EQ(why_not("1.5MiB"),
            "'1.5MiB' is not a size (sizes are whole numbers of bytes); did you mean 1536KiB? "
            "units: B, KiB, MiB, GiB");
  EXPECT_EQ(why_not("0.5KB"),
            "'0.5KB' is not a size (sizes are whole numbers of bytes); did you mean 512B? "
            "units: B, KiB, MiB, GiB");
  EXPECT_EQ(why_not("2.0GiB"),
            "'2.0GiB' is not a size (sizes are whole numbers of bytes); did you mean 2GiB? "
            "units: B, KiB, MiB, GiB");
}

TEST(ParseSize, FractionsOfBytesHaveNoSuggestion) {
  EXPECT_EQ(why_not("1.3B"),
            "'1.3B' is not a size (sizes are whole numbers of bytes); units: B, KiB, MiB, GiB");
}

TEST(ParseSize, NotANumber) {
  const std::string tail =
      " is not a size; write a whole number of bytes or a number with a unit, e.g. 65536 or "
      "64KiB (units: B, KiB, MiB, GiB)";
  EXPECT_EQ(why_not("abc"), "'abc'" + tail);
  EXPECT_EQ(why_not("-1"), "'-1'" + tail);
  EXPECT_EQ(why_not(""), "''" + tail);
  EXPECT_EQ(why_not("KiB"), "'KiB'" + tail);
}

TEST(ParseSize, UnknownUnit) {
  EXPECT_EQ(why_not("64XB"),
            "'64XB' is not a size: unknown unit 'XB'; units: B, KiB, MiB, GiB (e.g. 64KiB)");
  EXPECT_EQ(why_not("1TiB"),
            "'1TiB' is not a size: unknown unit 'TiB'; units: B, KiB, MiB, GiB (e.g. 64KiB)");
  EXPECT_EQ(why_not("1e6"),
            "'1e6' is not a size: unknown unit 'e6'; units: B, KiB, MiB, GiB (e.g. 64KiB)");
}

TEST(ParseSize, Overflow) {
  EXPECT_EQ(why_not("99999999999999999999"), "'99999999999999999999' is too large to be a size");
  EXPECT_EQ(why_not("17179869184GiB"), "'17179869184GiB' is too large to be a size");
}

TEST(ParseSize, WhyMayBeNull) {
  EXPECT_FALSE(parse_size("64KB", nullptr).has_value());
  EXPECT_EQ(parse_size("64KiB", nullptr), std::optional<std::size_t>(65536));
}

TEST(FormatSize, ShortestExactSpelling) {
  EXPECT_EQ(format_size(0), "0B");
  EXPECT_EQ(format_size(100), "100B");
  EXPECT_EQ(format_size(1025), "1025B");
  EXPECT_EQ(format_size(65536), "64KiB");
  EXPECT_EQ(format_size(1536 * 1024), "1536KiB");
  EXPECT_EQ(format_size(1 << 20), "1MiB");
  EXPECT_EQ(format_size(std::size_t{3} << 30), "3GiB");
  EXPECT_EQ(format_size(std::size_t{1} << 40), "1024GiB");
}

TEST(FormatSize, RoundedForMessages) {
  EXPECT_EQ(format_size_rounded(100), "100 B");
  EXPECT_EQ(format_size_rounded(1536), "1.5 KiB");
  EXPECT_EQ(format_size_rounded(std::size_t{19327355392}), "18.0 GiB");
}

TEST(FormatSize, RoundTripsThroughParseSize) {
  for (std::size_t bytes : {std::size_t{1}, std::size_t{512}, std::size_t{4096},
                            std::size_t{3} << 20, (std::size_t{5} << 30) + 1}) {
    EXPECT_EQ(size_of(format_size(bytes)), bytes) << format_size(bytes);
  }
}

}  // namespace
}  // namespace sluice::topo
