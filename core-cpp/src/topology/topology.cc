// The topology parser's entry points and the sections of a topology file other than its
// streams: the top level, defaults:, hosts:, filters:, work: and jvm:. Streams and the graph
// checks are in topology_streams.cc; the YAML readers and the diagnostics collector in
// yaml_reader.cc. Anything wrong anywhere means a TopologyError with every problem found.
#include "topology/topology.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "text/address.h"
#include "topology/parser.h"
#include "topology/size.h"
#include "topology/suggest.h"

namespace sluice::topo {

using internal::kLangNames;
using internal::kPolicyNames;

const char* to_string(Lang lang) { return kLangNames[static_cast<int>(lang)]; }
const char* to_string(Policy policy) { return kPolicyNames[static_cast<int>(policy)]; }

const FilterSpec* Topology::find_filter(std::string_view name) const {
  for (const FilterSpec& filter : filters) {
    if (filter.name == name) return &filter;
  }
  return nullptr;
}

int Topology::copies_of(std::string_view name) const {
  if (name == kClient) return 1;
  const FilterSpec* filter = find_filter(name);
  if (filter == nullptr) throw Error("internal: no filter named '" + std::string(name) + "'");
  return filter->copies;
}

const StreamSpec* Topology::client_stream() const {
  for (const StreamSpec& stream : streams) {
    if (stream.to_client()) return &stream;
  }
  return nullptr;
}

bool Topology::has_java() const {
  return std::any_of(filters.begin(), filters.end(),
                     [](const FilterSpec& f) { return f.lang == Lang::kJava; });
}

namespace {

// dir made absolute and normal, without a trailing '/'.
std::string absolute_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::string s =
      fs::absolute(dir.empty() ? fs::path(".") : fs::path(dir)).lexically_normal().string();
  if (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string default_name(const std::string& file) {
  const std::string stem = std::filesystem::path(file).stem().string();
  return stem.empty() ? "topology" : stem;
}

}  // namespace

namespace internal {
namespace {

const Names kTopKeys = {"name", "defaults", "hosts", "filters", "streams", "work", "jvm"};
const Names kDefaultsKeys = {"buffer_size", "depth", "encrypt"};
const Names kFilterKeys = {"lang", "class", "library", "classpath", "args", "copies", "place"};
const Names kJvmKeys = {"heap", "options"};
const Names kLangs(std::begin(kLangNames), std::end(kLangNames));

constexpr const char* kFilterExample = "e.g. filters: {hello: {class: Hello}}";

// What is wrong with a "host:port" or "[v6]:port" address, or "" when nothing is
// (text/address.h's rules: a host name or an IP address, a port from 1 to 65535).
std::string address_problem(const std::string& address) {
  std::string problem;
  return text::parse_host_port(address, text::AddressRules{}, &problem) ? "" : problem;
}

// Where the first tab in a line's leading whitespace is (line 0: none).
Mark first_indenting_tab(std::string_view text) {
  int line = 1;
  int column = 1;
  bool leading = true;
  for (const char c : text) {
    if (c == '\n') {
      ++line;
      column = 1;
      leading = true;
      continue;
    }
    if (leading && c == '\t') return {line, column};
    if (c != ' ') leading = false;
    ++column;
  }
  return {};
}

}  // namespace

Parser::Parser(std::string file, std::string dir) : YamlReader(file) {
  t_.file = file;
  t_.dir = std::move(dir);
  t_.name = default_name(file);
}

Topology Parser::run(std::string_view text) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    if (const Mark tab = first_indenting_tab(text); tab.line != 0) {
      // yaml-cpp names what it expected after the tab, far from it; the tab is the cause.
      error(tab, "invalid YAML: a tab in the indentation; YAML indents with spaces only: replace it with spaces");
    } else {
      error(to_mark(e.mark), "invalid YAML: " + e.msg + "; check the brackets, quotes and indentation here");
    }
  }
  if (!has_errors()) {
    if (documents.empty()) {
      error({}, std::string("the topology is empty; it needs at least filters:, ") +
                    kFilterExample);
    } else {
      if (documents.size() > 1) {
        error(mark_of(documents[1]),
              "a topology file holds one YAML document; remove this one or the '---' before it");
      }
      parse_root(documents[0]);
    }
  }
  throw_if_any();
  return std::move(t_);
}

std::optional<std::size_t> Parser::buffer_size(const Field& f) {
  return size(f, kMaxBufferSize,
              "a buffer holds at least 1 byte (the default is " + format_size(kDefaultBufferSize) +
                  ")");
}

std::optional<std::size_t> Parser::depth(const Field& f) {
  const std::optional<long long> n = integer(f, "depth", 1, kMaxDepth);
  if (!n) return std::nullopt;
  return static_cast<std::size_t>(*n);
}

// Relative paths are relative to the topology file, whatever the current directory.
std::string Parser::resolve(const std::string& path) const {
  const std::filesystem::path p(path);
  return (p.is_absolute() ? p : std::filesystem::path(t_.dir) / p).lexically_normal().string();
}

void Parser::parse_root(const YAML::Node& root) {
  if (!root.IsMap()) {
    error(mark_of(root), "the top level must be a map with filters: (and optionally name:, " +
                             std::string("defaults:, hosts:, streams:, work:, jvm:), not ") +
                             kind(root));
    return;
  }
  const Fields top = fields(root, kTopKeys, "at the top level");
  if (const Field* f = find(top, "name")) t_.name = text(*f).value_or(t_.name);
  if (const Field* f = find(top, "defaults")) parse_defaults(*f);
  if (const Field* f = find(top, "hosts")) parse_hosts(*f);
  if (const Field* f = find(top, "jvm")) parse_jvm(*f);
  if (const Field* f = find(top, "filters")) {
    parse_filters(*f);
  } else {
    error(mark_of(root), std::string("there is no filters: section; a topology needs at least ") +
                             "one filter, " + kFilterExample);
  }
  if (const Field* f = find(top, "streams")) parse_streams(*f);
  parse_work(find(top, "work"));
  check_ports();
  check_acyclic();
}

void Parser::parse_defaults(const Field& f) {
  if (f.value.IsNull()) return;
  if (!f.value.IsMap()) {
    error(f.at, "defaults: must be a map such as {buffer_size: 64KiB, depth: 16}, not " +
                    kind(f.value));
    return;
  }
  const Fields d = fields(f.value, kDefaultsKeys, "in defaults:");
  if (const Field* b = find(d, "buffer_size")) {
    t_.defaults.buffer_size = buffer_size(*b).value_or(t_.defaults.buffer_size);
  }
  if (const Field* n = find(d, "depth")) t_.defaults.depth = depth(*n).value_or(t_.defaults.depth);
  if (const Field* e = find(d, "encrypt")) t_.defaults.encrypt = boolean(*e).value_or(false);
}

void Parser::parse_hosts(const Field& f) {
  const bool empty = f.value.IsNull() || (f.value.IsMap() && f.value.size() == 0);
  if (empty) {
    error(f.at, "hosts: is empty; list hosts as name: address:port, or leave hosts: out to run " +
                    std::string("everything in one process"));
    return;
  }
  if (!f.value.IsMap()) {
    error(f.at, "hosts: must be a map from host name to address:port, e.g. " +
                    std::string("{a: 127.0.0.1:7700}, not ") + kind(f.value));
    return;
  }
  for (const Field& h : entries(f.value, "host")) {
    if (const std::string problem = host_name_problem(h.key); !problem.empty()) error(h.key_mark, problem);
    const std::optional<std::string> address = text(h);
    if (address) {
      const std::string problem = address_problem(*address);
      if (!problem.empty()) error(h.at, "host '" + h.key + "': " + problem);
    }
    // Listed even when broken, so that place: does not also call it unknown.
    t_.hosts.push_back({h.key, address.value_or(""), h.key_mark});
  }
}

void Parser::parse_filters(const Field& f) {
  if (f.value.IsMap() && f.value.size() > 0) {
    for (const Field& entry : entries(f.value, "filter")) parse_filter(entry);
  } else if (f.value.IsMap() || f.value.IsNull()) {
    error(f.at, std::string("filters: is empty; a topology needs at least one filter, ") +
                    kFilterExample);
  } else {
    error(f.at, "filters: must be a map from filter name to its settings, " +
                    std::string(kFilterExample) + ", not " + kind(f.value));
  }
}

void Parser::parse_filter(const Field& entry) {
  FilterSpec spec;
  spec.name = entry.key;
  spec.mark = spec.class_mark = spec.library_mark = spec.classpath_mark = entry.key_mark;
  filter_names_.push_back(spec.name);
  const std::string where = "filter '" + spec.name + "'";
  if (!is_identifier(spec.name)) error(entry.key_mark, not_identifier("filter name", spec.name));
  if (spec.name == kClient) {
    error(entry.key_mark, "'client' cannot name a filter: `to: client` means the program that submits units of "
                          "work; rename the filter, e.g. client_side");
  }
  if (!entry.value.IsMap()) {
    error(entry.at, where + " must be a map of settings, e.g. {class: Hello}, not " +
                        kind(entry.value));
    return;
  }
  const Fields fs = fields(entry.value, kFilterKeys, "in " + where);
  const bool lang_known = parse_lang(find(fs, "lang"), spec);
  if (const Field* f = find(fs, "class")) {
    spec.class_name = text(*f).value_or("");
    spec.class_mark = f->at;
  } else {
    error(spec.mark, where + " has no class:; add class: with the name its library registers " +
                         "(cpp) or the Java class name (java)");
  }
  if (const Field* f = find(fs, "library")) parse_library(*f, lang_known, spec);
  if (const Field* f = find(fs, "classpath")) parse_classpath(*f, lang_known, spec);
  if (const Field* f = find(fs, "args")) parse_args(*f, spec);
  parse_copies(find(fs, "copies"), find(fs, "place"), spec);
  t_.filters.push_back(std::move(spec));
}

// False when lang: is there but unusable, so that library:/classpath: are not also blamed.
bool Parser::parse_lang(const Field* f, FilterSpec& spec) {
  if (f == nullptr) return true;
  const std::optional<std::string> name = text(*f);
  if (!name) return false;
  const auto it = std::find(kLangs.begin(), kLangs.end(), *name);
  if (it == kLangs.end()) {
    error(f->at, "unknown lang '" + *name + "'; use cpp or java" + did_you_mean(*name, kLangs));
    return false;
  }
  spec.lang = static_cast<Lang>(it - kLangs.begin());
  return true;
}

void Parser::parse_library(const Field& f, bool lang_known, FilterSpec& spec) {
  if (lang_known && spec.lang != Lang::kCpp) {
    error(f.key_mark, "library: is only for cpp filters; a java filter lists its jars in " +
                          std::string("classpath:"));
    return;
  }
  if (const std::optional<std::string> path = text(f)) {
    spec.library = resolve(*path);
    spec.library_mark = f.at;
  }
}

void Parser::parse_classpath(const Field& f, bool lang_known, FilterSpec& spec) {
  if (lang_known && spec.lang != Lang::kJava) {
    error(f.key_mark, "classpath: is only for java filters; add lang: java, or use library: " +
                          std::string("for a cpp filter"));
    return;
  }
  spec.classpath_mark = f.at;
  if (!f.value.IsSequence()) {
    if (const std::optional<std::string> path = text(f)) spec.classpath.push_back(resolve(*path));
    return;
  }
  if (f.value.size() == 0) {
    error(f.at, "classpath: is empty; list jars or directories, or leave classpath: out");
  }
  for (const YAML::Node& item : f.value) {
    const Mark at = item.IsNull() ? f.at : mark_of(item);
    if (const std::optional<std::string> path = text({f.key, f.key_mark, item, at})) {
      spec.classpath.push_back(resolve(*path));
    }
  }
}

void Parser::parse_args(const Field& f, FilterSpec& spec) {
  if (f.value.IsNull()) return;
  if (!f.value.IsMap()) {
    error(f.at, "args: must be a map of name: value, e.g. {path: data.txt}, not " +
                    kind(f.value));
    return;
  }
  for (const Field& arg : entries(f.value, "arg")) {
    if (const std::optional<std::string> value = plain(arg.value, arg.at, "args: " + arg.key)) {
      spec.args[arg.key] = *value;
    }
  }
}

void Parser::parse_copies(const Field* copies, const Field* place, FilterSpec& spec) {
  std::optional<long long> count;
  if (copies != nullptr) count = integer(*copies, "copies", 1, kMaxCopies);
  if (place == nullptr) {
    if (count) spec.copies = static_cast<int>(*count);
    return;
  }
  const int placed = parse_place(*place, spec);
  if (placed == 0) return;  // place: had errors, already reported
  if (placed > kMaxCopies) {
    error(place->at, "place: runs " + std::to_string(placed) + " copies of filter '" + spec.name +
                         "'; the maximum is " + std::to_string(kMaxCopies));
  } else if (count && *count != placed) {
    error(copies->at, "copies: " + std::to_string(*count) + " does not match place:, which runs " +
                          std::to_string(placed) + "; leave copies: out (place: decides) or " +
                          "make them agree");
  }
  spec.copies = placed;
}

// The copies place: asks for in all, or 0 after reporting what is wrong with it.
int Parser::parse_place(const Field& f, FilterSpec& spec) {
  const std::string form = "map host names to copies, e.g. {a: 1, b: 2}";
  if (f.value.IsMap() && f.value.size() == 0) {
    error(f.at, "place: is empty; " + form + ", or leave place: out");
    return 0;
  }
  if (!f.value.IsMap()) {
    error(f.at, "place: must " + form + ", not " + kind(f.value));
    return 0;
  }
  if (t_.hosts.empty()) {
    error(f.at, "place: needs hosts:; without hosts: everything runs in one process, so add " +
                    std::string("hosts: or leave place: out (--hosts can point the hosts listed there elsewhere, ") +
                    "but the names place: uses must be listed in the file, e.g. hosts: {a: 127.0.0.1:7700})");
    return 0;
  }
  Names hosts;
  for (const HostSpec& h : t_.hosts) hosts.push_back(h.name);
  bool ok = true;
  int sum = 0;
  for (const Field& p : entries(f.value, "host")) {
    if (std::find(hosts.begin(), hosts.end(), p.key) == hosts.end()) {
      error(p.key_mark, "host '" + p.key + "' is not listed in hosts: (listed: " + join(hosts) + ")" +
                            did_you_mean(p.key, hosts) +
                            "; list it there (--hosts can give it another address, but cannot add a host to "
                            "place: copies on)");
      ok = false;
    }
    const std::optional<long long> n = integer(p, "copies on host '" + p.key + "'", 1, kMaxCopies);
    if (!n) {
      ok = false;
      continue;
    }
    sum += static_cast<int>(*n);
    spec.place.emplace_back(p.key, static_cast<int>(*n));
  }
  return ok ? sum : 0;
}

void Parser::parse_work(const Field* f) {
  if (f == nullptr) {
    t_.work = {""};
    return;
  }
  t_.work_given = true;
  if (f->value.IsSequence() && f->value.size() > 0) {
    for (const YAML::Node& item : f->value) {
      const Mark at = item.IsNull() ? f->at : mark_of(item);
      if (const std::optional<std::string> payload = plain(item, at, "a work payload")) {
        t_.work.push_back(*payload);
      }
    }
  } else if (f->value.IsSequence() || f->value.IsNull()) {
    error(f->at, "work: is empty; leave work: out for one unit of work with an empty payload");
  } else {
    error(f->at, "work: must be a list of payloads, e.g. [first-pass, second-pass], not " +
                     kind(f->value));
  }
}

void Parser::parse_jvm(const Field& f) {
  t_.jvm.mark = f.key_mark;
  if (f.value.IsNull()) return;
  if (!f.value.IsMap()) {
    error(f.at, "jvm: must be a map such as {heap: 512MiB, options: [-Xss2m]}, not " +
                    kind(f.value));
    return;
  }
  const Fields jvm = fields(f.value, kJvmKeys, "in jvm:");
  if (const Field* heap = find(jvm, "heap")) {
    t_.jvm.heap = size(*heap, std::numeric_limits<std::size_t>::max(),
                       "leave heap: out for the JVM's default")
                      .value_or(0);
  }
  const Field* options = find(jvm, "options");
  if (options == nullptr || options->value.IsNull()) return;
  if (!options->value.IsSequence()) {
    error(options->at, "options: must be a list of JVM flags, e.g. [-Xss2m], not " +
                           kind(options->value));
    return;
  }
  std::string previous;  // the flag before, for the value of a two-word option
  for (const YAML::Node& item : options->value) {
    const Mark at = item.IsNull() ? options->at : mark_of(item);
    const std::optional<std::string> flag = text({"options", options->key_mark, item, at});
    if (flag && !flag->starts_with('-')) {
      // "--add-opens", "java.base/..." as two items: the JVM takes only the one-word form.
      error(at, previous.starts_with("--") && previous.find('=') == std::string::npos
                    ? "JVM option '" + *flag + "' must start with '-'; as the value of " + previous +
                          ", write them as one item: " + previous + "=" + *flag
                    : "JVM option '" + *flag + "' must start with '-', e.g. -" + *flag);
    } else if (flag) {
      t_.jvm.options.push_back(*flag);
    }
    previous = flag.value_or("");
  }
}

}  // namespace internal

std::string host_name_problem(const std::string& name) {
  if (!internal::is_identifier(name)) return internal::not_identifier("host name", name);
  if (name == kClient) {
    return "'client' cannot name a host: it is reserved for the program that submits units of work (to: client); "
           "rename the host, e.g. client1";
  }
  return "";
}

Topology parse_topology_text(std::string_view text, const std::string& file,
                             const std::string& base_dir) {
  Topology t = internal::Parser(file, absolute_dir(base_dir)).run(text);
  t.text = std::string(text);
  return t;
}

Topology parse_topology_file(const std::string& path) {
  const std::string dir = absolute_dir(std::filesystem::path(path).parent_path().string());
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw TopologyError({{path, {}, "cannot read the topology: it is a directory, not a file"}});
  }
  std::ifstream in(path);
  if (!in) {
    throw TopologyError(
        {{path, {}, "cannot open the topology file: " + std::string(std::strerror(errno)) +
                        "; check the path"}});
  }
  std::ostringstream text;
  text << in.rdbuf();
  Topology t = internal::Parser(path, dir).run(text.str());
  t.text = text.str();
  return t;
}

}  // namespace sluice::topo
