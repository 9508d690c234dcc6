#include "control/outgoing_frames.h"

#include <utility>

namespace sluice::control {

void OutgoingFrames::push_back(Outgoing out) {
  bytes_ += out.frame.size();
  frames_.push_back(std::move(out));
}

void OutgoingFrames::push_heartbeat(std::string frame) {
  if (frames_.size() > 1 && frames_[1].heartbeat) return;
  bytes_ += frame.size();
  Outgoing out{std::move(frame), 0, true};
  if (frames_.empty()) {
    frames_.push_back(std::move(out));
  } else {
    frames_.insert(frames_.begin() + 1, std::move(out));
  }
}

std::size_t OutgoingFrames::pop_front() {
  const std::size_t results = frames_.front().results;
  bytes_ -= frames_.front().frame.size();
  frames_.pop_front();
  return results;
}

void OutgoingFrames::join_front() {
  if (frames_.empty()) return;
  Outgoing& front = frames_.front();
  std::size_t joined = 1;
  while (joined < frames_.size() && front.frame.size() + frames_[joined].frame.size() <= kJoinedBytes) {
    front.frame += frames_[joined].frame;
    front.results += frames_[joined].results;
    front.heartbeat = false;
    ++joined;
  }
  frames_.erase(frames_.begin() + 1, frames_.begin() + static_cast<std::ptrdiff_t>(joined));
}

std::size_t OutgoingFrames::drop_all_but_front() {
  std::size_t results = 0;
  for (Outgoing& out : frames_) {
    results += out.results;
    out.results = 0;
  }
  if (frames_.size() > 1) frames_.erase(frames_.begin() + 1, frames_.end());
  bytes_ = 0;
  return results;
}

}  // namespace sluice::control
