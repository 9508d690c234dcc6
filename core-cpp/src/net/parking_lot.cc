#include "net/parking_lot.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "sluice/error.h"

namespace sluice::net {

ParkingLot::ParkingLot(std::size_t slots, std::size_t buffer_size)
    : stride_((buffer_size + 63) / 64 * 64), slots_(slots) {
  if (slots_ == 0) return;
  // MAP_NORESERVE: only the pages that frames are parked in take memory.
  void* memory = ::mmap(nullptr, slots_ * stride_, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) {
    throw Error("data plane: cannot reserve " + std::to_string(slots_ * stride_) +
                " bytes of address space for parked frames: " + std::strerror(errno));
  }
  memory_ = static_cast<std::byte*>(memory);
  free_.reserve(slots_);
  for (std::size_t i = slots_; i > 0; --i) free_.push_back(static_cast<std::uint32_t>(i - 1));
}

ParkingLot::~ParkingLot() {
  if (memory_ != nullptr) ::munmap(memory_, slots_ * stride_);
}

ParkingLot::Spot ParkingLot::park(const DataFrame& frame) {
  if (free_.empty()) throw Error("data plane: internal: more frames parked than credit allows");
  const std::uint32_t slot = free_.back();
  free_.pop_back();
  parked_.push_back(Entry{false, false, frame.consumer, frame.producer, frame.key, frame.size, slot});
  return Spot{memory_ + slot * stride_, front_ticket_ + parked_.size() - 1};
}

void ParkingLot::arrived(std::uint64_t ticket) {
  // Not necessarily the frame parked last: connections from several hosts park frames of
  // one stream, and read their payloads side by side.
  const std::uint64_t index = ticket - front_ticket_;  // wraps to huge when it left already
  if (index >= parked_.size() || parked_[index].end_of_work) {
    throw Error("data plane: internal: a payload arrived for parked frame " + std::to_string(ticket) +
                ", which is not a parked DATA frame");
  }
  parked_[index].complete = true;
}

void ParkingLot::park(const EndOfWorkFrame& frame) {
  parked_.push_back(Entry{true, true, frame.consumer, frame.producer, 0, 0, 0});
}

ParkingLot::Parked ParkingLot::front() const {
  const Entry& e = parked_.front();
  return Parked{e.end_of_work, e.complete, e.consumer, e.producer, e.key, e.size,
                e.end_of_work ? nullptr : memory_ + e.slot * stride_};
}

void ParkingLot::pop() {
  const Entry& e = parked_.front();
  if (!e.end_of_work) free_.push_back(e.slot);
  parked_.pop_front();
  ++front_ticket_;
}

}  // namespace sluice::net
