// PortRange: the ports a listening socket may take, as an operator writes them for a
// firewall ("7701-7799", or "7701" for one port): `sluiced --data-ports`, and the console's
// own data port (`sluice run|serve --data-ports`). An empty range means any free port (the
// kernel's ephemeral range).
//
// Thread safety: pure functions.
#ifndef SLUICE_TEXT_PORT_RANGE_H_
#define SLUICE_TEXT_PORT_RANGE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::text {

struct PortRange {
  std::uint16_t first = 0;  // 0: no range (any free port)
  std::uint16_t last = 0;   // >= first when first != 0

  bool any() const { return first == 0; }
  int size() const { return any() ? 0 : last - first + 1; }
  bool contains(std::uint16_t port) const { return !any() && port >= first && port <= last; }
  // "7701-7799", "7701" for a range of one.
  std::string text() const;
};

// `text` ("LO-HI" or "PORT", each a port from 1 to 65535, LO <= HI) as a range; otherwise
// nullopt, and `*problem` (when not null) says what is wrong and what to write.
std::optional<PortRange> parse_port_range(std::string_view text, std::string* problem);

}  // namespace sluice::text

#endif  // SLUICE_TEXT_PORT_RANGE_H_
