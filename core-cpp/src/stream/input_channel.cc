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
  // Each lane holds the whole depth: a producer may have as many buffers waiting here as it
  // could in the one queue the producers shared before, and as a producer on another host
  // may have in flight (its credit window), so a graph that ran does not now wait for ever
  // on a smaller lane. What all of them hold together is bounded by the stream's pool.
  const std::size_t per_lane = std::max<std::size_t>(depth, 1);
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
  if (!has_lane(producer) || room_in(*lane_of_[producer]) == 0) return 0;
  // The lanes' mean room, rounded up: on the scale of one lane's depth, as a remote copy's
  // credit is (RemoteEndpoint), so that demand_driven compares the two fairly.
  return (free_room() + lanes_.size() - 1) / lanes_.size();
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
  const auto upstream = static_cast<std::size_t>(upstream_copies_);
  const std::size_t elsewhere = upstream > lanes_.size() ? upstream - lanes_.size() : 0;
  turns_ = lanes_.size() + std::max<std::size_t>(1, elsewhere);
}

bool InputChannel::pop_next(Item& item, bool* landed) noexcept {
  *landed = false;
  if (only_ != nullptr) return only_->try_pop_only(item);
  bool popped = false;
  visit_in_turn(
      [&](Ring& lane, bool from_landed) noexcept {
        popped = lane.try_pop_only(item);
        *landed = popped && from_landed;
        return popped;
      },
      [&] { return popped; });
  return popped;
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
  std::size_t landed = 0;
  bool took_local = false;
  visit_in_turn(
      [&](Ring& lane, bool from_landed) noexcept {
        if (from_landed) {
          // Every item the callback sees is popped, the mark it stops at included.
          return lane.try_pop_run_only(std::min(max - n, kLandedRun), [&](const Item& item) noexcept {
            landed_taken_[landed++] = item.producer;
            return take(item);
          }) != 0;
        }
        const bool took = lane.try_pop_run_only(max - n, take) != 0;
        took_local = took_local || took;
        return took;
      },
      [&] { return n == max || stashed_; });
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
