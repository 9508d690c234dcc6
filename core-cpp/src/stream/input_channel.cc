#include "stream/input_channel.h"

#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "sync/asymmetric_barrier.h"

namespace sluice {

namespace detail {
void notify_reader(const WriteLane& lane) noexcept { static_cast<InputChannel*>(lane.reader)->notify_reader(); }
}  // namespace detail

bool InputChannel::fill_lane(detail::WriteLane& lane) noexcept {
  if (!single_producer_ || !detail::membarrier_ready.load(std::memory_order_relaxed)) return false;
  lane.cells = ring_.cells();
  lane.mask = ring_.capacity() - 1;
  lane.tail = &ring_.tail();
  lane.head = &ring_.head();
  static_assert(std::is_same_v<std::size_t, std::uint64_t>, "WriteLane's positions are the ring's");
  lane.free_until = &ring_.free_until();
  lane.reader_may_sleep = &not_empty_.may_sleep_flag();
  lane.reader = this;
  return true;
}

InputChannel::InputChannel(std::size_t depth, int upstream_copies, RunSignal& signal,
                           Waiter& room, std::string label, bool single_producer)
    : upstream_copies_(upstream_copies),
      label_(std::move(label)),
      single_producer_(single_producer),
      ring_(depth),
      not_empty_(signal),
      room_(room),
      marked_(static_cast<std::size_t>(upstream_copies), false) {}

void InputChannel::begin_unit() noexcept {
  marks_seen_ = 0;
  std::fill(marked_.begin(), marked_.end(), false);
}

void InputChannel::duplicate_mark(std::uint32_t producer) const {
  throw Error((label_.empty() ? std::string("an input") : "stream " + label_) + ": a second end of work from " +
              "producer copy " + std::to_string(producer) + " in one unit of work; the host that runs it sent "
              "a duplicate (a broken or hostile peer), so this unit's data cannot be trusted");
}

InputChannel::~InputChannel() {
  // Give back buffers nobody read (after an aborted run).
  Item item;
  bool landed = false;
  while (pop_next(item, &landed)) {
    if (!item.is_end_of_work()) detail::release_slot(item.slot);
  }
}

namespace {
std::size_t room_in(const MpmcRing<Item, detail::QueueCell>& ring) noexcept {
  const std::size_t used = ring.size_approx();
  return used >= ring.capacity() ? 0 : ring.capacity() - used;
}
}  // namespace

std::size_t InputChannel::free_room() const noexcept { return room_in(ring_); }

std::size_t InputChannel::landed_room() const noexcept { return landed_ ? room_in(*landed_) : 0; }

std::size_t InputChannel::queued() const noexcept {
  return capacity() - free_room() - landed_room();
}

void InputChannel::attach_landing(PopObserver* observer, std::size_t capacity) {
  landed_ = std::make_unique<Ring>(capacity);
  observer_ = observer;
}

bool InputChannel::pop_next(Item& item, bool* landed) noexcept {
  *landed = false;
  if (landed_ == nullptr) return pop_one(item);
  const bool first = landed_first_;
  landed_first_ = !landed_first_;
  for (const bool from_landed : {first, !first}) {
    if (from_landed ? landed_->try_pop_only(item) : pop_one(item)) {
      *landed = from_landed;
      return true;
    }
  }
  return false;
}

void InputChannel::report_landed(std::size_t count) noexcept {
  for (std::size_t i = 0; i < count; ++i) observer_->popped(*this, landed_taken_[i]);
}

std::optional<Buffer> InputChannel::pop(std::uint64_t* blocked_ns, WaitRecord* waiting) {
  not_empty_.throw_if_aborted();
  while (marks_seen_ < upstream_copies_) {
    Item item;
    if (stashed_) {  // taken by take_run, room already announced
      item = stash_;
      stashed_ = false;
    } else {
      // The consumer copy is the only thread that pops.
      bool landed = false;
      if (!pop_next(item, &landed)) {
        WaitRecord::Scope scope(waiting, "read", &label_);
        *blocked_ns += not_empty_.wait([&] { return pop_next(item, &landed); });
      }
      if (landed) {
        observer_->popped(*this, item.producer);
      } else {
        room_.notify();
      }
    }
    if (item.is_end_of_work()) {
      if (item.producer >= marked_.size() || marked_[item.producer]) duplicate_mark(item.producer);
      marked_[item.producer] = true;
      ++marks_seen_;
      continue;
    }
    return detail::BufferAccess::wrap(item.slot, item.size, item.key);
  }
  return std::nullopt;
}

std::size_t InputChannel::take_run(detail::TakenBuffer* out, std::size_t max) noexcept {
  if (stashed_ || not_empty_.aborted()) return 0;
  std::size_t n = 0;
  auto take = [&](const Item& item) noexcept {
    if (item.is_end_of_work()) {
      stash_ = item;
      stashed_ = true;
      return false;
    }
    out[n++] = detail::TakenBuffer{item.slot, item.slot->data, item.slot->capacity, item.size, item.key};
    return true;
  };
  auto take_local = [&] {
    const std::size_t popped =
        single_producer_ ? ring_.try_pop_run_only(max - n, take) : ring_.try_pop_run_single(max - n, take);
    if (popped != 0) room_.notify();
  };
  if (landed_ == nullptr) {
    take_local();
    return n;
  }
  // The landed lane's run: the observer hears of it (credit) once the lane has published
  // the room, so that held-back items it lands find it.
  std::size_t landed = 0;
  auto take_landed = [&] {
    // Every item the callback sees is popped, the mark it stops at included.
    landed_->try_pop_run_only(std::min(max - n, kLandedRun), [&](const Item& item) noexcept {
      landed_taken_[landed++] = item.producer;
      return take(item);
    });
  };
  const bool first = landed_first_;
  landed_first_ = !landed_first_;
  if (first) {
    take_landed();
    if (!stashed_ && n < max) take_local();
  } else {
    take_local();
    if (!stashed_ && n < max) take_landed();
  }
  report_landed(landed);
  return n;
}

std::uint64_t InputChannel::drain() {
  std::uint64_t discarded = 0;
  std::uint64_t ignored = 0;
  while (auto buffer = pop(&ignored)) ++discarded;
  return discarded;
}

}  // namespace sluice
