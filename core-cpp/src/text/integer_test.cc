#include "text/integer.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "sluice/error.h"

namespace sluice::text {
namespace {

TEST(TextInteger, AllOfTheTextInRange) {
  struct Case {
    const char* text;
    std::optional<int> value;
  };
  const std::vector<Case> cases = {
      {"0", 0},        {"42", 42},         {"-7", -7},           {"2147483647", 2147483647},
      {"", {}},        {"abc", {}},        {"12abc", {}},        {" 1", {}},
      {"1 ", {}},      {"+1", {}},         {"0x10", {}},         {"2147483648", {}},
      {"1.5", {}},     {"--1", {}},
  };
  for (const Case& c : cases) EXPECT_EQ(parse_integer<int>(c.text), c.value) << "'" << c.text << "'";
}

TEST(TextInteger, TheCallersRange) {
  EXPECT_EQ(parse_integer<int>("5", 1, 10), 5);
  EXPECT_EQ(parse_integer<int>("0", 1, 10), std::nullopt);
  EXPECT_EQ(parse_integer<int>("11", 1, 10), std::nullopt);
  EXPECT_EQ(parse_integer<std::uint16_t>("65535"), 65535);
  EXPECT_EQ(parse_integer<std::uint16_t>("65536"), std::nullopt);
  EXPECT_EQ(parse_integer<unsigned>("-1"), std::nullopt);
  EXPECT_EQ(parse_integer<unsigned long long>("18446744073709551615"), 18446744073709551615ULL);
}

TEST(TextInteger, TheErrorSaysWhatWasExpected) {
  auto error_of = [](auto parse) -> std::string {
    try {
      parse();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error_of([] { parse_integer_or_throw<int>("abc", "--reps", 1, 1000); }),
            "--reps 'abc' is not a whole number from 1 to 1000");
  EXPECT_EQ(error_of([] { parse_integer_or_throw<int>("", "SLUICE_WORKERS", 0, 4096); }),
            "SLUICE_WORKERS '' is not a whole number from 0 to 4096");
  EXPECT_EQ(error_of([] { parse_integer_or_throw<unsigned long long>("-1", "count"); }),
            "count '-1' is not a whole number (0 or more)");
  EXPECT_EQ(error_of([] { parse_integer_or_throw<long>("x", "n", 1); }), "n 'x' is not a whole number from 1 up");
  EXPECT_EQ(parse_integer_or_throw<int>("17", "--hogs", 0, 64), 17);
}

}  // namespace
}  // namespace sluice::text
