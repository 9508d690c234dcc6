#include "application/core.h"

#include "control/codec.h"

#include <algorithm>
#include <chrono>

#include "log/backend.h"
#include "sluice/error.h"

namespace sluice {

namespace {

using Clock = std::chrono::steady_clock;

// How often an idle runner keeps a deployment alive (Deployment::keep_alive): well inside
// the 500 ms heartbeat a host daemon expects.
constexpr auto kKeepAliveEvery = std::chrono::milliseconds(200);

// A reader of a queued unit says the earlier unit holds it back once no one has read that
// unit's results for kHeldBackAfter; it looks every kHeldBackLook.
constexpr auto kHeldBackAfter = std::chrono::seconds(5);
constexpr auto kHeldBackLook = std::chrono::milliseconds(500);

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

UnitReport failed_report(std::uint64_t index, const std::string& work, const Failure& f) {
  UnitReport r;
  r.index = index;
  r.work = work;
  r.finished = false;
  r.filter = f.filter;
  r.copy = f.copy;
  r.host = f.host;
  r.stage = f.stage;
  r.message = f.message;
  r.crash = f.crash;
  return r;
}

Failure cancelled(std::uint64_t index, const std::string& why) { return Failure{"", -1, "", index, "cancelled", why}; }

// The report of a unit its client cancelled while it was queued.
UnitReport cancelled_before_it_ran(std::uint64_t index, const std::string& work) {
  return failed_report(index, work, cancelled(index, "unit " + std::to_string(index) + " was cancelled by its client before it ran"));
}

}  // namespace

const std::string& UnitResults::name() const {
  static const std::string kName(topo::kClient);
  return kName;
}

std::optional<Buffer> UnitResults::read_more() { return next(unit_, Reader::kClient); }

std::optional<Buffer> UnitResults::next(Unit::State& u, Reader reader) {
  const bool for_client = reader == Reader::kClient;
  // A client's read of results discarded by Application::stop() says so, once it would
  // have got a buffer (the discarding side reads the rest).
  const auto discarded = [&] {
    if (for_client && !u.discarded.empty()) throw Error(u.discarded);
  };
  {
    std::unique_lock<std::mutex> lock(u.mu);
    const auto can_go = [&] {
      return u.phase != Unit::State::Phase::kQueued || u.results_closed || (for_client && !u.discarded.empty());
    };
    // Queued: it waits for the units before it. One whose results nobody reads never ends,
    // so a client that reads a later unit first would wait forever, in silence: say so.
    bool said = false;
    while (!u.changed.wait_for(lock, kHeldBackLook, can_go)) {
      lock.unlock();
      const std::optional<AppCore::RunningUnread> now = u.core->running_unread_before(u.index);
      lock.lock();
      if (now && !said && reader != Reader::kDiscarder && now->unread_seconds >= std::chrono::duration<double>(kHeldBackAfter).count()) {
        said = true;
        const std::string earlier = "unit " + std::to_string(now->index);
        logging::process_line(
            LogLevel::kWarn,
            "unit " + std::to_string(u.index) + "'s results are waited for, but " + earlier +
                " runs first and no one has read its results for " +
                std::to_string(kHeldBackAfter.count()) +
                " s: units run one at a time in submission order, and a unit ends only once its "
                "results are read to the end. Read " + earlier + "'s results (or wait for it, cancel it, or drop it: "
                "in Java read(), waitFor(), cancel() or close()) first, or from another thread");
      }
    }
    discarded();
    if (u.results_closed) return std::nullopt;
  }
  std::unique_lock<std::mutex> reading(u.read_mu);
  InputPort* port = nullptr;
  {
    std::lock_guard<std::mutex> lock(u.mu);
    discarded();
    if (u.results_closed) return std::nullopt;
    port = u.port;
  }
  std::optional<Buffer> buffer;
  try {
    if (port != nullptr) buffer = port->read();
  } catch (const Aborted&) {
    // The unit failed or was cancelled: wait() says how.
  }
  if (buffer) u.last_progress_ns.store(steady_ns(), std::memory_order_relaxed);
  if (!buffer) {
    reading.unlock();
    std::lock_guard<std::mutex> lock(u.mu);
    u.results_closed = true;
    u.changed.notify_all();
    return buffer;
  }
  std::lock_guard<std::mutex> lock(u.mu);
  discarded();  // the buffer goes back to its pool
  return buffer;
}

void UnitResults::discard_rest(Unit::State& u, Reader reader) {
  while (next(u, reader)) {
  }
}

void Unit::State::close_results() {
  std::lock_guard<std::mutex> reading(read_mu);
  std::lock_guard<std::mutex> lock(mu);
  results_closed = true;
  changed.notify_all();
}

AppCore::AppCore(topo::Topology topology, DeploymentFactory factory, bool remote)
    : topology_(std::move(topology)), factory_(std::move(factory)), remote_(remote) {
  runner_ = std::thread([this] { run(); });
}

AppCore::~AppCore() {
  if (runner_.joinable() && runner_.get_id() == std::this_thread::get_id()) {
    runner_.detach();  // the runner dropped the last reference itself: it is about to return
    // No unit is left to drain (each would hold a reference): the drainer only waits.
    {
      std::lock_guard<std::mutex> lock(mu_);
      drainer_done_ = true;
      changed_.notify_all();
    }
    if (drainer_.joinable()) drainer_.join();
  } else {
    stop(false);
  }
  keep_pools_of_held_buffers();
}

void AppCore::keep_pools_of_held_buffers() {
  refuge_->sweep();
  const std::size_t held = refuge_->memory_bytes();
  if (held == 0) return;
  // A buffer still held points into its pool: freeing the pool now would turn its release
  // into a write to freed memory. Its pools stay, and say so.
  logging::process_line(LogLevel::kWarn,
                        "result buffers were still held when the application went; the memory of their pools (" +
                            std::to_string(held / 1024) + " KiB) stays until the process ends: release every "
                            "result buffer before the Application and its Units are destroyed");
  (void)refuge_.release();
}

void AppCore::start() {
  std::unique_lock<std::mutex> lock(mu_);
  if (stopping_) throw Error("the application is stopped; open it again");
  start_requested_ = true;
  changed_.notify_all();
  changed_.wait(lock, [&] { return start_done_; });
  if (start_failure_) throw Error("the application did not start: " + start_failure_->str());
}

std::optional<Failure> AppCore::start_failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return start_failure_;
}

