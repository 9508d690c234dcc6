#include "text/integer.h"

#include <type_traits>

#include "sluice/error.h"

namespace sluice::text {

std::string integer_range_text(long long min, long long max) {
  if (max == std::numeric_limits<long long>::max()) {
    return min == 0 ? "a whole number (0 or more)" : "a whole number from " + std::to_string(min) + " up";
  }
  return "a whole number from " + std::to_string(min) + " to " + std::to_string(max);
}

namespace {

std::string range_text(unsigned long long min, unsigned long long max) {
  if (max > static_cast<unsigned long long>(std::numeric_limits<long long>::max())) {
    return min == 0 ? "a whole number (0 or more)" : "a whole number from " + std::to_string(min) + " up";
  }
  return integer_range_text(static_cast<long long>(min), static_cast<long long>(max));
}

}  // namespace

template <typename T>
T parse_integer_or_throw(std::string_view text, std::string_view what, T min, T max) {
  if (std::optional<T> value = parse_integer<T>(text, min, max)) return *value;
  std::string expected;
  if constexpr (std::is_unsigned_v<T>) {
    expected = range_text(min, max);
  } else {
    expected = integer_range_text(min, max);
  }
  throw Error(std::string(what) + " '" + std::string(text) + "' is not " + expected);
}

template int parse_integer_or_throw<int>(std::string_view, std::string_view, int, int);
template long parse_integer_or_throw<long>(std::string_view, std::string_view, long, long);
template long long parse_integer_or_throw<long long>(std::string_view, std::string_view, long long, long long);
template unsigned parse_integer_or_throw<unsigned>(std::string_view, std::string_view, unsigned, unsigned);
template unsigned long parse_integer_or_throw<unsigned long>(std::string_view, std::string_view, unsigned long,
                                                             unsigned long);
template unsigned long long parse_integer_or_throw<unsigned long long>(std::string_view, std::string_view,
                                                                       unsigned long long, unsigned long long);

}  // namespace sluice::text
