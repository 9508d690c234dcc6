// InputPort: a consumer copy's end of one stream, reading from its InputChannel.
#ifndef SLUICE_STREAM_INPUT_PORT_H_
#define SLUICE_STREAM_INPUT_PORT_H_

#include <string>

#include "sluice/stream.h"
#include "stream/input_channel.h"
#include "stream/port_counters.h"

namespace sluice {

class InputPort final : public InputStream {
 public:
  // The channel belongs to the stream and outlives the port; `waiting` (the copy's, may
  // be null) outlives it too.
  InputPort(std::string name, InputChannel& channel, WaitRecord* waiting = nullptr)
      : name_(std::move(name)), channel_(channel), waiting_(waiting) {}

  std::optional<Buffer> read() override {
    Item item;
    if (channel_.try_pop_buffer(item)) {  // a buffer was there: no wait, no mark
      counters_.buffers.add(1);
      counters_.bytes.add(item.size);
      return detail::BufferAccess::wrap(item.slot, item.size, item.key);
    }
    std::uint64_t blocked = 0;
    std::optional<Buffer> buffer = channel_.pop(&blocked, waiting_);
    if (blocked != 0) counters_.blocked_ns.add(blocked);
    if (buffer) {
      counters_.buffers.add(1);
      counters_.bytes.add(buffer->size());
    }
    return buffer;
  }
  const std::string& name() const override { return name_; }

  InputChannel& channel() { return channel_; }
  const PortCounters& counters() const { return counters_; }

 private:
  const std::string name_;
  InputChannel& channel_;
  WaitRecord* const waiting_;
  PortCounters counters_;
};

}  // namespace sluice

#endif  // SLUICE_STREAM_INPUT_PORT_H_