std::shared_ptr<Unit::State> AppCore::submit(std::string payload) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_) throw Error("the application is stopped; submit units before stop(), or open it again");
  // Sent on, it would have closed the control connection, and the deployment with it.
  if (remote_ && payload.size() > control::kMaxPayload) throw Error(control::payload_too_large("the payload", payload.size()));
  auto unit = std::make_shared<Unit::State>(shared_from_this(), next_index_++, std::move(payload));
  queue_.push_back(unit);
  // Units whose handles are gone are forgotten now and then, so that a long-lived
  // application does not keep an entry per unit it ever ran.
  if (submitted_.size() >= 64 && submitted_.size() == submitted_.capacity()) {
    std::erase_if(submitted_, [](const std::weak_ptr<Unit::State>& u) { return u.expired(); });
  }
  submitted_.push_back(unit);
  if (watcher_ != nullptr) watcher_->unit_queued(unit->index, unit->work);
  changed_.notify_all();
  return unit;
}

void AppCore::cancel(Unit::State& unit) {
  {
    std::lock_guard<std::mutex> lock(unit.mu);
    if (unit.phase == Unit::State::Phase::kEnded) return;
    unit.cancel_requested = true;
  }
  // Running: abort it. Queued: it ends now, not when its turn comes (the unit running before
  // it may take a while to stop: a copy busy in its own code). A unit that starts running
  // right now sees cancel_requested itself.
  std::shared_ptr<Unit::State> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (running_ == &unit && current_ != nullptr) current_->cancel("unit " + std::to_string(unit.index) + " was cancelled by its client");
    const auto queued = std::find_if(queue_.begin(), queue_.end(), [&](const auto& u) { return u.get() == &unit; });
    if (queued != queue_.end()) {
      dropped = *queued;
      queue_.erase(queued);
    }
  }
  if (dropped) end_unit(*dropped, cancelled_before_it_ran(dropped->index, dropped->work));
}

void AppCore::discard_unread(const std::string& why) {
  std::vector<std::shared_ptr<Unit::State>> live;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;  // no unit joins those being discarded
    changed_.notify_all();
    for (const std::weak_ptr<Unit::State>& weak : submitted_) {
      if (auto unit = weak.lock()) live.push_back(std::move(unit));
    }
  }
  for (const auto& unit : live) {
    std::lock_guard<std::mutex> lock(unit->mu);
    if (!unit->results_closed && unit->discarded.empty()) unit->discarded = why;
    unit->changed.notify_all();
  }
  for (const auto& unit : live) UnitResults::discard_rest(*unit);  // in submission order: each runs in turn
}

