#include "topology/size.h"

#include "text/integer.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iterator>
#include <limits>

namespace sluice::topo {
namespace {

struct SizeSuffix {
  const char* name;
  std::size_t bytes;
};

// Largest first, so that format_size finds the shortest exact spelling.
constexpr SizeSuffix kSuffixes[] = {{"GiB", std::size_t{1} << 30},
                           {"MiB", std::size_t{1} << 20},
                           {"KiB", std::size_t{1} << 10},
                           {"B", 1}};
constexpr const SizeSuffix& kByte = kSuffixes[3];
constexpr std::string_view kUnitList = "units: B, KiB, MiB, GiB";

bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

const SizeSuffix* exact_unit(std::string_view s) {
  for (const SizeSuffix& unit : kSuffixes) {
    if (s == unit.name) return &unit;
  }
  return nullptr;
}

// The unit someone most likely meant: "KB", "kb", "K", "kib" -> KiB; "bytes" -> B.
const SizeSuffix* unit_meant(std::string_view s) {
  std::string lower(s);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "b" || lower == "byte" || lower == "bytes") return &kByte;
  if (lower.empty()) return nullptr;
  const std::string_view rest = std::string_view(lower).substr(1);
  if (!rest.empty() && rest != "b" && rest != "ib") return nullptr;
  switch (lower[0]) {
    case 'k': return exact_unit("KiB");
    case 'm': return exact_unit("MiB");
    case 'g': return exact_unit("GiB");
    default: return nullptr;
  }
}

// whole.fraction × unit, when that is a whole number of bytes that fits in a size_t.
std::optional<std::size_t> to_bytes(std::string_view whole, std::string_view fraction,
                                    std::size_t unit) {
  const std::optional<std::size_t> n =
      text::parse_integer<std::size_t>(whole, 0, std::numeric_limits<std::size_t>::max() / unit);
  if (!n) return std::nullopt;
  std::size_t bytes = *n * unit;
  if (fraction.empty()) return bytes;
  // Nine digits keep digits × unit (unit <= 2^30) well inside 64 bits.
  if (fraction.size() > 9) return std::nullopt;
  const std::size_t digits = text::parse_integer<std::size_t>(fraction).value_or(0);
  std::size_t scale = 1;
  for (std::size_t i = 0; i < fraction.size(); ++i) scale *= 10;
  if (digits * unit % scale != 0) return std::nullopt;
  const std::size_t extra = digits * unit / scale;
  if (bytes > std::numeric_limits<std::size_t>::max() - extra) return std::nullopt;
  return bytes + extra;
}

std::nullopt_t fail(std::string* why, std::string message) {
  if (why != nullptr) *why = std::move(message);
  return std::nullopt;
}

}  // namespace

std::optional<std::size_t> parse_size(std::string_view text, std::string* why, std::string* spelling) {
  // Split "1.5 MiB" into whole "1", fraction "5" and unit "MiB".
  std::size_t i = 0;
  while (i < text.size() && is_digit(text[i])) ++i;
  const std::string_view whole = text.substr(0, i);
  const bool has_point = i < text.size() && text[i] == '.';
  std::string_view fraction;
  if (has_point) {
    const std::size_t start = ++i;
    while (i < text.size() && is_digit(text[i])) ++i;
    fraction = text.substr(start, i - start);
  }
  while (i < text.size() && text[i] == ' ') ++i;
  const std::string_view unit_text = text.substr(i);

  const std::string quoted = "'" + std::string(text) + "'";
  if (whole.empty()) {
    return fail(why, quoted + " is not a size; write a whole number of bytes or a number with a " +
                         "unit, e.g. 65536 or 64KiB (" + std::string(kUnitList) + ")");
  }
  const SizeSuffix* exact = unit_text.empty() ? &kByte : exact_unit(unit_text);
  const SizeSuffix* meant = exact != nullptr ? exact : unit_meant(unit_text);
  if (meant == nullptr) {
    return fail(why, quoted + " is not a size: unknown unit '" + std::string(unit_text) + "'; " +
                         std::string(kUnitList) + " (e.g. 64KiB)");
  }
  const std::optional<std::size_t> bytes = to_bytes(whole, fraction, meant->bytes);
  if (exact != nullptr && !has_point) {
    if (!bytes) return fail(why, quoted + " is too large to be a size");
    return bytes;
  }
  // Close to a size: say how to write it.
  const std::string reason = has_point ? " (sizes are whole numbers of bytes)" : "";
  if (!bytes) return fail(why, quoted + " is not a size" + reason + "; " + std::string(kUnitList));
  const std::string right = has_point ? format_size(*bytes) : std::string(whole) + meant->name;
  if (spelling != nullptr) *spelling = right;
  return fail(why, quoted + " is not a size" + reason + "; did you mean " + right + "? " +
                       std::string(kUnitList));
}

std::string format_size(std::size_t bytes) {
  if (bytes == 0) return "0B";
  // The largest unit that divides it; B always does.
  const SizeSuffix& unit = *std::find_if(std::begin(kSuffixes), std::end(kSuffixes),
                                   [bytes](const SizeSuffix& u) { return bytes % u.bytes == 0; });
  return std::to_string(bytes / unit.bytes) + unit.name;
}

std::string format_size_rounded(std::size_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %s", value, kUnits[unit]);
  return text;
}

}  // namespace sluice::topo
