// Sizes as written in topologies and arguments: "65536", "64B", "64KiB", "1MiB", "1GiB".
#ifndef SLUICE_TOPOLOGY_SIZE_H_
#define SLUICE_TOPOLOGY_SIZE_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::topo {

// Returns the size in bytes, or nullopt with *why set to a message that says what would be
// right (e.g. "'64KB' is not a size; did you mean 64KiB? ..."), and *meant (when given) to
// that right spelling ("64KiB") when the text is that close to a size.
std::optional<std::size_t> parse_size(std::string_view text, std::string* why, std::string* meant = nullptr);

// "64KiB", "1MiB", "100B": the shortest exact spelling.
std::string format_size(std::size_t bytes);
// "18.0 GiB", "512.5 KiB", "100 B": rounded to a tenth of the largest unit that fits, for
// totals in messages (an exact "19327355392B" is hard to read).
std::string format_size_rounded(std::size_t bytes);

}  // namespace sluice::topo

#endif  // SLUICE_TOPOLOGY_SIZE_H_
