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

InputChannel::Run InputChannel::take_run(detail::QueueCell* copies, std::size_t max) noexcept {
  if (stashed_ || not_empty_.aborted() || max == 0) return {};
  // The local lane's run stays in its cells, and stops before an end-of-work mark, which
  // pop() takes. It takes no more than a quarter of the queue, so that a producer on
  // another core finds room to go on while the run is read.
  auto take_local = [&]() -> Run {
    const std::size_t most = std::min(max, std::max<std::size_t>(1, ring_.capacity() / 4));
    // read() makes each Buffer from its block's record: asked for now, all the run's records
    // are on their way at once, not one after the other as they are read.
    const std::size_t n = ring_.peek_run(most, [](const Item& item) noexcept {
      if (item.is_end_of_work()) return false;
      __builtin_prefetch(item.slot);
      return true;
    });
    if (n == 0) return {};
    local_run_ = n;
    return Run{ring_.head_cell(), n, true};
  };
  if (landed_ == nullptr) return take_local();
  // The landed lane's run is copied out: the observer hears of it (credit) once the lane
  // has published the room, so that held-back items it lands find it.
  auto take_landed = [&]() -> Run {
    std::size_t n = 0, landed = 0;
    // Every item the callback sees is popped, the mark it stops at included.
    landed_->try_pop_run_only(std::min(max, kLandedRun), [&](const Item& item) noexcept {
      landed_taken_[landed++] = item.producer;
      if (item.is_end_of_work()) {
        stash_ = item;
        stashed_ = true;
        return false;
      }
      copies[n++].value = item;
      return true;
    });
    report_landed(landed);
    return Run{copies, n, false};
  };
  // One lane a run, the other first next time.
  const bool first = landed_first_;
  landed_first_ = !landed_first_;
  Run run = first ? take_landed() : take_local();
  if (run.count == 0 && !stashed_) run = first ? take_local() : take_landed();
  return run;
}

void InputChannel::end_run() noexcept {
  if (local_run_ == 0) return;
  if (single_producer_) {
    ring_.release_run_only(local_run_);
  } else {
    ring_.release_run_single(local_run_);
  }
  local_run_ = 0;
  room_.notify();
}

std::uint64_t InputChannel::drain() {
  std::uint64_t discarded = 0;
  std::uint64_t ignored = 0;
  while (auto buffer = pop(&ignored)) ++discarded;
  return discarded;
}

}  // namespace sluice
