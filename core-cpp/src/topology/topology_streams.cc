// The topology's streams: each entry of streams: (its ports, policy and sizes), then the
// graph they form as a whole: one stream per port, and no cycles.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "topology/parser.h"
#include "topology/suggest.h"

namespace sluice::topo::internal {

namespace {

const Names kStreamKeys = {"from", "to", "policy", "buffer_size", "depth", "encrypt"};
const Names kPolicies(std::begin(kPolicyNames), std::end(kPolicyNames));

}  // namespace

void Parser::parse_streams(const Field& f) {
  if (f.value.IsNull()) return;
  if (!f.value.IsSequence()) {
    error(f.at, "streams: must be a list, e.g. [{from: read.out, to: upper.in}], not " +
                    kind(f.value));
    return;
  }
  for (const YAML::Node& item : f.value) parse_stream(item);
}

void Parser::parse_stream(const YAML::Node& item) {
  StreamSpec stream;
  stream.mark = mark_of(item);
  stream.buffer_size = t_.defaults.buffer_size;
  stream.depth = t_.defaults.depth;
  stream.encrypt = t_.defaults.encrypt;
  if (!item.IsMap()) {
    error(stream.mark, "a stream must be a map such as {from: read.out, to: upper.in}, not " +
                           kind(item));
    return;
  }
  const Fields fs = fields(item, kStreamKeys, "in a stream");
  const std::optional<PortRef> from = parse_port(find(fs, "from"), "from", stream.mark);
  const std::optional<PortRef> to = parse_port(find(fs, "to"), "to", stream.mark);
  if (const Field* f = find(fs, "policy")) parse_policy(*f, stream);
  if (const Field* f = find(fs, "buffer_size")) {
    stream.buffer_size = buffer_size(*f).value_or(stream.buffer_size);
  }
  if (const Field* f = find(fs, "depth")) stream.depth = depth(*f).value_or(stream.depth);
  if (stream.depth == 0) stream.depth = default_depth(stream.buffer_size);
  if (const Field* f = find(fs, "encrypt")) stream.encrypt = boolean(*f).value_or(stream.encrypt);
  if (!from || !to) return;
  if (from->filter == to->filter) {
    error(stream.mark, "stream from filter '" + from->filter + "' to itself; sluice graphs are " +
                           "acyclic, so a filter cannot feed its own input");
    return;
  }
  stream.from = *from;
  stream.to = *to;
  t_.streams.push_back(std::move(stream));
}

// `role` is "from" or "to"; a missing one is reported at the stream.
std::optional<PortRef> Parser::parse_port(const Field* f, const std::string& role, Mark stream) {
  const std::string port_example = role == "from" ? ".out" : ".in";
  if (f == nullptr) {
    error(stream, "stream has no " + role + ":; add " + role + ": filter.port, e.g. " + role +
                      ": " + (role == "from" ? "read" : "upper") + port_example);
    return std::nullopt;
  }
  const std::optional<std::string> name = text(*f);
  if (!name) return std::nullopt;
  if (name->substr(0, name->find('.')) == kClient) {
    if (role == "from") {
      error(f->at, "from: client: the client (the program that submits units of work) only receives; it can be "
                   "a stream's to:, e.g. {from: merge.out, to: client}");
      return std::nullopt;
    }
    if (*name != kClient) {
      error(f->at, "to: '" + *name + "': the client has no ports; write to: client");
      return std::nullopt;
    }
    return PortRef{std::string(kClient), "", f->at};
  }
  const std::size_t dot = name->find('.');
  const std::string filter = name->substr(0, dot);
  const std::string port = dot == std::string::npos ? "" : name->substr(dot + 1);
  if (!is_identifier(filter) || !is_identifier(port)) {
    const std::string example = (is_identifier(filter) ? filter : "read") + port_example;
    // `to: clint` is more likely the client misspelt than a filter without its port.
    const std::string client = role == "to" && dot == std::string::npos
                                   ? did_you_mean(filter, {std::string(kClient)})
                                   : "";
    error(f->at, role + ": '" + *name + "' is not a port; write filter.port, e.g. " + example +
                     " (names are letters, digits, '_' and '-')" + (client.empty() ? "" : client + " (the program that submits units)"));
    return std::nullopt;
  }
  if (std::find(filter_names_.begin(), filter_names_.end(), filter) == filter_names_.end()) {
    error(f->at, "no filter named '" + filter + "' (filters: " + join(filter_names_) + ")" +
                     did_you_mean(filter, filter_names_));
    return std::nullopt;
  }
  return PortRef{filter, port, f->at};
}

void Parser::parse_policy(const Field& f, StreamSpec& stream) {
  const std::optional<std::string> name = text(f);
  if (!name) return;
  const auto it = std::find(kPolicies.begin(), kPolicies.end(), *name);
  if (it == kPolicies.end()) {
    error(f.at, "unknown policy '" + *name + "'; use one of " + join(kPolicies) +
                    did_you_mean(*name, kPolicies));
    return;
  }
  stream.policy = static_cast<Policy>(it - kPolicies.begin());
}

// An output port feeds one stream and an input port is fed by one: a stream's buffers go
// to exactly one place, and end of work on an input means one upstream filter finished.
void Parser::check_ports() {
  std::map<std::string, const StreamSpec*> outputs;
  std::map<std::string, const StreamSpec*> inputs;
  for (const StreamSpec& s : t_.streams) {
    const auto [out, fresh_out] = outputs.emplace(s.from.str(), &s);
    if (!fresh_out) {
      error(s.from.mark, "output " + s.from.str() + " already feeds the stream at line " +
                             std::to_string(out->second->mark.line) + "; an output port feeds " +
                             "one stream, so give this one its own port (e.g. " + s.from.filter +
                             ".out2)");
    }
    const auto [in, fresh_in] = inputs.emplace(s.to.str(), &s);
    if (!fresh_in && s.to_client()) {
      error(s.to.mark, "a second stream to: client (the first is at line " + std::to_string(in->second->mark.line) +
                           "); the client reads one results stream, so merge the results in one filter first "
                           "(e.g. {from: a.out, to: merge.in} and {from: b.out, to: merge.in2}, then "
                           "{from: merge.out, to: client})");
    } else if (!fresh_in) {
      error(s.to.mark, "input " + s.to.str() + " is already fed by the stream at line " +
                           std::to_string(in->second->mark.line) + "; an input port is fed by " +
                           "one stream, so give this one its own port (e.g. " + s.to.filter +
                           ".in2)");
    }
  }
}

// Depth-first search from each filter in file order; a stream to a filter that is still on
// the current path closes a cycle, reported at that stream.
void Parser::check_acyclic() {
  std::map<std::string, std::vector<const StreamSpec*>> downstream;
  for (const StreamSpec& s : t_.streams) downstream[s.from.filter].push_back(&s);
  enum class State { kUnseen, kOnPath, kDone };
  std::map<std::string, State> state;
  std::vector<std::string> path;
  auto visit = [&](auto& self, const std::string& filter) -> void {
    state[filter] = State::kOnPath;
    path.push_back(filter);
    for (const StreamSpec* s : downstream[filter]) {
      const State next = state[s->to.filter];
      if (next == State::kUnseen) {
        self(self, s->to.filter);
      } else if (next == State::kOnPath) {
        const auto start = std::find(path.begin(), path.end(), s->to.filter);
        Names cycle(start, path.end());
        cycle.push_back(s->to.filter);
        error(s->mark, "streams form a cycle: " + join(cycle, " -> ") + "; sluice graphs are " +
                           "acyclic, so remove or redirect one of these streams");
      }
    }
    path.pop_back();
    state[filter] = State::kDone;
  };
  for (const std::string& filter : filter_names_) {
    if (state[filter] == State::kUnseen) visit(visit, filter);
  }
}

}  // namespace sluice::topo::internal
