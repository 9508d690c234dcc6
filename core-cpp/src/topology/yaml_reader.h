// YamlReader: reads the maps and values of a YAML tree and collects a Diagnostic for every
// problem instead of stopping at the first. The topology parser (topology/parser.h) is
// built on it. Internal to topology/.
//
// Thread safety: a YamlReader is used by one thread.
#ifndef SLUICE_TOPOLOGY_YAML_READER_H_
#define SLUICE_TOPOLOGY_YAML_READER_H_

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "topology/topology.h"

namespace sluice::topo::internal {

using Names = std::vector<std::string>;

// yaml-cpp counts from 0; people and editors count from 1.
Mark to_mark(const YAML::Mark& m);
Mark mark_of(const YAML::Node& node);

// What a node is, for "must be X, not Y" messages: "a map", "a list", "an empty value",
// or the scalar in quotes.
std::string kind(const YAML::Node& node);

// Letters, digits, '_' and '-', starting with a letter or '_'.
bool is_identifier(std::string_view s);
std::string not_identifier(const std::string& what, const std::string& name);

// "; did you mean 'x'?" for the closest candidate, or "" when none is close.
std::string did_you_mean(std::string_view word, const Names& candidates);

// One key: value pair of a YAML map.
struct Field {
  std::string key;
  Mark key_mark;
  YAML::Node value;
  // The value's position, or the key's when the value is empty: yaml-cpp marks an empty value
  // at whatever token follows it, often on the next line.
  Mark at;
};

using Fields = std::map<std::string, Field>;

// The field named `key`, or nullptr.
const Field* find(const Fields& fields, const std::string& key);

class YamlReader {
 public:
  // `file` names the text in diagnostics.
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  // Records a problem at `at` (line 0: no position).
  void error(Mark at, std::string message) {
    diagnostics_.push_back({file_, at, std::move(message)});
  }
  bool has_errors() const { return !diagnostics_.empty(); }
  // Throws TopologyError with every problem recorded, in file order, if there is any.
  void throw_if_any();

  // Walking maps.
  // The pairs of `map` in file order, each key once: repeats are reported and dropped.
  // `what` names a key in messages ("key", "filter", "host", "arg").
  std::vector<Field> entries(const YAML::Node& map, const std::string& what);
  // The pairs of `map` whose keys are among `keys`; other keys are reported as "unknown key
  // 'x' <where>", e.g. where = "in a stream".
  Fields fields(const YAML::Node& map, const Names& keys, const std::string& where);

  // Values. Each returns nullopt after reporting what is wrong.
  // A non-empty string value, such as class: or library:.
  std::optional<std::string> text(const Field& f);
  // A value kept as written (args, work payloads): any scalar, or "" for an empty value.
  std::optional<std::string> plain(const YAML::Node& node, Mark at, const std::string& what);
  // A whole number in [low, high]; `what` names it in the message.
  std::optional<long long> integer(const Field& f, const std::string& what, long long low,
                                   long long high);
  // true or false (also yes/no, on/off).
  std::optional<bool> boolean(const Field& f);
  // A size such as 64KiB, from 1 to `max` bytes; `if_zero` says what to do about a 0.
  std::optional<std::size_t> size(const Field& f, std::size_t max, const std::string& if_zero);

 private:
  std::string file_;
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace sluice::topo::internal

#endif  // SLUICE_TOPOLOGY_YAML_READER_H_
