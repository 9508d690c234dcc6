#include "text/port_range.h"

#include "text/integer.h"

namespace sluice::text {

std::string PortRange::text() const {
  if (any()) return "any free port";
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

std::optional<PortRange> parse_port_range(std::string_view text, std::string* problem) {
  const auto fail = [&](const std::string& why) -> std::optional<PortRange> {
    if (problem) *problem = why;
    return std::nullopt;
  };
  const std::string shown = "'" + std::string(text) + "'";
  const std::size_t dash = text.find('-');
  const std::string_view lo = text.substr(0, dash);
  const std::string_view hi = dash == std::string_view::npos ? lo : text.substr(dash + 1);
  const auto first = parse_integer<std::uint16_t>(lo, 1, 65535);
  const auto last = parse_integer<std::uint16_t>(hi, 1, 65535);
  if (!first || !last) {
    return fail(shown + " is not a port range; write LO-HI, two ports from 1 to 65535 (e.g. 7701-7799), or one port");
  }
  if (*first > *last) {
    return fail(shown + " is not a port range: " + std::to_string(*first) + " is above " + std::to_string(*last) +
                "; write the lower port first (e.g. " + std::to_string(*last) + "-" + std::to_string(*first) + ")");
  }
  return PortRange{*first, *last};
}

}  // namespace sluice::text
