// OutputPort: a producer copy's end of one stream; applies the stream's policy.
//
// Owns nothing but its counters: the pool and the endpoints belong to the stream (see
// runtime/graph.h) and outlive it. Used only from its copy's thread (whichever worker runs
// the copy's task); its slow paths refuse another (see stream/owner_check.h).
#ifndef SLUICE_STREAM_OUTPUT_PORT_H_
#define SLUICE_STREAM_OUTPUT_PORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "buffer/buffer_pool.h"
#include "sluice/stream.h"
#include "stream/endpoint.h"
#include "stream/input_channel.h"
#include "stream/owner_check.h"
#include "stream/port_counters.h"
#include "stream/wait_record.h"
#include "topology/topology.h"

namespace sluice {

class OutputPort final : public OutputStream {
 public:
  // endpoints: one per consumer copy, in copy order. room: the stream's Waiter that
  // endpoints notify when they gain room. producer: this copy's index. waiting: the copy's
  // WaitRecord (may be null), which outlives the port. owner: the copy's crash record (may
  // be null: no check), current on whatever thread runs the copy, which outlives the port.
  OutputPort(std::string name, std::string stream_label, topo::Policy policy, BufferPool& pool,
             std::vector<Endpoint*> endpoints, Waiter& room, std::uint32_t producer,
             WaitRecord* waiting = nullptr, const crash::CopyRecord* owner = nullptr);

  std::size_t buffer_size() const override { return pool_.buffer_size(); }
  const std::string& name() const override { return name_; }
  const std::string& stream_label() const { return stream_label_; }
  // Whether the filter asked for this port (Context::output), for the runtime's warning about
  // a connected output no copy names. Its copy's thread only.
  void note_asked() { asked_ = true; }
  bool asked() const { return asked_; }

  // Writes are allowed between open() and close(); close() sends end of work to every
  // consumer copy (blocking while their queues are full).
  void open() noexcept {
    open_ = true;
    if (writes_inline()) lane_ = &write_lane_;
  }
  void close();

  const PortCounters& counters() const { return counters_; }
  // How long this copy has been waiting on this port right now (for room, or a free
  // buffer), by the clock of Waiter::coarse_now_ns; 0 when it is not. counters().blocked_ns
  // counts a wait once it is over.
  std::uint64_t waiting_ns(std::uint64_t now_ns) const noexcept;
  // True when write() can put buffers into the consumer's queue inline (one consumer copy,
  // in this process, where this copy has a lane of its own, and membarrier(2)).
  bool writes_inline() const noexcept { return write_lane_.cells != nullptr; }
  // True when allocate() takes free blocks inline (this copy is its pool's only acquirer).
  bool allocates_inline() const noexcept { return alloc_lane_ != nullptr; }

  // The consumer copy a by_key stream sends `key` to, out of `copies`. Stable across
  // runs and hosts (the daemons rely on this).
  static std::size_t key_to_copy(std::uint64_t key, std::size_t copies) noexcept;

 private:
  Buffer allocate_more() override;
  std::optional<Buffer> try_allocate_more() override;
  void write_more(Buffer&& buffer) override;
  // write() when the fast path could not take the buffer: policies, waits for room.
  void write_waiting(const Item& item);
  void push_blocking(Endpoint& endpoint, const Item& item);
  void push_demand_driven(const Item& item);
  [[noreturn]] void throw_bad_write(const Buffer& buffer) const;

  const std::string name_;
  const std::string stream_label_;  // "a.out -> b.in", for messages
  bool asked_ = false;
  const topo::Policy policy_;
  BufferPool& pool_;
  const std::vector<Endpoint*> endpoints_;
  Waiter& room_;
  const std::uint32_t producer_;
  WaitRecord* const waiting_;
  const OwnerCheck owner_;
  // The only consumer copy's queue, when it is in this process and the stream is not
  // broadcast: write() pushes there directly.
  InputChannel* const only_local_;
  // For by_key and round_robin over several copies: each copy's queue when it is in this
  // process (else null), which write_more pushes into directly when it has room.
  const std::vector<InputChannel*> local_;
  std::size_t next_ = 0;  // round_robin position; demand_driven tie-break start
  bool open_ = false;
  PortCounters counters_;
  // The inline write path into only_local_, when it has one (cells set; OutputStream::lane_
  // points here while the port is open).
  detail::WriteLane write_lane_{};
};

}  // namespace sluice

#endif  // SLUICE_STREAM_OUTPUT_PORT_H_
