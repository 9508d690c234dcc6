#include "runtime/context_impl.h"

#include <algorithm>

#include "topology/suggest.h"

namespace sluice {

ContextImpl::ContextImpl(const topo::FilterSpec& spec, int copy_index, std::string host,
                         std::string topology_dir)
    : spec_(spec),
      copy_index_(copy_index),
      host_(std::move(host)),
      topology_dir_(std::move(topology_dir)),
      logger_(spec.name + "#" + std::to_string(copy_index) + "@" + host_) {}

void ContextImpl::begin_unit(std::uint64_t index, const std::string& work) {
  work_index_ = index;
  work_ = work;
  for (auto& input : inputs_) input->begin_unit();
  for (auto& output : outputs_) output->open();
}

void ContextImpl::end_process() {
  for (auto& output : outputs_) output->close();
  for (auto& input : inputs_) {
    std::uint64_t discarded = input->drain();
    if (discarded != 0) {
      logger_.warn("process returned with " + std::to_string(discarded) +
                   " unread buffer(s) on input '" + input->name() + "'; they were discarded");
    }
  }
}

template <typename Port>
void ContextImpl::throw_unconnected(const char* kind, std::string_view port,
                                    const std::vector<std::unique_ptr<Port>>& ports) const {
  std::vector<std::string> names;
  for (const auto& p : ports) names.push_back(p->name());
  std::string message = "filter '" + spec_.name + "' (copy " + std::to_string(copy_index_) +
                        ") asked for " + kind + " port '" + std::string(port) +
                        "', which no stream in the topology connects; ";
  std::string near = topo::closest_match(port, names);
  if (!near.empty()) {
    // The typo may be in either place: the code's name or the topology's.
    const std::string asked = spec_.name + "." + std::string(port);
    message += "the topology connects '" + spec_.name + "." + near + "' instead: write " + asked +
               " in the topology's stream, or ask for '" + near + "' in the filter's code; ";
  }
  message += names.empty() ? std::string("it has no ") + kind + " ports: add a stream to or from '" +
                                 spec_.name + "." + std::string(port) + "'"
                           : std::string("its connected ") + kind + " ports are: " + topo::join(names);
  throw Error(message);
}

namespace {
// The port named `name`, or nullptr.
template <typename Port>
Port* find_port(const std::vector<std::unique_ptr<Port>>& ports, std::string_view name) {
  for (const auto& port : ports) {
    if (port->name() == name) return port.get();
  }
  return nullptr;
}
}  // namespace

InputStream& ContextImpl::input(std::string_view port) {
  if (InputPort* found = find_port(inputs_, port)) return *found;
  if (find_port(outputs_, port) != nullptr) throw_swapped(/*asked_input=*/true, port);
  throw_unconnected("input", port, inputs_);
}

OutputStream& ContextImpl::output(std::string_view port) {
  if (OutputPort* found = find_port(outputs_, port)) {
    found->note_asked();
    return *found;
  }
  if (find_port(inputs_, port) != nullptr) throw_swapped(/*asked_input=*/false, port);
  throw_unconnected("output", port, outputs_);
}

void ContextImpl::throw_swapped(bool asked_input, std::string_view port) const {
  throw Error("filter '" + spec_.name + "' (copy " + std::to_string(copy_index_) + ") asked for " +
              (asked_input ? "input" : "output") + " port '" + std::string(port) + "', but the topology has '" +
              spec_.name + "." + std::string(port) + "' as the " +
              (asked_input ? "from: end of a stream (an output)" : "to: end of a stream (an input)") +
              "; did you swap from: and to:? A stream goes from: PRODUCER.port to: CONSUMER.port");
}

bool ContextImpl::has_input(std::string_view port) const { return find_port(inputs_, port) != nullptr; }

bool ContextImpl::has_output(std::string_view port) const { return find_port(outputs_, port) != nullptr; }

const std::string* ContextImpl::find_arg(std::string_view key) const {
  if (std::find(args_asked_.begin(), args_asked_.end(), key) == args_asked_.end()) args_asked_.emplace_back(key);
  auto found = spec_.args.find(std::string(key));
  return found == spec_.args.end() ? nullptr : &found->second;
}

std::string unread_arg_message(const topo::FilterSpec& spec, const std::string& key,
                               const std::vector<std::string>& asked) {
  std::string message = "args." + key + " (from the topology) was never read by " + spec.class_name;
  const std::string near = topo::closest_match(key, asked);
  if (!near.empty()) return message + "; did you mean '" + near + "'? (its copies asked for " + topo::join(asked) + ")";
  if (!asked.empty()) return message + " (its copies asked for " + topo::join(asked) + ")";
  return message + " (its copies asked for no argument)";
}

std::vector<std::string> ContextImpl::asked_outputs() const {
  std::vector<std::string> names;
  for (const auto& port : outputs_) {
    if (port->asked()) names.push_back(port->name());
  }
  return names;
}

}  // namespace sluice
