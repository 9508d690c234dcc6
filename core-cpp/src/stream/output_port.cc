#include "stream/output_port.h"

#include <optional>
#include <string>

namespace sluice {

namespace {

// Each endpoint's queue when it is in this process, else null; empty when there are fewer
// than two endpoints (only_local_'s case) or none is in this process.
std::vector<InputChannel*> local_channels(const std::vector<Endpoint*>& endpoints) {
  std::vector<InputChannel*> out;
  bool any = false;
  for (Endpoint* endpoint : endpoints) {
    out.push_back(dynamic_cast<InputChannel*>(endpoint));
    any = any || out.back() != nullptr;
  }
  if (endpoints.size() < 2 || !any) out.clear();
  return out;
}

}  // namespace

OutputPort::OutputPort(std::string name, std::string stream_label, topo::Policy policy,
                       BufferPool& pool, std::vector<Endpoint*> endpoints, Waiter& room,
                       std::uint32_t producer, WaitRecord* waiting, const crash::CopyRecord* owner)
    : name_(std::move(name)),
      stream_label_(std::move(stream_label)),
      policy_(policy),
      pool_(pool),
      endpoints_(std::move(endpoints)),
      room_(room),
      producer_(producer),
      waiting_(waiting),
      owner_(owner, "output '" + name_ + "' (" + stream_label_ + ")"),
      only_local_(endpoints_.size() == 1 && policy != topo::Policy::kBroadcast
                      ? dynamic_cast<InputChannel*>(endpoints_[0])
                      : nullptr),
      local_(policy == topo::Policy::kByKey || policy == topo::Policy::kRoundRobin ? local_channels(endpoints_)
                                                                                   : std::vector<InputChannel*>{}),
      // Start round robin at a different copy per producer so that N producers writing
      // one buffer each do not all pick consumer copy 0.
      next_(endpoints_.empty() ? 0 : producer % endpoints_.size()) {
  OutputStream::aborted_ = &room_.signal().aborted_flag();
  for (Endpoint* endpoint : endpoints_) {
    auto* channel = dynamic_cast<InputChannel*>(endpoint);
    if (channel != nullptr && !channel->has_lane(producer_)) {
      throw Error("stream " + stream_label_ + ": producer copy " + std::to_string(producer_) +
                  " has no lane in a consumer copy's queue in this process (an internal error: the "
                  "stream's queues were made for other producer copies than the ones that run here)");
    }
  }
  alloc_lane_ = pool_.allocate_lane();
  if (only_local_ != nullptr && only_local_->fill_lane(write_lane_, producer_)) {
    write_lane_.buffers = counters_.buffers.raw();
    write_lane_.bytes = counters_.bytes.raw();
    write_lane_.producer = producer_;
    write_lane_.max_size = static_cast<std::uint32_t>(pool_.buffer_size());
  }
}

__extension__ using Wide = unsigned __int128;  // GCC and Clang both have it

std::size_t OutputPort::key_to_copy(std::uint64_t key, std::size_t copies) noexcept {
  // splitmix64 finaliser: neighbouring keys (1, 2, 3...) spread evenly over the copies.
  key ^= key >> 30;
  key *= 0xbf58476d1ce4e5b9ULL;
  key ^= key >> 27;
  key *= 0x94d049bb133111ebULL;
  key ^= key >> 31;
  // The hash scaled onto [0, copies) by a multiply (Lemire's reduction) instead of a
  // 64-bit division, ~13 ns a buffer at 100 B.
  return static_cast<std::size_t>((static_cast<Wide>(key) * copies) >> 64);
}

Buffer OutputPort::allocate_more() {
  room_.throw_if_aborted();  // after an abort every allocate throws, even one that would not wait
  if (std::optional<Buffer> free = pool_.try_acquire()) return std::move(*free);
  owner_.check();  // before a wait, which only the copy's own thread may do
  std::uint64_t blocked = 0;
  std::optional<Buffer> buffer;
  counting_aborted_wait(counters_.blocked_ns, [&] {
    WaitRecord::Scope scope(waiting_, "allocate", &stream_label_);
    buffer.emplace(pool_.acquire(&blocked));
  });
  // Counted once the wait is no longer marked: a snapshot never counts it twice (waiting_ns).
  if (blocked != 0) counters_.blocked_ns.add(blocked);
  return std::move(*buffer);
}

std::uint64_t OutputPort::waiting_ns(std::uint64_t now_ns) const noexcept {
  return waiting_ != nullptr ? waiting_->waiting_on(&stream_label_, now_ns) : 0;
}

std::optional<Buffer> OutputPort::try_allocate_more() {
  room_.throw_if_aborted();
  return pool_.try_acquire();
}

void OutputPort::throw_bad_write(const Buffer& buffer) const {
  if (!open_) {
    throw Error("write to output '" + name_ + "' outside init/process: end of work was already "
                "sent on " + stream_label_ + "; write before process returns");
  }
  if (!buffer.valid()) {
    throw Error("write of an invalid (moved-from or reset) buffer to output '" + name_ +
                "'; allocate() a new one or write the one read() returned");
  }
  throw Error("write of a " + std::to_string(buffer.size()) + "-byte buffer to output '" + name_ +
              "' (" + stream_label_ + ") whose buffer_size is " + std::to_string(buffer_size()) +
              " bytes; raise the stream's buffer_size or split the data");
}

void OutputPort::push_blocking(Endpoint& endpoint, const Item& item) {
  if (endpoint.try_push(item)) return;
  std::uint64_t blocked = 0;
  counting_aborted_wait(counters_.blocked_ns, [&] {
    WaitRecord::Scope scope(waiting_, "write", &stream_label_);
    blocked = room_.wait([&] { return endpoint.try_push(item); });
  });
  counters_.blocked_ns.add(blocked);
}

void OutputPort::push_demand_driven(const Item& item) {
  // The copy with the most free room; ties go to the next in turn, so equal consumers
  // share the work. When all are full, wait until any has room.
  auto try_best = [&]() noexcept {
    const std::size_t n = endpoints_.size();
    std::size_t best = next_;
    std::size_t best_room = 0;
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t candidate = (next_ + i) % n;
      std::size_t room = endpoints_[candidate]->free_room(producer_);
      if (room > best_room) {
        best = candidate;
        best_room = room;
      }
    }
    if (best_room == 0 || !endpoints_[best]->try_push(item)) return false;
    next_ = (best + 1) % n;
    return true;
  };
  if (try_best()) return;
  std::uint64_t blocked = 0;
  counting_aborted_wait(counters_.blocked_ns, [&] {
    WaitRecord::Scope scope(waiting_, "write", &stream_label_);
    blocked = room_.wait(try_best);
  });
  counters_.blocked_ns.add(blocked);
}

