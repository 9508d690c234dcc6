// ContextImpl: the runtime's Context for one filter copy; owns the copy's ports.
#ifndef SLUICE_RUNTIME_CONTEXT_IMPL_H_
#define SLUICE_RUNTIME_CONTEXT_IMPL_H_

#include <memory>
#include <string>
#include <vector>

#include "sluice/context.h"
#include "stream/input_port.h"
#include "stream/output_port.h"
#include "topology/topology.h"

namespace sluice {

class ContextImpl final : public Context {
 public:
  // `spec` must outlive the context (the Engine keeps the topology).
  ContextImpl(const topo::FilterSpec& spec, int copy_index, std::string host,
              std::string topology_dir);

  void add_input(std::unique_ptr<InputPort> port) { inputs_.push_back(std::move(port)); }
  void add_output(std::unique_ptr<OutputPort> port) { outputs_.push_back(std::move(port)); }

  // Starts a unit of work: resets end-of-work counting, opens outputs.
  void begin_unit(std::uint64_t index, const std::string& work);
  // After process: sends end of work on every output, then discards what inputs still
  // hold until their upstreams end (warning when anything was left unread).
  void end_process();

  InputStream& input(std::string_view port) override;
  OutputStream& output(std::string_view port) override;
  bool has_input(std::string_view port) const override;
  bool has_output(std::string_view port) const override;
  const std::string& work() const override { return work_; }
  std::uint64_t work_index() const override { return work_index_; }
  int copy_index() const override { return copy_index_; }
  int copy_count() const override { return spec_.copies; }
  const std::string& filter_name() const override { return spec_.name; }
  const std::string& host() const override { return host_; }
  const Logger& log() const override { return logger_; }
  const std::string& topology_dir() const override { return topology_dir_; }
  const std::string* find_arg(std::string_view key) const override;
  // The argument keys the filter asked for so far (present or not). Read it while the copy
  // runs no unit.
  const std::vector<std::string>& asked_args() const { return args_asked_; }
  // The output ports the filter asked for so far (output(port)); the same.
  std::vector<std::string> asked_outputs() const;

  const std::vector<std::unique_ptr<InputPort>>& inputs() const { return inputs_; }
  const std::vector<std::unique_ptr<OutputPort>>& outputs() const { return outputs_; }

 private:
  template <typename Port>
  [[noreturn]] void throw_unconnected(const char* kind, std::string_view port,
                                      const std::vector<std::unique_ptr<Port>>& ports) const;
  // `port` is connected, but at the stream's other end: from: and to: swapped in the topology.
  [[noreturn]] void throw_swapped(bool asked_input, std::string_view port) const;

  const topo::FilterSpec& spec_;
  const int copy_index_;
  const std::string host_;
  const std::string topology_dir_;
  const Logger logger_;
  std::vector<std::unique_ptr<InputPort>> inputs_;
  std::vector<std::unique_ptr<OutputPort>> outputs_;
  std::string work_;
  std::uint64_t work_index_ = 0;
  // The argument keys the filter asked for (find_arg), present or not; the copy's thread only.
  mutable std::vector<std::string> args_asked_;
};

// "args.factr (from the topology) was never read by Scale; did you mean 'factor'? (its copies
// asked for factor)": for a key of `spec`'s args that none of its copies asked for (`asked`).
std::string unread_arg_message(const topo::FilterSpec& spec, const std::string& key,
                               const std::vector<std::string>& asked);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_CONTEXT_IMPL_H_
