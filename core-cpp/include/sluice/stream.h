// InputStream and OutputStream: a filter copy's ends of the streams the topology connects.
//
// A Context owns its streams; references from Context::input()/output() stay valid for the
// life of the filter object (across units of work). Each stream object belongs to one filter
// copy and must only be used from that copy's init, process and finalize, never from a
// thread the filter starts: the runtime refuses such a use with sluice::Error where it can
// tell (a call that would wait, or takes the next batch off a queue), and names the copy
// if that error, uncaught on the filter's thread, ends the process. (The InputStream a
// program gets from Application's Unit::results() follows sluice/application.h instead: any
// one thread at a time, sluice::Error after stop().)
#ifndef SLUICE_STREAM_H_
#define SLUICE_STREAM_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "sluice/buffer.h"

namespace sluice {

class InputStream {
 public:
  InputStream() = default;
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;
  virtual ~InputStream() = default;

  // Blocks until a buffer arrives or the unit of work ends for this copy. Returns the
  // buffer (the caller owns it), or an empty optional at end of work: every upstream copy
  // returned from process and all its buffers were delivered. Once empty, read() keeps
  // returning empty until the next unit of work. Buffers from one upstream copy arrive in
  // the order it wrote them.
  // Throws sluice::Aborted when the run is being stopped.
  std::optional<Buffer> read() {
    // Inline, the common case: a buffer the runtime took off the queue with others that
    // were already there (a run of them at a time, so that a buffer costs a few
    // instructions here instead of a call into the runtime).
    if (taken_ != taken_end_ && !aborted_->load(std::memory_order_relaxed)) {
      const detail::TakenBuffer& t = *taken_++;
      return Buffer(t.slot, t.data, t.capacity, t.size, t.key);
    }
    return read_more();
  }

  // How many buffers read() will hand out next without waiting or calling into the runtime:
  // ones already taken off the queue for this copy. A lower bound: 0 does not mean that the
  // queue is empty. (The Java bridge uses it to return a batch of buffers in one call.)
  std::size_t available() const noexcept { return static_cast<std::size_t>(taken_end_ - taken_); }

  // The port name in the topology ("in", "left", ...).
  virtual const std::string& name() const = 0;

 protected:
  // What read() does when nothing is taken yet: waits, takes, or ends. Runtime use only.
  virtual std::optional<Buffer> read_more() = 0;

  // Runtime use only: [taken_, taken_end_) are buffers read() hands out before it calls
  // read_more(); the stream owns them until then. `aborted_` is the run's stop flag.
  const detail::TakenBuffer* taken_ = nullptr;
  const detail::TakenBuffer* taken_end_ = nullptr;
  const std::atomic<bool>* aborted_ = &kNeverAborted;

 private:
  static constexpr std::atomic<bool> kNeverAborted{false};
};

namespace detail {
// What a stream's queue between two copies in one process carries: a buffer's slot
// reference, or an end-of-work mark (slot null). Runtime use only.
struct QueueItem {
  Slot* slot = nullptr;  // owns one reference; nullptr marks end of work
  std::uint32_t size = 0;
  std::uint32_t producer = 0;  // the writing copy's index (for end-of-work accounting)
  std::uint64_t key = 0;

  bool is_end_of_work() const { return slot == nullptr; }
  static QueueItem end_of_work(std::uint32_t producer) { return QueueItem{nullptr, 0, producer, 0}; }
};

// One cell of that queue (a bounded ring, sync/mpmc_ring.h): `seq` says whose turn the cell
// is. Runtime use only.
struct QueueCell {
  std::atomic<std::uint64_t> seq;
  QueueItem value;
};

// What OutputStream::write needs to put a buffer straight into this copy's lane of the queue
// of the stream's only consumer copy (each lane has one producer): the runtime's (see
// stream/output_port.h), which keeps it alive while the stream is open. Runtime use only.
struct WriteLane {
  QueueCell* cells;
  std::uint64_t mask;                      // cells - 1 (a power of two)
  std::atomic<std::uint64_t>* tail;        // the next cell to fill
  // The consumer's next cell, read only when the room seen last is used up: the cells below
  // *free_until (the producer's own record) are free to fill. The consumer never writes a
  // cell back, and write() never reads one.
  const std::atomic<std::uint64_t>* head;
  std::uint64_t* free_until;
  const std::atomic<std::uint32_t>* reader_may_sleep;  // nonzero: call notify_reader
  void* reader;                            // for notify_reader
  std::atomic<std::uint64_t>* buffers;     // the port's counters
  std::atomic<std::uint64_t>* bytes;
  std::uint32_t producer;
  std::uint32_t max_size;                  // the stream's buffer_size
};
// Wakes the consumer copy that may sleep on an empty queue (lane.reader_may_sleep was set).
void notify_reader(const WriteLane& lane) noexcept;

// One cell of a pool's ring of free blocks (sync/mpmc_ring.h). Runtime use only.
struct FreeCell {
  std::atomic<std::uint64_t> seq;
  Slot* value;
};

// What OutputStream::allocate needs to take a free block itself, when this copy is the only
// one that takes from the stream's pool: the runtime's (buffer/buffer_pool.h), which keeps it
// alive as long as the stream, and points it at another of the pool's rings of free blocks
// (from this copy's allocate_more) when the one it names is empty. Runtime use only.
struct AllocateLane {
  FreeCell* cells;
  std::uint64_t mask;                // cells - 1 (a power of two)
  std::atomic<std::uint64_t>* head;  // the next cell to take
  const std::byte* slots;            // the pool's block records, kSlotBytes each
  std::byte* memory;                 // block i is at memory + i * stride
  std::size_t stride;
  std::uint32_t capacity;            // the stream's buffer_size
};
}  // namespace detail

class OutputStream {
 public:
  OutputStream() = default;
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;
  virtual ~OutputStream() = default;