void OutputPort::write_more(Buffer&& buffer) {
  room_.throw_if_aborted();
  if (!open_ || !buffer.valid() || buffer.size() > pool_.buffer_size()) throw_bad_write(buffer);
  const std::uint32_t size = detail::BufferAccess::size(buffer);
  const std::uint64_t key = buffer.key();
  detail::Slot* slot = detail::BufferAccess::unwrap(buffer);
  // The common case, room at once in a queue in this process: the only consumer copy's, or
  // the one by_key or round_robin picks (write_waiting picks the same copy when it has no
  // room). The fields go from registers into the queue.
  InputChannel* queue = only_local_;
  if (queue == nullptr && !local_.empty()) {
    queue = local_[policy_ == topo::Policy::kByKey ? key_to_copy(key, local_.size()) : next_];
  }
  if (queue != nullptr && queue->try_push_buffer(slot, size, producer_, key)) {
    if (queue != only_local_ && policy_ == topo::Policy::kRoundRobin) {
      next_ = next_ + 1 == local_.size() ? 0 : next_ + 1;
    }
    counters_.buffers.add(1);
    counters_.bytes.add(size);
    return;
  }
  write_waiting(Item{slot, size, producer_, key});
}

void OutputPort::write_waiting(const Item& item) {
  try {
    owner_.check();  // the path of every write that is not inline, and of each wait
  } catch (...) {
    detail::release_slot(item.slot);
    throw;
  }
  const std::size_t n = endpoints_.size();
  if (policy_ == topo::Policy::kBroadcast) {
    // One payload, n holders: each consumer copy releases its own reference.
    if (n > 1) item.slot->refs.fetch_add(static_cast<std::uint32_t>(n - 1), std::memory_order_relaxed);
    for (std::size_t i = 0; i < n; ++i) {
      try {
        push_blocking(*endpoints_[i], item);
      } catch (...) {
        for (std::size_t j = i; j < n; ++j) detail::release_slot(item.slot);
        throw;
      }
    }
  } else {
    try {
      switch (policy_) {
        case topo::Policy::kRoundRobin: {
          Endpoint& endpoint = *endpoints_[next_];
          next_ = next_ + 1 == n ? 0 : next_ + 1;
          push_blocking(endpoint, item);
          break;
        }
        case topo::Policy::kByKey:
          push_blocking(*endpoints_[key_to_copy(item.key, n)], item);
          break;
        default:
          push_demand_driven(item);
          break;
      }
    } catch (...) {
      detail::release_slot(item.slot);  // aborted while waiting: the buffer goes home
      throw;
    }
  }
  counters_.buffers.add(1);
  counters_.bytes.add(item.size);
}

void OutputPort::close() {
  if (!open_) return;
  open_ = false;
  lane_ = nullptr;
  const Item mark = Item::end_of_work(producer_);
  for (Endpoint* endpoint : endpoints_) push_blocking(*endpoint, mark);
}

}  // namespace sluice
