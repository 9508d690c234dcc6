// InputPort: a consumer copy's end of one stream, reading from its InputChannel.
//
// It takes buffers off the channel a run at a time (those already queued, up to kRun),
// and InputStream::read() hands them out inline; the port owns the ones not yet read.
// Its counters count a run's buffers as read once the run is over (read() cannot count
// inline); until then the run is `in_hand`, which the stream's stats show as queued.
// Used only from its copy's thread (begin_unit and drain too); read_more refuses another
// (see stream/owner_check.h).
#ifndef SLUICE_STREAM_INPUT_PORT_H_
#define SLUICE_STREAM_INPUT_PORT_H_

#include <algorithm>
#include <array>
#include <string>

#include "sluice/stream.h"
#include "stream/input_channel.h"
#include "stream/owner_check.h"
#include "stream/port_counters.h"

namespace sluice {

class InputPort final : public InputStream {
 public:
  // The channel belongs to the stream and outlives the port; `waiting` (the copy's, may
  // be null) outlives it too. `read_ahead` false: take one buffer at a time, for a
  // demand_driven stream, whose writers send to the copy with the most free room (taking a
  // run would empty a slow copy's queue into its port and draw more work to it). owner: the
  // copy's crash record (may be null: no check; the client's end has none), which outlives it.
  InputPort(std::string name, InputChannel& channel, WaitRecord* waiting = nullptr, bool read_ahead = true,
            const crash::CopyRecord* owner = nullptr)
      : name_(std::move(name)),
        channel_(channel),
        waiting_(waiting),
        owner_(owner, "input '" + name_ + "' (" + channel.label() + ")"),
        run_size_(read_ahead ? kRun : 1) {
    aborted_ = &channel_.aborted_flag();
  }
  ~InputPort() override { end_run(); }

  const std::string& name() const override { return name_; }

  // Starts a unit of work on the channel (see InputChannel::begin_unit); buffers still
  // taken from an aborted one go back to their pool.
  void begin_unit() noexcept {
    end_run();
    channel_.begin_unit();
  }
  // Discards what is left of the unit of work, taken or queued; returns how many buffers.
  std::uint64_t drain() { return end_run() + channel_.drain(); }

  InputChannel& channel() { return channel_; }
  const PortCounters& counters() const { return counters_; }
  // How long this copy has been waiting for data on this port right now, by the clock of
  // Waiter::coarse_now_ns; 0 when it is not. counters().blocked_ns counts a wait once it
  // is over.
  std::uint64_t waiting_ns(std::uint64_t now_ns) const noexcept {
    return waiting_ != nullptr ? waiting_->waiting_on(&channel_.label(), now_ns) : 0;
  }
  // The most buffers a run takes (no more than the queue's lanes hold): what the port may
  // hold beside its queue.
  std::size_t run_size() const { return std::min(run_size_, channel_.capacity()); }

  // Up to this many buffers taken per run: enough to make a call per run cheap beside the
  // buffers, few enough that the producer soon sees the room (it is announced per run).
  static constexpr std::size_t kRun = 32;

 private:
  std::optional<Buffer> read_more() override;
  // Ends the current run: counts the buffers read() handed out, gives back the ones not
  // read yet; returns how many it gave back.
  std::uint64_t end_run() noexcept;

  const std::string name_;
  InputChannel& channel_;
  WaitRecord* const waiting_;
  const OwnerCheck owner_;
  PortCounters counters_;
  const std::size_t run_size_;  // kRun, or 1 (no read-ahead)
  std::array<detail::TakenBuffer, kRun> run_;
  std::size_t run_length_ = 0;  // buffers in run_ (read or not), 0 between runs
};

}  // namespace sluice

#endif  // SLUICE_STREAM_INPUT_PORT_H_