void AppCore::stop(bool abort) {
  std::vector<std::shared_ptr<Unit::State>> dropped;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    if (abort) {
      aborting_ = true;
      dropped.assign(queue_.begin(), queue_.end());
      queue_.clear();
      if (running_ != nullptr && current_ != nullptr) current_->cancel("the application was aborted");
      if (running_ != nullptr) running_->changed.notify_all();  // it may wait for its results to be read
    }
    changed_.notify_all();
  }
  for (auto& unit : dropped) end_unit(*unit, failed_report(unit->index, unit->work, cancelled(unit->index, "the application was aborted before this unit ran")));
  std::lock_guard<std::mutex> joining(join_mu_);
  if (runner_.joinable()) runner_.join();
  // Every unit ended, so the drainer's reads end too.
  std::deque<std::shared_ptr<Unit::State>> drained;
  {
    std::lock_guard<std::mutex> lock(mu_);
    drainer_done_ = true;
    changed_.notify_all();
  }
  if (drainer_.joinable()) drainer_.join();
  std::lock_guard<std::mutex> lock(mu_);
  drained.swap(drained_);
}

void AppCore::orphan(std::shared_ptr<Unit::State> unit) {
  {
    std::lock_guard<std::mutex> lock(unit->mu);
    if (unit->results_closed) return;  // read to the end: the unit ends by itself
  }
  std::deque<std::shared_ptr<Unit::State>> drained;  // let go of here, outside mu_
  std::lock_guard<std::mutex> lock(mu_);
  if (drainer_done_) return;  // after stop(): every unit ended, their results too
  // Started first: if it cannot be, nothing is queued (let_go reads them itself).
  if (!drainer_.joinable()) drainer_ = std::thread([this] { drain(); });
  orphans_.push_back(std::move(unit));
  drained.swap(drained_);
  changed_.notify_all();
}

void AppCore::drain() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // Only the running unit's: an orphan still queued may wait for an earlier unit that its
    // own thread holds and has not dropped yet (that one may be orphaned later, behind it).
    std::size_t at = 0;
    const auto running_orphan = [&] {
      for (at = 0; at < orphans_.size(); ++at) {
        if (orphans_[at].get() == running_) return true;
      }
      return false;
    };
    changed_.wait(lock, [&] { return drainer_done_ || running_orphan(); });
    if (drainer_done_) {
      // stop() ran every unit to its end: nothing is left to read.
      for (auto& unit : orphans_) drained_.push_back(std::move(unit));
      orphans_.clear();
      return;
    }
    Unit::State* next = orphans_[at].get();
    lock.unlock();
    UnitResults::discard_rest(*next);
    lock.lock();
    // Not let go of on this thread: the unit's may be the core's last reference. (Only
    // this thread takes from orphans_, so `at` still names it.)
    drained_.push_back(std::move(orphans_[at]));
    orphans_.erase(orphans_.begin() + static_cast<std::ptrdiff_t>(at));
  }
}

std::optional<AppCore::RunningUnread> AppCore::running_unread_before(std::uint64_t index) const {
  std::lock_guard<std::mutex> lock(mu_);  // keeps running_ alive
  if (running_ == nullptr || running_->index >= index) return std::nullopt;
  Unit::State& running = *running_;
  // Only probes (no waiting under mu_): a reader inside read() holds read_mu.
  std::unique_lock<std::mutex> reading(running.read_mu, std::try_to_lock);
  std::unique_lock<std::mutex> state(running.mu, std::try_to_lock);
  if (!reading.owns_lock() || !state.owns_lock() || running.results_closed) return std::nullopt;
  const std::int64_t since = steady_ns() - running.last_progress_ns.load(std::memory_order_relaxed);
  return RunningUnread{running.index, static_cast<double>(since) / 1e9};
}

std::uint64_t AppCore::units_ended() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ended_;
}

void AppCore::set_watcher(AppWatcher* watcher) {
  std::lock_guard<std::mutex> lock(mu_);
  watcher_ = watcher;
}

std::optional<DeploymentSample> AppCore::sample() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (current_ == nullptr && carried_.empty()) return std::nullopt;
  DeploymentSample s;
  if (current_ != nullptr) s = current_->sample();
  s.deployed = current_ != nullptr;
  if (s.streams.empty()) {
    s.streams = carried_;
    for (StreamStats& st : s.streams) st.queued = st.capacity = 0;  // nothing is queued in a retired deployment
  } else {
    for (std::size_t i = 0; i < carried_.size() && i < s.streams.size(); ++i) {
      StreamStats old = carried_[i];
      old.queued = old.capacity = 0;
      add_counters(s.streams[i], old);
    }
  }
  // Hosts' counters, too, over the application's life: the retired deployments' and this one's.
  for (const auto& [name, old] : carried_hosts_) {
    auto it = std::find_if(s.hosts.begin(), s.hosts.end(), [&](const console::HostTraffic& h) { return h.host == name; });
    if (it == s.hosts.end()) {
      s.hosts.push_back(old);
      s.hosts.back().report_age_seconds = -1;  // no deployment reports for it now
      continue;
    }
    console::add_traffic(*it, old);
  }
  return s;
}

