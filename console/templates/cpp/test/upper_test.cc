#include "upper.h"

#include <gtest/gtest.h>

#include <string>

TEST(Upper, UpperCasesLettersAndLeavesTheRest) {
  std::string text = "hello, sluice 1!";
  to_upper(std::as_writable_bytes(std::span(text.data(), text.size())));
  EXPECT_EQ(text, "HELLO, SLUICE 1!");
}
