#include "console/stall_watch.h"

#include "console/report.h"
#include "topology/suggest.h"

#include <algorithm>

namespace sluice::console {

void StallWatch::start_unit(std::uint64_t moved) {
  last_moved_ = moved;
  last_change_ = Clock::now();
  reported_ = false;
}

StallWatch::Verdict StallWatch::observe(std::uint64_t moved) {
  if (moved != last_moved_) {
    last_moved_ = moved;
    last_change_ = Clock::now();
    reported_ = false;
    return Verdict::kMoving;
  }
  if (reported_ || Clock::now() - last_change_ < after_) return Verdict::kMoving;
  reported_ = true;
  return fail_ ? Verdict::kFail : Verdict::kReport;
}

double StallWatch::quiet_seconds() const {
  return std::chrono::duration<double>(Clock::now() - last_change_).count();
}

std::uint64_t buffers_moved(const std::vector<StreamStats>& streams) {
  std::uint64_t moved = 0;
  for (const StreamStats& s : streams) moved += s.buffers + s.consumed;
  return moved;
}

namespace {

std::string seconds(double s) { return fixed(s, 1) + " s"; }

// "dst#0", "dst#1": the copies waiting to read from `stream`.
std::vector<std::string> readers_waiting_on(const std::string& stream, const std::vector<CopyActivity>& copies) {
  std::vector<std::string> names;
  for (const CopyActivity& c : copies) {
    if (c.waiting_for == "read" && c.stream == stream) names.push_back(c.filter + "#" + std::to_string(c.copy));
  }
  return names;
}

// Why no block of `a.stream`'s pool is free. When none is queued on the stream and its
// readers wait to read it, the blocks can only be in the hands of copies that read them (a
// Java filter that forgot close() is the usual one): say so, and whom to look at.
std::string why_no_free_buffer(const CopyActivity& a, const std::vector<CopyActivity>& copies,
                               const std::vector<StreamStats>& streams) {
  const auto stream = std::find_if(streams.begin(), streams.end(), [&](const StreamStats& s) { return s.label == a.stream; });
  const std::vector<std::string> readers = readers_waiting_on(a.stream, copies);
  if (stream != streams.end() && stream->queued == 0 && !readers.empty()) {
    return "none is queued on it while " + topo::join(readers) + (readers.size() == 1 ? " waits" : " wait") +
           " to read it: every one is held by a copy that read it (or by a filter it was written to) and "
           "neither wrote nor dropped it; a filter must write or drop each buffer it reads (in Java, close() it)";
  }
  return "every one is held: queued downstream, or kept by a copy; a filter that allocates buffers and never "
         "writes nor drops them holds them itself";
}

std::string what(const CopyActivity& a, const std::vector<CopyActivity>& copies, const std::vector<StreamStats>& streams) {
  if (a.waiting_for == "read") return "waiting " + seconds(a.waiting_seconds) + " to read from " + a.stream;
  if (a.waiting_for == "write") return "waiting " + seconds(a.waiting_seconds) + " to write to " + a.stream;
  if (a.waiting_for == "allocate") {
    return "waiting " + seconds(a.waiting_seconds) + " for a free buffer of " + a.stream + " (" +
           why_no_free_buffer(a, copies, streams) + ")";
  }
  if (a.stage == "idle") return "done with this unit of work";
  return "busy in its own code (" + a.stage + "), not waiting on a stream";
}

}  // namespace

std::string stall_report(double quiet_seconds, const std::vector<CopyActivity>& copies,
                         const std::vector<StreamStats>& streams, const std::string& in_flight) {
  std::vector<CopyActivity> sorted = copies;
  // Waiting copies first, longest wait first: the head of the jam is usually there.
  std::stable_sort(sorted.begin(), sorted.end(), [](const CopyActivity& a, const CopyActivity& b) {
    if (a.waiting_for.empty() != b.waiting_for.empty()) return !a.waiting_for.empty();
    return a.waiting_seconds > b.waiting_seconds;
  });
  std::string out = "no buffer has moved for " + seconds(quiet_seconds) + "; what each copy is doing:";
  for (const CopyActivity& a : sorted) {
    out += "\n  " + a.filter + "#" + std::to_string(a.copy) + " on host " + a.host + ": " + what(a, copies, streams);
  }
  if (!in_flight.empty()) out += "\nwhat the data planes hold:" + in_flight;
  return out;
}

}  // namespace sluice::console
