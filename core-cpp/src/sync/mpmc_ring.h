// MpmcRing: a bounded lock-free multi-producer multi-consumer FIFO (Dmitry Vyukov's design).
//
// try_push/try_pop never block and never allocate. Items from one producer come out in the
// order that producer pushed them. Capacity is rounded up to a power of two.
//
// When one side is a single thread (one producer, or one consumer), its _single variant
// skips the compare-and-swap that lets several threads share that side: on a uniprocessor
// hand-off that CAS is most of the cost. A side must use one variant only: either every
// caller uses try_push, or exactly one thread uses try_push_single (likewise for pop).
//
// When each side is one thread at a time (one producer, or several one after another with a
// happens-before edge between their pushes; likewise for pops), the _only variants go
// further (a ring must then use them on both sides, and nothing else): the consumer never
// writes a cell back, and the producer never reads one. It knows the room from the
// consumer's position, which it reads only when the room it last saw is used up (the
// producer's own `free_until`, on the tail's line). Where the
// two threads run on different cores, a cell's line then crosses once each way a lap (the
// producer's store, the consumer's read) instead of four times, and the producer's write no
// longer waits for a load of a line the consumer holds.
#ifndef SLUICE_SYNC_MPMC_RING_H_
#define SLUICE_SYNC_MPMC_RING_H_

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace sluice {

// A ring's cell: `seq` says whose turn it is (Vyukov's sequence).
template <typename T>
struct RingCell {
  std::atomic<std::size_t> seq;
  T value;
};

// Cell: RingCell<T>, or a type laid out and used the same way (the stream queues' cell
// lives in the public header, where the inline OutputStream::write fills it).
template <typename T, typename Cell = RingCell<T>>
class MpmcRing {
 public:
  explicit MpmcRing(std::size_t min_capacity)
      : mask_(std::bit_ceil(min_capacity < 2 ? std::size_t{2} : min_capacity) - 1),
        cells_(new Cell[mask_ + 1]) {
    for (std::size_t i = 0; i <= mask_; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
  }
  MpmcRing(const MpmcRing&) = delete;
  MpmcRing& operator=(const MpmcRing&) = delete;

  bool try_push(const T& value) noexcept {
    return try_push_with([&](T& slot) noexcept { slot = value; });
  }

  // try_push that writes the item in place: fill(T&) stores it straight into the cell. A
  // caller that has the fields in registers then never builds the item on its stack and
  // copies it back out (a wide load of narrower stores, which stalls store forwarding: ~5 ns
  // of a ~40 ns hand-off).
  template <typename Fill>
  bool try_push_with(Fill&& fill) noexcept {
    std::size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& cell = cells_[pos & mask_];
      std::size_t seq = cell.seq.load(std::memory_order_acquire);
      auto dif = static_cast<std::intptr_t>(seq) - static_cast<std::intptr_t>(pos);
      if (dif == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          fill(cell.value);
          cell.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (dif < 0) {
        return false;  // full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  bool try_pop(T& out) noexcept {
    std::size_t pos = head_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& cell = cells_[pos & mask_];
      std::size_t seq = cell.seq.load(std::memory_order_acquire);
      auto dif = static_cast<std::intptr_t>(seq) - static_cast<std::intptr_t>(pos + 1);
      if (dif == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          out = cell.value;
          cell.seq.store(pos + mask_ + 1, std::memory_order_release);
          return true;
        }
      } else if (dif < 0) {
        return false;  // empty
      } else {
        pos = head_.load(std::memory_order_relaxed);
      }
    }
  }

  // try_push for the ring's only producer.
  bool try_push_single(const T& value) noexcept {
    return try_push_single_with([&](T& slot) noexcept { slot = value; });
  }

  // try_push_with for the ring's only producer.
  template <typename Fill>
  bool try_push_single_with(Fill&& fill) noexcept {
    const std::size_t pos = tail_.load(std::memory_order_relaxed);
    Cell& cell = cells_[pos & mask_];
    if (cell.seq.load(std::memory_order_acquire) != pos) return false;  // full
    publish(cell, pos, fill);
    return true;
  }

  // try_pop for the ring's only consumer.
  bool try_pop_single(T& out) noexcept { return pop_one</*give_back=*/true>(out); }

  // try_pop_single for a run: hands up to `max` items that are there, in order, to
  // take(const T&), which returns false to stop after the one it was given. The cells go
  // back to the producers as they are read, the position is published once. Returns how
  // many items take() was given.
  template <typename Take>
  std::size_t try_pop_run_single(std::size_t max, Take&& take) noexcept {
    return pop_run</*give_back=*/true>(max, take);
  }

  // try_push_single_with for a ring whose consumer uses the _only pops.
  template <typename Fill>
  bool try_push_only_with(Fill&& fill) noexcept {
    const std::size_t pos = tail_.load(std::memory_order_relaxed);
    if (pos >= free_until_) {
      free_until_ = head_.load(std::memory_order_acquire) + mask_ + 1;
      if (pos >= free_until_) return false;  // full
    }
    publish(cells_[pos & mask_], pos, fill);
    return true;
  }

  // try_pop_single for a ring whose producer uses try_push_only_with: the cell is left as
  // it is (its seq, pos + 1, never matches a later lap's position + 1), and the position is
  // published with release, which is what gives the cell back.
  bool try_pop_only(T& out) noexcept { return pop_one</*give_back=*/false>(out); }

  // try_pop_run_single, as try_pop_only does it.
  template <typename Take>
  std::size_t try_pop_run_only(std::size_t max, Take&& take) noexcept {
    return pop_run</*give_back=*/false>(max, take);
  }

  std::size_t capacity() const noexcept { return mask_ + 1; }
  // For a producer that fills cells itself, as try_push_single_with does (the inline
  // OutputStream::write): the cells and the next position to fill.
  Cell* cells() noexcept { return cells_.get(); }
  std::atomic<std::size_t>& tail() noexcept { return tail_; }
  // And, for one that fills them as try_push_only_with does, the producer's record of the
  // room: the positions below it are free to fill (the producer thread's alone).
  std::size_t& free_until() noexcept { return free_until_; }
  // Likewise for a consumer that takes from cells itself (the inline OutputStream::allocate
  // from a pool's free ring, as try_pop_single does): the next position to take. (Also what
  // a producer that fills cells itself as try_push_only_with does reads for the room.)
  std::atomic<std::size_t>& head() noexcept { return head_; }
  // A snapshot; exact only when no push or pop runs concurrently.
  std::size_t size_approx() const noexcept {
    std::size_t tail = tail_.load(std::memory_order_relaxed);
    std::size_t head = head_.load(std::memory_order_relaxed);
    return tail >= head ? tail - head : 0;
  }

 private:
  // The single producer's store of the item at `pos` (a free cell): the value, then the
  // sequence number that hands it to the consumer, then the producer's own position.
  template <typename Fill>
  void publish(Cell& cell, std::size_t pos, Fill& fill) noexcept {
    fill(cell.value);
    cell.seq.store(pos + 1, std::memory_order_release);
    tail_.store(pos + 1, std::memory_order_relaxed);
  }

  // The single consumer's pop (of one item, or of a run): give_back writes each cell's sequence back for the producers
  // (the shared protocol); without it the cells are left alone and the position, published
  // with release, is what gives them back (the _only protocol).
  template <bool give_back>
  bool pop_one(T& out) noexcept {
    return pop_run<give_back>(1, [&](const T& value) noexcept {
             out = value;
             return true;
           }) == 1;
  }
  template <bool give_back, typename Take>
  std::size_t pop_run(std::size_t max, Take&& take) noexcept {
    const std::size_t head = head_.load(std::memory_order_relaxed);
    std::size_t pos = head;
    while (pos - head < max) {
      Cell& cell = cells_[pos & mask_];
      if (cell.seq.load(std::memory_order_acquire) != pos + 1) break;  // empty
      const bool more = take(cell.value);
      if constexpr (give_back) cell.seq.store(pos + mask_ + 1, std::memory_order_release);
      ++pos;
      if (!more) break;
    }
    if (pos != head) head_.store(pos, give_back ? std::memory_order_relaxed : std::memory_order_release);
    return pos - head;
  }

  const std::size_t mask_;
  std::unique_ptr<Cell[]> cells_;
  alignas(64) std::atomic<std::size_t> tail_{0};
  std::size_t free_until_ = 0;  // the _only producer's; on the line only the producer writes
  alignas(64) std::atomic<std::size_t> head_{0};
};

}  // namespace sluice

#endif  // SLUICE_SYNC_MPMC_RING_H_
