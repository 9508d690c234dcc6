// "Did you mean" for misspelt keys, policies, filter names.
#ifndef SLUICE_TOPOLOGY_SUGGEST_H_
#define SLUICE_TOPOLOGY_SUGGEST_H_

#include <string>
#include <string_view>
#include <vector>

namespace sluice::topo {

// The candidate closest to `word` by edit distance, or "" when none is close enough to be
// a plausible typo.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// "a, b, c": candidates joined for messages.
std::string join(const std::vector<std::string>& words, std::string_view separator = ", ");

}  // namespace sluice::topo

#endif  // SLUICE_TOPOLOGY_SUGGEST_H_
