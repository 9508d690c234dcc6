// The YAML side of the topology parser: marks, field and value readers, and the diagnostics
// collector that turns every problem found into one TopologyError.
#include "topology/yaml_reader.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "text/integer.h"
#include "topology/size.h"
#include "topology/suggest.h"

namespace sluice::topo {

std::string Diagnostic::str() const {
  if (mark.line == 0) return file + ": " + message;
  return file + ":" + std::to_string(mark.line) + ":" + std::to_string(mark.column) + ": " +
         message;
}

namespace {

std::string one_per_line(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) {
    if (!out.empty()) out += '\n';
    out += d.str();
  }
  return out;
}

}  // namespace

TopologyError::TopologyError(std::vector<Diagnostic> diagnostics)
    : Error(one_per_line(diagnostics)), diagnostics_(std::move(diagnostics)) {}

namespace internal {

Mark to_mark(const YAML::Mark& m) {
  if (m.is_null()) return {};
  return {m.line + 1, m.column + 1};
}

Mark mark_of(const YAML::Node& node) { return to_mark(node.Mark()); }

std::string kind(const YAML::Node& node) {
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  if (node.IsNull()) return "an empty value";
  return "'" + node.Scalar() + "'";
}

bool is_identifier(std::string_view s) {
  auto letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  auto rest = [&](char c) {
    return letter(c) || std::isdigit(static_cast<unsigned char>(c)) || c == '-';
  };
  return !s.empty() && letter(s[0]) && std::all_of(s.begin() + 1, s.end(), rest);
}

std::string not_identifier(const std::string& what, const std::string& name) {
  return what + " '" + name + "' is not a valid name; use ASCII letters, digits, '_' and '-', " +
         "starting with a letter or '_'";
}

std::string did_you_mean(std::string_view word, const Names& candidates) {
  const std::string match = closest_match(word, candidates);
  return match.empty() ? "" : "; did you mean '" + match + "'?";
}

const Field* find(const Fields& fields, const std::string& key) {
  const auto it = fields.find(key);
  return it == fields.end() ? nullptr : &it->second;
}

void YamlReader::throw_if_any() {
  if (diagnostics_.empty()) return;
  // In file order, whichever check found them.
  std::stable_sort(diagnostics_.begin(), diagnostics_.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     return std::pair(a.mark.line, a.mark.column) <
                            std::pair(b.mark.line, b.mark.column);
                   });
  throw TopologyError(std::move(diagnostics_));
}

std::vector<Field> YamlReader::entries(const YAML::Node& map, const std::string& what) {
  std::vector<Field> out;
  std::map<std::string, Mark> seen;
  for (const auto& pair : map) {
    const Mark key_mark = mark_of(pair.first);
    if (!pair.first.IsScalar()) {
      error(key_mark, "a " + what + " name must be plain text, not " + kind(pair.first));
      continue;
    }
    const std::string key = pair.first.Scalar();
    const auto [first, fresh] = seen.emplace(key, key_mark);
    if (!fresh) {
      error(key_mark, "duplicate " + what + " '" + key + "'; the first is at line " +
                          std::to_string(first->second.line));
      continue;
    }
    const Mark at = pair.second.IsNull() ? key_mark : mark_of(pair.second);
    out.push_back({key, key_mark, pair.second, at});
  }
  return out;
}

Fields YamlReader::fields(const YAML::Node& map, const Names& keys, const std::string& where) {
  Fields known;
  for (Field& f : entries(map, "key")) {
    if (std::find(keys.begin(), keys.end(), f.key) == keys.end()) {
      error(f.key_mark, "unknown key '" + f.key + "' " + where + "; use one of " + join(keys) +
                            did_you_mean(f.key, keys));
    } else {
      known.emplace(f.key, std::move(f));
    }
  }
  return known;
}

std::optional<std::string> YamlReader::text(const Field& f) {
  if (f.value.IsScalar() && !f.value.Scalar().empty()) return f.value.Scalar();
  error(f.at, f.key + ": must be a non-empty string, not " + kind(f.value));
  return std::nullopt;
}

std::optional<bool> YamlReader::boolean(const Field& f) {
  if (f.value.IsScalar()) {
    const std::string& v = f.value.Scalar();
    if (v == "true" || v == "yes" || v == "on") return true;
    if (v == "false" || v == "no" || v == "off") return false;
  }
  error(f.at, f.key + ": must be true or false, not " +
                  (f.value.IsScalar() ? "'" + f.value.Scalar() + "'" : kind(f.value)));
  return std::nullopt;
}

std::optional<std::string> YamlReader::plain(const YAML::Node& node, Mark at,
                                             const std::string& what) {
  if (node.IsNull()) return "";
  if (node.IsScalar()) return node.Scalar();
  error(at, what + " must be a plain value (text or a number), not " + kind(node) +
                "; write it as one string");
  return std::nullopt;
}

std::optional<long long> YamlReader::integer(const Field& f, const std::string& what,
                                             long long low, long long high) {
  if (f.value.IsScalar()) {
    if (auto n = text::parse_integer<long long>(f.value.Scalar(), low, high)) return n;
  }
  error(f.at, what + " must be a whole number from " + std::to_string(low) + " to " +
                  std::to_string(high) + ", not " + kind(f.value));
  return std::nullopt;
}

std::optional<std::size_t> YamlReader::size(const Field& f, std::size_t max,
                                            const std::string& if_zero) {
  if (!f.value.IsScalar()) {
    error(f.at, f.key + " must be a size such as 64KiB, not " + kind(f.value));
    return std::nullopt;
  }
  std::string why;
  const std::optional<std::size_t> bytes = parse_size(f.value.Scalar(), &why);
  if (!bytes) {
    error(f.at, f.key + ": " + why);
  } else if (*bytes == 0) {
    error(f.at, f.key + " cannot be 0; " + if_zero);
  } else if (*bytes > max) {
    error(f.at, f.key + " " + f.value.Scalar() + " is absurd; the maximum is " + format_size(max));
  } else {
    return bytes;
  }
  return std::nullopt;
}

}  // namespace internal
}  // namespace sluice::topo
