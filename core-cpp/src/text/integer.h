// The one way sluice reads an integer that a user or a peer wrote: an option's value, an
// environment variable, a port, a filter argument, the digits of a size. All of the text,
// decimal digits with an optional leading '-', no spaces, no '+', inside the range the caller
// names. (std::from_chars: no locale, no errno, no silent 0 for "abc".)
//
// Thread safety: pure functions.
#ifndef SLUICE_TEXT_INTEGER_H_
#define SLUICE_TEXT_INTEGER_H_

#include <charconv>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace sluice::text {

// `text` as a T when all of it is a decimal integer from `min` to `max`; nullopt otherwise
// (empty, other characters, out of range).
template <typename T>
std::optional<T> parse_integer(std::string_view text, T min = std::numeric_limits<T>::min(),
                               T max = std::numeric_limits<T>::max()) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || stop != end || value < min || value > max) return std::nullopt;
  return value;
}

// "a whole number from 1 to 65535", for messages that say what was expected.
std::string integer_range_text(long long min, long long max);

// parse_integer, or throws sluice::Error: "<what> 'abc' is not a whole number from 0 to 4096"
// (`what` e.g. "--reps" or "SLUICE_WORKERS").
template <typename T>
T parse_integer_or_throw(std::string_view text, std::string_view what, T min = std::numeric_limits<T>::min(),
                         T max = std::numeric_limits<T>::max());

}  // namespace sluice::text

#endif  // SLUICE_TEXT_INTEGER_H_
