// ClientUnit: the native peer of one org.sluice.Unit: the sluice::Unit, and the result buffers
// lent to Java. Result buffers are lent as a filter copy's are (a handle in a HandleRegistry,
// the block's binding id, size and key posted to a mailbox, the unit's own org.sluice.Buffer
// object per block on the Java side: see Peer), so reading a result makes no Java object once
// its block has been seen.
//
// Life: made by ClientApp::submit; the handle table holds it until the unit is done from the
// client's side (its report went to Java and no result buffer is out: after Unit.close() or
// the end of its results, once the unit ended), or until the Application's stop. Each step that ends a unit delivers its report to the Java Unit
// (Unit.ended) before the handle is removed, so a Java Unit always learns how its unit ended.
//
// Thread safety: every method from any thread. One mutex (read_mu_) serializes the uses of the
// sluice::Unit that read its results (read, and the drain in end); cancel() and close() do not
// take it, so that they can stop or leave a reader that waits. A second mutex (mu_) guards the registry and the flags,
// and is never held while a read waits.
#ifndef SLUICE_JNI_APPLICATION_CLIENT_UNIT_H_
#define SLUICE_JNI_APPLICATION_CLIENT_UNIT_H_

#include <jni.h>

#include <cstddef>
#include <mutex>
#include <optional>
#include <string>

#include "application/detached_unit.h"
#include "handle_registry.h"
#include "sluice/application.h"

namespace sluice::jni {

class ClientUnit {
 public:
  // `java_unit`: the org.sluice.Unit (any reference kind; a global reference is kept).
  ClientUnit(JNIEnv* env, Unit unit, jobject java_unit);
  // Deletes the global reference (through the calling thread's JNIEnv; every owner is a
  // thread in a native method). REQUIRES: the unit ended (end() or finish() ran).
  ~ClientUnit();
  ClientUnit(const ClientUnit&) = delete;
  ClientUnit& operator=(const ClientUnit&) = delete;

  // The next result: its handle, with binding id, size and key written to `mailbox` (16 bytes,
  // see org.sluice.Peer), or 0 at the end of the results. Blocks until a result arrives or the
  // unit ends. Throws StaleHandle once the results were discarded (discard()).
  jlong read(JNIEnv* env, std::byte* mailbox);
  // A fresh read-only org.sluice.Buffer of `peer` over a shared (broadcast) block lent as
  // `handle` (local reference); the registry keeps it to mark it released later.
  jobject shared(JNIEnv* env, jobject peer, jlong handle);
  // Takes a result buffer back (its block returns to its pool). A handle already taken back
  // is ignored. True when the unit is now done from the client's side: remove it.
  bool release(JNIEnv* env, jlong handle);

  // Reads and discards what is left of the results, waits until the unit ended and delivers
  // its report to the Java Unit. True when no result buffer is out: remove it.
  bool finish(JNIEnv* env);
  // From now on results are not lent any more: read() throws StaleHandle(`why`) unless the
  // results had already ended. Buffers still out go back to their pools; their Java objects
  // become stale (IllegalStateException on use). Call end() next.
  void discard(JNIEnv* env, const std::string& why);
  // finish() after discard(): drains, waits, delivers the report with the reason.
  void end(JNIEnv* env) { (void)finish(env); }

  // Unit.close(), which never waits: discards as discard(`why`) does, then detach().
  void close(JNIEnv* env, const std::string& why);
  // Lets the application read and drop what is left of the results once the unit runs (as
  // ~Unit does in C++; nothing is left when they ended), so that the unit runs to its end and
  // the next one after it. From then on finish() waits for the end without reading, and
  // finish_if_ended() can tell without waiting. Never waits; safe to call more than once.
  void detach(JNIEnv* env);
  // After detach(): when the unit has ended, delivers its report (once) and returns true if no
  // result buffer is out (remove it then). Never waits.
  bool finish_if_ended(JNIEnv* env);

  // Fails the unit with stage "cancelled" (sluice::Unit::cancel).
  void cancel() { unit_.cancel(); }
  std::uint64_t index() const { return unit_.index(); }

 private:
  void deliver(JNIEnv* env, const UnitReport& report, const std::string& why);
  // deliver() with the reason discard() gave, and the unit marked reported; what finish()
  // returns.
  bool report_to_java(JNIEnv* env, const UnitReport& report);

  Unit unit_;
  jobject java_;  // global reference to the org.sluice.Unit

  // Held while unit_'s results are read or drained; timed, so that a reader waiting for a
  // drain notices a discard (read()).
  std::timed_mutex read_mu_;
  std::mutex detach_mu_;  // one detach() at a time

  std::mutex mu_;  // guards what follows
  HandleRegistry registry_;  // the result buffers Java holds
  std::string discarded_;    // why results are no longer lent; "" while they are
  bool results_ended_ = false;
  bool reported_ = false;    // the report went to Java
  // Set by detach(): the unit, whose end finish() waits for without reading (the application's
  // drainer reads). unit_ stays as it is: a reader may be inside it.
  std::optional<DetachedUnit> detached_;
};

}  // namespace sluice::jni

#endif  // SLUICE_JNI_APPLICATION_CLIENT_UNIT_H_