void AppCore::end_unit(Unit::State& unit, UnitReport report) {
  unit.close_results();
  {
    // Counted before its submitter can see it end: a client whose wait returned must find
    // its unit in units_ended() (counted after, a fast client could read one fewer).
    std::lock_guard<std::mutex> lock(mu_);
    ++ended_;
  }
  {
    std::lock_guard<std::mutex> lock(unit.mu);
    unit.report = std::move(report);
    unit.phase = Unit::State::Phase::kEnded;
    unit.port = nullptr;
    unit.changed.notify_all();
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (watcher_ != nullptr) watcher_->unit_ended(*unit.report);
}

std::optional<Failure> AppCore::ensure_deployed() {
  if (deployment_) return std::nullopt;
  std::optional<Failure> failure;
  try {
    std::unique_ptr<Deployment> made = factory_(topology_);
    {
      std::lock_guard<std::mutex> lock(mu_);
      current_ = made.get();
    }
    deployment_ = std::move(made);
    failure = deployment_->start();
  } catch (const std::exception& e) {
    failure = Failure{"", -1, remote_ ? "" : "local", 0, "deploy", e.what()};
  }
  if (failure) retire_deployment();
  return failure;
}

void AppCore::let_go_of_deployment() {
  const std::vector<StreamStats> last = deployment_ ? deployment_->stream_stats() : std::vector<StreamStats>{};
  const std::vector<console::HostTraffic> hosts =
      deployment_ ? deployment_->sample().hosts : std::vector<console::HostTraffic>{};
  std::lock_guard<std::mutex> lock(mu_);
  current_ = nullptr;
  for (const console::HostTraffic& h : hosts) {
    console::HostTraffic& kept = carried_hosts_[h.host];
    kept.host = h.host;
    console::add_traffic(kept, h);
  }
  if (carried_.empty()) {
    carried_ = last;
  } else {
    for (std::size_t i = 0; i < carried_.size() && i < last.size(); ++i) add_counters(carried_[i], last[i]);
  }
}

std::optional<std::string> AppCore::gone() const {
  std::lock_guard<std::mutex> lock(mu_);
  return gone_;
}

void AppCore::retire_deployment() {
  let_go_of_deployment();
  if (!deployment_) return;
  if (std::optional<std::string> why = deployment_->cannot_deploy_again()) {
    std::lock_guard<std::mutex> lock(mu_);
    gone_ = why;
  }
  if (deployment_->stuck()) {
    // Copies are stuck in user code: destroying the deployment would wait for them forever.
    (void)deployment_.release();
    return;
  }
  deployment_->hand_pools_to(*refuge_);
  retired_.push_back(std::move(deployment_));
}

void AppCore::bury_retired() {
  retired_.clear();
  refuge_->sweep();
}

bool AppCore::aborting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return aborting_;
}

std::optional<Failure> AppCore::keep_deployment_alive() {
  try {
    return deployment_->keep_alive();
  } catch (const std::exception& e) {  // never out of the runner thread
    return Failure{"", -1, "", 0, "keep alive", e.what()};
  }
}

void AppCore::retire_broken_deployment(const Failure& why) {
  logging::process_line(LogLevel::kWarn, "the deployment broke between units (" + why.str() +
                                             "); the next unit deploys the application again");
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (watcher_ != nullptr) watcher_->deployment_broke(why);
  }
  retire_deployment();
}

void AppCore::run() {
  for (;;) {
    // A unit whose deployment failed has been reported: the deployment goes now (a
    // long-lived serve meets many failed units).
    bury_retired();
    std::shared_ptr<Unit::State> unit;
    {
      std::unique_lock<std::mutex> lock(mu_);
      const auto work_to_do = [&] { return (start_requested_ && !start_done_) || stopping_ || !queue_.empty(); };
      // Idle: with a deployment up, wake to keep it alive (and notice it breaking).
      while (!work_to_do()) {
        if (!deployment_) {
          changed_.wait(lock, work_to_do);
          break;
        }
        if (changed_.wait_for(lock, kKeepAliveEvery, work_to_do)) break;
        lock.unlock();
        if (std::optional<Failure> broke = keep_deployment_alive()) {
          retire_broken_deployment(*broke);
          bury_retired();
        }
        lock.lock();
      }
      if (start_requested_ && !start_done_) {
        lock.unlock();
        std::optional<Failure> failure = ensure_deployed();
        lock.lock();
        start_failure_ = failure;
        start_done_ = true;
        changed_.notify_all();
        continue;
      }
      if (queue_.empty()) {
        if (stopping_) break;
        continue;
      }
      unit = queue_.front();
      queue_.pop_front();
      start_done_ = start_requested_ = true;  // a submit without start() starts it
      changed_.notify_all();
    }
    run_one(*unit);
  }
  let_go_of_deployment();
  // Destroy every deployment here, on the thread that made them (a deployment across hosts
  // is single-threaded).
  if (deployment_ && deployment_->stuck()) (void)deployment_.release();
  // Result buffers a client still holds stay valid until the AppCore goes (~AppCore).
  if (deployment_) deployment_->hand_pools_to(*refuge_);
  deployment_.reset();
  retired_.clear();
  refuge_->sweep();
}

