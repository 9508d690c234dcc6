// Typed conversions for Context::arg<T>().
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "sluice/context.h"
#include "text/integer.h"
#include "topology/size.h"

namespace sluice {

namespace {

std::string bad_arg(const Context& ctx, std::string_view key, const std::string& raw,
                    const char* expected, const std::string& guess = "") {
  return "filter '" + ctx.filter_name() + "': argument '" + std::string(key) + "' is '" + raw +
         "', which is not " + expected + (guess.empty() ? "" : "; " + guess) + "; fix it in the topology's args:";
}

// "an integer from -128 to 127": what an integer argument of type T may be.
template <typename T>
std::string integer_range() {
  return "an integer from " + std::to_string(std::numeric_limits<T>::min()) + " to " +
         std::to_string(std::numeric_limits<T>::max());
}

// Whole decimal integers only: an optional '-', then digits. No spaces, no '+', no hex.
bool plain_integer(const std::string& raw) {
  std::size_t i = raw.size() > 1 && raw[0] == '-' ? 1 : 0;
  if (i == raw.size()) return false;
  for (; i < raw.size(); ++i) {
    if (raw[i] < '0' || raw[i] > '9') return false;
  }
  return true;
}

template <typename T>
T to_integer(const Context& ctx, std::string_view key, const std::string& raw) {
  if (!plain_integer(raw)) {
    // Not a plain integer: a size such as 64KiB, for non-negative targets.
    std::string why;
    std::string meant;
    auto size = topo::parse_size(raw, &why, &meant);
    if (!size) {
      throw Error(bad_arg(ctx, key, raw, "an integer or a size such as 64KiB",
                          meant.empty() ? "" : "did you mean " + meant + "?"));
    }
    if (*size > static_cast<unsigned long long>(std::numeric_limits<T>::max())) {
      throw Error(bad_arg(ctx, key, raw, integer_range<T>().c_str()));
    }
    return static_cast<T>(*size);
  }
  if (std::is_unsigned_v<T> && raw[0] == '-') throw Error(bad_arg(ctx, key, raw, "a non-negative integer"));
  const std::optional<T> value = text::parse_integer<T>(raw);
  if (!value) throw Error(bad_arg(ctx, key, raw, integer_range<T>().c_str()));
  return *value;
}

}  // namespace

std::string Context::missing_arg_message(std::string_view key) const {
  return "filter '" + filter_name() + "' needs argument '" + std::string(key) +
         "'; add it to the filter's args: in the topology";
}

template <>
std::string Context::convert_arg<std::string>(std::string_view, const std::string& raw) const {
  return raw;
}

template <>
bool Context::convert_arg<bool>(std::string_view key, const std::string& raw) const {
  if (raw == "true" || raw == "yes" || raw == "1" || raw == "on") return true;
  if (raw == "false" || raw == "no" || raw == "0" || raw == "off") return false;
  throw Error(bad_arg(*this, key, raw, "a boolean (true, false, yes, no, on, off, 1 or 0)"));
}

#define SLUICE_INTEGER_ARG(T)                                                              \
  template <>                                                                              \
  T Context::convert_arg<T>(std::string_view key, const std::string& raw) const {          \
    return to_integer<T>(*this, key, raw);                                                 \
  }
SLUICE_INTEGER_ARG(signed char)
SLUICE_INTEGER_ARG(unsigned char)
SLUICE_INTEGER_ARG(short)
SLUICE_INTEGER_ARG(unsigned short)
SLUICE_INTEGER_ARG(int)
SLUICE_INTEGER_ARG(long)
SLUICE_INTEGER_ARG(long long)
SLUICE_INTEGER_ARG(unsigned)
SLUICE_INTEGER_ARG(unsigned long)
SLUICE_INTEGER_ARG(unsigned long long)
#undef SLUICE_INTEGER_ARG

template <>
double Context::convert_arg<double>(std::string_view key, const std::string& raw) const {
  errno = 0;
  char* end = nullptr;
  double value = std::strtod(raw.c_str(), &end);
  if (raw.empty() || errno != 0 || *end != '\0' || !std::isfinite(value) || std::isspace(static_cast<unsigned char>(raw[0]))) {
    throw Error(bad_arg(*this, key, raw, "a number (finite)"));
  }
  return value;
}

template <>
std::filesystem::path Context::convert_arg<std::filesystem::path>(std::string_view key,
                                                                  const std::string& raw) const {
  if (raw.empty()) throw Error(bad_arg(*this, key, raw, "a path"));
  std::filesystem::path path(raw);
  return path.is_absolute() ? path : std::filesystem::path(topology_dir()) / path;
}

template <>
float Context::convert_arg<float>(std::string_view key, const std::string& raw) const {
  double value = convert_arg<double>(key, raw);
  if (std::fabs(value) > std::numeric_limits<float>::max()) throw Error(bad_arg(*this, key, raw, "in range for a float"));
  return static_cast<float>(value);
}

}  // namespace sluice
