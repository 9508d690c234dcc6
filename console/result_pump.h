// ResultPump: the thread of `sluice serve` that forwards each unit's results to the client
// that submitted it, unit after unit in submission order (the order the Application runs
// them in), then says how the unit ended.
//
// Flow control: a unit's results are read from the Application only as fast as its client
// takes them. At most kResultWindow bytes of frames wait for the client's connection; the
// pump reads the next buffer only when there is room, so a slow client holds back its own
// unit (through the Application's backpressure on the `to: client` stream) and nothing
// else, and serve holds at most a window and one buffer of results at any time. Buffers
// above kResultChunk bytes travel in several ResultChunk messages.
//
// A client that goes away abandons its job: the unit is cancelled (Unit::cancel: a queued
// unit does not run; a running one is aborted, and the application is deployed again
// before the next unit), and the pump reads what is left of its results without sending
// them.
//
// Thread safety: every method may be called from any thread. A UnitJob's sink is called
// on the pump's thread.
#ifndef SLUICE_CONSOLE_RESULT_PUMP_H_
#define SLUICE_CONSOLE_RESULT_PUMP_H_

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "sluice/application.h"

namespace sluice::console {

inline constexpr std::size_t kResultChunk = std::size_t{1} << 20;   // bytes of one buffer per frame
inline constexpr std::size_t kResultWindow = std::size_t{2} << 20;  // frame bytes queued per client

// Where one unit's results go: the client's connection.
class ResultSink {
 public:
  virtual ~ResultSink() = default;
  // Called on the pump's thread: queue `frame` (an encoded result_chunk Envelope) for the
  // client, and call UnitJob::written(frame.size()) once it is out (or dropped). Returns
  // at once.
  virtual void deliver(std::string frame) = 0;
  // Called on the pump's thread after the unit's last deliver(): how it ended.
  virtual void ended(const UnitReport& report) = 0;
};

// One submitted unit, as the pump forwards it.
class UnitJob {
 public:
  UnitJob(Unit unit, std::weak_ptr<ResultSink> sink) : unit_(std::move(unit)), sink_(std::move(sink)) {}
  UnitJob(const UnitJob&) = delete;
  UnitJob& operator=(const UnitJob&) = delete;

  std::uint64_t index() const { return unit_.index(); }
  // The client's connection ended (`why`: it went, or serve dropped it): cancels the unit
  // (Unit::cancel: stage "cancelled"), and the pump stops sending. Idempotent: the first
  // `why` stays.
  void abandon(const std::string& why);
  bool abandoned() const;
  std::string abandoned_why() const;
  // The server is going down: the pump sends no more of this unit's results (what is left
  // is read and dropped), but still says how it ended. Idempotent.
  void drop_results();
  // `bytes` of frames the sink was given have left its queue.
  void written(std::size_t bytes);

 private:
  friend class ResultPump;
  // Waits until fewer than kResultWindow bytes are queued, or the job is abandoned or its
  // results dropped (false).
  bool wait_for_room();
  bool sending() const;
  void queued(std::size_t bytes);

  Unit unit_;  // results() and wait() on the pump's thread; cancel() from abandon()
  const std::weak_ptr<ResultSink> sink_;
  mutable std::mutex mu_;  // guards what follows
  std::condition_variable room_;
  std::size_t in_flight_ = 0;
  bool abandoned_ = false;
  std::string abandoned_why_;
  bool dropped_ = false;
};

class ResultPump {
 public:
  // Called on the pump's thread when a job's unit ended, after its sink heard it.
  using Ended = std::function<void(const std::shared_ptr<UnitJob>& job, const UnitReport& report)>;

  explicit ResultPump(Ended ended);
  // finish().
  ~ResultPump();
  ResultPump(const ResultPump&) = delete;
  ResultPump& operator=(const ResultPump&) = delete;

  // Queues `job` behind the others. REQUIRES: jobs are added in the order their units were
  // submitted, and not after finish().
  void add(std::shared_ptr<UnitJob> job);
  // UnitJob::drop_results() on every job not yet ended.
  void drop_all_results();
  // Every job added ends (as the Application runs them), then the thread ends; joins it.
  void finish();

 private:
  void run();
  void forward(UnitJob& job);

  const Ended ended_;
  std::mutex mu_;  // guards jobs_, current_ and finishing_
  std::condition_variable changed_;
  std::deque<std::shared_ptr<UnitJob>> jobs_;
  std::shared_ptr<UnitJob> current_;  // the job being forwarded
  bool finishing_ = false;
  std::thread thread_;
};

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_RESULT_PUMP_H_