  // Returns an empty buffer (size 0, key 0) of buffer_size() bytes capacity from the
  // stream's pool; the caller owns it. Blocks while the pool is empty: that is
  // backpressure from slower consumers. Throws sluice::Aborted when the run is stopping.
  Buffer allocate() {
    return allocate_or([this] { return allocate_more(); });
  }

  // As allocate(), but never waits: an empty optional while no block is free (every one is
  // queued, or held by a filter). For a copy that has something else to do meanwhile.
  // Throws sluice::Aborted when the run is stopping.
  std::optional<Buffer> try_allocate() {
    return allocate_or([this] { return try_allocate_more(); });
  }

  // Sends the buffer to a consumer copy chosen by the stream's policy, taking ownership.
  // Any valid buffer may be written (one from allocate() or one read from an input): the
  // payload is handed over, never copied. Blocks while the chosen copy's queue is full.
  // REQUIRES: buffer.valid() and buffer.size() <= buffer_size(); throws sluice::Error
  // otherwise. Throws sluice::Error when called after process() returned (end of work was
  // sent downstream: from finalize, say); init and process may write.
  void write(Buffer&& buffer) {
    // Inline, the common case: one consumer copy in this process, and room in this copy's
    // lane of its queue. The buffer's fields go into the lane's cell.
    if (const detail::WriteLane* lane = lane_;
        lane != nullptr && buffer.slot_ != nullptr && buffer.size_ <= lane->max_size &&
        !aborted_->load(std::memory_order_relaxed)) {
      const std::uint64_t pos = lane->tail->load(std::memory_order_relaxed);
      if (pos < *lane->free_until ||
          pos < (*lane->free_until = lane->head->load(std::memory_order_acquire) + lane->mask + 1)) {
        detail::QueueCell& cell = lane->cells[pos & lane->mask];
        const std::uint32_t size = buffer.size_;
        cell.value.slot = buffer.slot_;
        cell.value.size = size;
        cell.value.producer = lane->producer;
        cell.value.key = buffer.key_;
        cell.seq.store(pos + 1, std::memory_order_release);
        lane->tail->store(pos + 1, std::memory_order_relaxed);
        buffer.slot_ = nullptr;  // the queue holds the slot's reference now
        buffer.data_ = nullptr;
        buffer.capacity_ = buffer.size_ = 0;
        lane->buffers->store(lane->buffers->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        lane->bytes->store(lane->bytes->load(std::memory_order_relaxed) + size, std::memory_order_relaxed);
        // A lane exists only where membarrier(2) works, so the store above and the load
        // below need no fence here (sync/asymmetric_barrier.h): only the compiler's order.
        std::atomic_signal_fence(std::memory_order_seq_cst);
        if (lane->reader_may_sleep->load(std::memory_order_relaxed) != 0) detail::notify_reader(*lane);
        return;
      }
    }
    write_more(std::move(buffer));
  }

  // The stream's buffer size in bytes (topology `buffer_size`).
  virtual std::size_t buffer_size() const = 0;

  // The port name in the topology ("out", ...).
  virtual const std::string& name() const = 0;

 private:
  // The common case of allocate() and try_allocate(), inline: this copy alone takes from the
  // pool, and a block is free. Otherwise (no lane, an aborted run, an empty ring) returns
  // what `otherwise` does: the runtime's allocate_more or try_allocate_more.
  template <typename Otherwise>
  auto allocate_or(Otherwise&& otherwise) -> decltype(otherwise()) {
    if (const detail::AllocateLane* lane = alloc_lane_;
        lane != nullptr && !aborted_->load(std::memory_order_relaxed)) {
      const std::uint64_t pos = lane->head->load(std::memory_order_relaxed);
      detail::FreeCell& cell = lane->cells[pos & lane->mask];
      if (cell.seq.load(std::memory_order_acquire) == pos + 1) {
        detail::Slot* slot = cell.value;
        cell.seq.store(pos + lane->mask + 1, std::memory_order_release);
        lane->head->store(pos + 1, std::memory_order_relaxed);
        const auto index =
            static_cast<std::size_t>(reinterpret_cast<const std::byte*>(slot) - lane->slots) / detail::kSlotBytes;
        return Buffer(slot, lane->memory + index * lane->stride, lane->capacity, 0, 0);
      }
    }
    return otherwise();
  }

 protected:
  // What allocate() does when it cannot take a block inline: waits, or throws on abort.
  // Runtime use only.
  virtual Buffer allocate_more() = 0;
  // What write() does when it cannot put the buffer into a queue inline: checks, policies,
  // waits. Runtime use only.
  virtual void write_more(Buffer&& buffer) = 0;
  // What try_allocate() does when it cannot take a block inline: looks in the pool's other
  // rings, or throws on abort; never waits. Runtime use only. (After the others: a new
  // virtual function changes the layout filter code compiles in, so SLUICE_FILTER_ABI
  // changed with it.)
  virtual std::optional<Buffer> try_allocate_more() = 0;

  // Runtime use only: the inline paths, when the stream has them (else null): allocate's
  // always, write's while the stream is open; and the run's stop flag.
  const detail::AllocateLane* alloc_lane_ = nullptr;
  const detail::WriteLane* lane_ = nullptr;
  const std::atomic<bool>* aborted_ = &kNeverAborted;

 private:
  static constexpr std::atomic<bool> kNeverAborted{false};
};

}  // namespace sluice

#endif  // SLUICE_STREAM_H_
