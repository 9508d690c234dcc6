#include "stream/input_channel.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sluice/error.h"

#include "sync/asymmetric_barrier.h"

namespace sluice {

namespace detail {
void notify_reader(const WriteLane& lane) noexcept { static_cast<InputChannel*>(lane.reader)->notify_reader(); }
}  // namespace detail

bool InputChannel::fill_lane(detail::WriteLane& lane, std::uint32_t producer) noexcept {
  if (!detail::membarrier_ready.load(std::memory_order_relaxed)) return false;
  Ring& ring = *lane_of_[producer];
  lane.cells = ring.cells();
  lane.mask = ring.capacity() - 1;
  lane.tail = &ring.tail();
  lane.head = &ring.head();
  static_assert(std::is_same_v<std::size_t, std::uint64_t>, "WriteLane's positions are the ring's");
  lane.free_until = &ring.free_until();
  lane.reader_may_sleep = &not_empty_.may_sleep_flag();
  lane.reader = this;
  return true;
}

namespace {
// Every upstream copy, 0 to copies - 1: all of them run in this process.
std::vector<std::uint32_t> every_copy(int copies) {
  std::vector<std::uint32_t> all(static_cast<std::size_t>(copies));
  for (std::size_t p = 0; p < all.size(); ++p) all[p] = static_cast<std::uint32_t>(p);
  return all;
}
}  // namespace

InputChannel::InputChannel(std::size_t depth, int upstream_copies, RunSignal& signal, Waiter& room,
                           std::string label, std::optional<std::vector<std::uint32_t>> local_producers)
    : upstream_copies_(upstream_copies),
      label_(std::move(label)),
      lane_of_(static_cast<std::size_t>(upstream_copies), nullptr),
      not_empty_(signal),
      room_(room),
      marked_(static_cast<std::size_t>(upstream_copies), false) {
  const std::vector<std::uint32_t> local = local_producers ? std::move(*local_producers) : every_copy(upstream_copies);
  if (local.empty()) return;
  // depth split between the lanes, so that the channel holds about as much as one shared
  // queue did and a wide stream's cells do not grow with its producer copies.
  const std::size_t per_lane = (std::max<std::size_t>(depth, 1) + local.size() - 1) / local.size();
  for (const std::uint32_t producer : local) {
    if (producer >= lane_of_.size() || lane_of_[producer] != nullptr) {
      throw Error("stream " + label_ + ": local producer copy " + std::to_string(producer) +
                  " is out of range or listed twice (an internal error)");
    }
    lanes_.push_back(std::make_unique<Ring>(per_lane));
    lane_of_[producer] = lanes_.back().get();
    depth_ += lanes_.back()->capacity();
  }
  if (lanes_.size() == 1) only_ = lanes_[0].get();
  turns_ = lanes_.size();
}

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

std::size_t InputChannel::free_room(std::uint32_t producer) const noexcept {
  const Ring* lane = producer < lane_of_.size() ? lane_of_[producer] : nullptr;
  return lane != nullptr ? room_in(*lane) : 0;
}

std::size_t InputChannel::free_room() const noexcept {
  std::size_t room = 0;
  for (const auto& lane : lanes_) room += room_in(*lane);
  return room;
}

std::size_t InputChannel::landed_room() const noexcept { return landed_ ? room_in(*landed_) : 0; }

std::size_t InputChannel::queued() const noexcept {
  return capacity() - free_room() - landed_room();
}

void InputChannel::attach_landing(PopObserver* observer, std::size_t capacity) {
  landed_ = std::make_unique<Ring>(capacity);
  observer_ = observer;
  only_ = nullptr;  // reads now take turns with the landed lane
  const auto elsewhere = static_cast<std::size_t>(upstream_copies_) - std::min(lanes_.size(), static_cast<std::size_t>(upstream_copies_));
  turns_ = lanes_.size() + std::max<std::size_t>(1, elsewhere);
}

bool InputChannel::pop_next(Item& item, bool* landed) noexcept {
  *landed = false;
  if (only_ != nullptr) return only_->try_pop_only(item);
  if (turns_ == 0) return false;
  std::size_t turn = next_turn();
  bool landed_tried = false;
  for (std::size_t i = 0; i < turns_; ++i, turn = turn + 1 == turns_ ? 0 : turn + 1) {
    const bool from_landed = turn >= lanes_.size();
    if (from_landed && std::exchange(landed_tried, true)) continue;
    if ((from_landed ? *landed_ : *lanes_[turn]).try_pop_only(item)) {
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
  if (only_ != nullptr) {  // one lane: the pipeline edge's path
    if (only_->try_pop_run_only(max, take) != 0) room_.notify();
    return n;
  }
  // Lane by lane from this turn's first, until the run is full or stops at a mark. The
  // landed lane's run: the observer hears of it (credit) once the lane has published the
  // room, so that held-back items it lands find it.
  if (turns_ == 0) return 0;
  std::size_t turn = next_turn();
  std::size_t landed = 0;
  bool landed_tried = false;
  bool took_local = false;
  for (std::size_t i = 0; i < turns_ && n < max && !stashed_; ++i, turn = turn + 1 == turns_ ? 0 : turn + 1) {
    if (turn >= lanes_.size()) {
      if (std::exchange(landed_tried, true)) continue;
      // Every item the callback sees is popped, the mark it stops at included.
      landed_->try_pop_run_only(std::min(max - n, kLandedRun), [&](const Item& item) noexcept {
        landed_taken_[landed++] = item.producer;
        return take(item);
      });
    } else if (lanes_[turn]->try_pop_run_only(max - n, take) != 0) {
      took_local = true;
    }
  }
  if (took_local) room_.notify();
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