void AppCore::run_one(Unit::State& unit) {
  {
    std::lock_guard<std::mutex> lock(unit.mu);
    if (unit.cancel_requested) unit.report = cancelled_before_it_ran(unit.index, unit.work);
  }
  if (unit.report) {
    end_unit(unit, *unit.report);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (aborting_) {
      end_unit(unit, failed_report(unit.index, unit.work, cancelled(unit.index, "the application was aborted before this unit ran")));
      return;
    }
  }
  const auto deploying = Clock::now();
  if (std::optional<Failure> failure = ensure_deployed()) {
    failure->unit = unit.index;
    UnitReport report = failed_report(unit.index, unit.work, *failure);
    report.seconds = std::chrono::duration<double>(Clock::now() - deploying).count();  // what deploying took
    end_unit(unit, std::move(report));
    return;
  }
  InputPort* port = deployment_->client_port();
  if (port != nullptr) port->begin_unit();  // before the reader may touch it (mu orders it)
  const std::vector<StreamStats> before = deployment_->stream_stats();
  bool cancel_now = false;
  {
    std::lock_guard<std::mutex> lock(unit.mu);
    unit.port = port;
    unit.last_progress_ns.store(steady_ns(), std::memory_order_relaxed);
    unit.phase = Unit::State::Phase::kRunning;
    cancel_now = unit.cancel_requested;
    unit.changed.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_ = &unit;
    changed_.notify_all();  // the drainer drains it, if its handle is gone (orphan())
    cancel_now = cancel_now || aborting_;
    if (watcher_ != nullptr) watcher_->unit_started(unit.index);
  }
  if (cancel_now) deployment_->cancel("unit " + std::to_string(unit.index) + " was cancelled by its client");
  const auto started = Clock::now();
  std::optional<Failure> failure;
  try {
    failure = deployment_->run_unit(unit.index, unit.work);
  } catch (const std::exception& e) {
    failure = Failure{"", -1, "", unit.index, "run", e.what()};
  }
  if (!failure) {
    // Every producer ended the unit: its results end once the client has read them, which
    // may take a while: the deployment is kept alive meanwhile. If it breaks before the
    // results are all in, the unit failed.
    std::unique_lock<std::mutex> lock(unit.mu);
    while (!unit.changed.wait_for(lock, kKeepAliveEvery, [&] { return unit.results_closed; })) {
      lock.unlock();
      failure = keep_deployment_alive();  // on a failure it aborts the results' reader
      if (!failure && aborting()) {
        // abort() (and so ~Application) does not wait for results no one may ever read:
        // the unit is cancelled, and close_results, below, ends its reader's reads.
        failure = cancelled(unit.index, "the application was aborted");
      }
      lock.lock();
      if (failure) {
        failure->unit = unit.index;
        break;  // close_results, below, waits for the reader to unwind
      }
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_ = nullptr;
  }
  UnitReport report;
  if (failure) {
    report = failed_report(unit.index, unit.work, *failure);
  } else {
    report.index = unit.index;
    report.work = unit.work;
    report.finished = true;
  }
  report.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  const std::vector<StreamStats> after = deployment_->stream_stats();
  for (std::size_t i = 0; i < after.size(); ++i) {
    UnitStreamCount count;
    count.stream = after[i].label;
    count.buffers = after[i].buffers - (i < before.size() ? before[i].buffers : 0);
    count.bytes = after[i].bytes - (i < before.size() ? before[i].bytes : 0);
    report.streams.push_back(count);
  }
  if (failure) {
    report.partial_counts = deployment_->without_final_counts();
    unit.close_results();  // the reader, if any, has unwound: the deployment may go
    retire_deployment();
  }
  end_unit(unit, std::move(report));
}

}  // namespace sluice
