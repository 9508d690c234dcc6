// OutgoingFrames: the frames a TlsSession has queued for its peer, the front one under way.
//
// Small frames that queue behind each other leave together (join_front): one write and one
// TLS record for up to kJoinedBytes of them, not one each. A unit's 1 KiB results to many
// clients otherwise kept serve's I/O thread busy with records and send calls (a unit of
// 200,000 such results took 2.4 times as long).
//
// Thread safety: none; a session's strand (its io_context thread) owns it.
#ifndef SLUICE_CONTROL_OUTGOING_FRAMES_H_
#define SLUICE_CONTROL_OUTGOING_FRAMES_H_

#include <cstddef>
#include <deque>
#include <string>

namespace sluice::control {

struct Outgoing {
  std::string frame;        // one frame, or several joined (join_front)
  std::size_t results = 0;  // bytes of result frames in it, reported when it is out
  bool heartbeat = false;   // a lone heartbeat frame (one waiting is enough)
};

class OutgoingFrames {
 public:
  static constexpr std::size_t kJoinedBytes = 64 * 1024;

  bool empty() const { return frames_.empty(); }
  std::size_t size() const { return frames_.size(); }
  Outgoing& front() { return frames_.front(); }
  // The sum of the queued frames' sizes.
  std::size_t bytes() const { return bytes_; }

  void push_back(Outgoing out);
  // Puts a heartbeat right behind the front (the frames under way), unless one waits there.
  void push_heartbeat(std::string frame);
  // The front is out: drops it, and returns its results bytes.
  std::size_t pop_front();
  // Joins the frames behind the front into it while the front stays within kJoinedBytes.
  // Call only while the front is not under way (before writing it).
  void join_front();
  // Drops every frame but the front (which may be under way: its bytes go with the
  // session), and returns the results bytes of all of them, the front's included, which
  // then counts none.
  std::size_t drop_all_but_front();

 private:
  std::deque<Outgoing> frames_;
  std::size_t bytes_ = 0;
};

}  // namespace sluice::control

#endif  // SLUICE_CONTROL_OUTGOING_FRAMES_H_
