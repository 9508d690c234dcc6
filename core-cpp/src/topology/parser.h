// Parser: turns one topology file's YAML into a Topology, or a TopologyError listing every
// problem. Internal to topology/: users call parse_topology_file/_text (topology.h).
//
// It walks the tree once, section by section (topology.cc: the top level, defaults, hosts,
// filters, work, jvm; topology_streams.cc: streams and their ports), recording problems as
// it goes, then checks the stream graph as a whole (one stream per port, no cycles).
//
// Thread safety: a Parser is used once, by one thread.
#ifndef SLUICE_TOPOLOGY_PARSER_H_
#define SLUICE_TOPOLOGY_PARSER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <yaml-cpp/yaml.h>

#include "topology/topology.h"
#include "topology/yaml_reader.h"

namespace sluice::topo::internal {

// Spellings in the file, indexed by the enums.
inline constexpr const char* kLangNames[] = {"cpp", "java"};
inline constexpr const char* kPolicyNames[] = {"round_robin", "demand_driven", "by_key",
                                               "broadcast"};

class Parser : private YamlReader {
 public:
  // `file` names the text in diagnostics; `dir` is the absolute directory that relative
  // paths resolve against.
  Parser(std::string file, std::string dir);

  // Parses `text`. Throws TopologyError with every problem found. Call once.
  Topology run(std::string_view text);

 private:
  // Values.
  std::optional<std::size_t> buffer_size(const Field& f);
  std::optional<std::size_t> depth(const Field& f);
  std::string resolve(const std::string& path) const;

  // Sections (topology.cc).
  void parse_root(const YAML::Node& root);
  void parse_defaults(const Field& f);
  void parse_hosts(const Field& f);
  void parse_filters(const Field& f);
  void parse_filter(const Field& entry);
  bool parse_lang(const Field* f, FilterSpec& spec);
  void parse_library(const Field& f, bool lang_known, FilterSpec& spec);
  void parse_classpath(const Field& f, bool lang_known, FilterSpec& spec);
  void parse_args(const Field& f, FilterSpec& spec);
  void parse_copies(const Field* copies, const Field* place, FilterSpec& spec);
  int parse_place(const Field& f, FilterSpec& spec);
  void parse_work(const Field* f);
  void parse_jvm(const Field& f);

  // Streams (topology_streams.cc).
  void parse_streams(const Field& f);
  void parse_stream(const YAML::Node& item);
  std::optional<PortRef> parse_port(const Field* f, const std::string& role, Mark stream);
  void parse_policy(const Field& f, StreamSpec& stream);

  // The graph (topology_streams.cc).
  void check_ports();
  void check_acyclic();

  Topology t_;
  Names filter_names_;  // every filter key, even of filters with errors
};

}  // namespace sluice::topo::internal

#endif  // SLUICE_TOPOLOGY_PARSER_H_
