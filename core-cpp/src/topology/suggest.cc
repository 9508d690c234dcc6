#include "topology/suggest.h"

#include <algorithm>
#include <cctype>

namespace sluice::topo {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Optimal string alignment distance: an insertion, a deletion, a substitution or a swap of two
// adjacent characters each cost 1, so "plicy", "polcy" and "poilcy" are all one edit from
// "policy".
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// A word's parts, lower case and sorted: split at '_', '-' and where a lower-case letter meets
// an upper-case one ("keyBy" and "key_by" are {"by", "key"}).
std::vector<std::string> sorted_parts(std::string_view word) {
  std::vector<std::string> parts;
  std::string part;
  for (std::size_t i = 0; i < word.size(); ++i) {
    const auto c = static_cast<unsigned char>(word[i]);
    const bool cut = c == '_' || c == '-';
    if (cut || (std::isupper(c) && i > 0 && std::islower(static_cast<unsigned char>(word[i - 1])))) {
      if (!part.empty()) parts.push_back(part);
      part.clear();
    }
    if (!cut) part += static_cast<char>(std::tolower(c));
  }
  if (!part.empty()) parts.push_back(part);
  std::sort(parts.begin(), parts.end());
  return parts;
}

// `plural` is `singular` with an English plural ending: "copy" -> "copies", "arg" -> "args".
// Words of three letters or more: "y" is not the singular of "ies".
bool is_plural_of(const std::string& plural, const std::string& singular) {
  if (singular.size() < 3) return false;
  if (plural == singular + "s") return true;
  return singular.back() == 'y' && plural == singular.substr(0, singular.size() - 1) + "ies";
}

}  // namespace

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  // The same parts in another order ("key_by", Flink's "keyBy", for "by_key"): no typo, but
  // far by edit distance.
  if (const std::vector<std::string> parts = sorted_parts(word); parts.size() >= 2) {
    for (const std::string& candidate : candidates) {
      if (sorted_parts(candidate) == parts) return candidate;
    }
  }
  const std::string typed = lower(word);
  // The singular of a plural key, or the plural of a singular one ("copy" for "copies"): far
  // by edit distance in a short word, but what was meant.
  for (const std::string& candidate : candidates) {
    const std::string c = lower(candidate);
    if (is_plural_of(c, typed) || is_plural_of(typed, c)) return candidate;
  }
  // A typo changes a few characters: allow about a third of the word, and at least two.
  const std::size_t limit = std::max<std::size_t>(2, typed.size() / 3);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const std::string& candidate : candidates) {
    const std::size_t distance = edit_distance(typed, lower(candidate));
    // Rewriting every character is not a typo: "x" is not a misspelt "to".
    const bool plausible = distance < std::max(typed.size(), candidate.size());
    if (plausible && distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string join(const std::vector<std::string>& words, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += separator;
    out += words[i];
  }
  return out;
}

}  // namespace sluice::topo
