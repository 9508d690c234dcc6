// JavaFilter: the proxy filter. A C++ sluice::Filter that holds a global reference to a Java
// org.sluice.Filter and forwards init/process/finalize to it, so that the runtime treats Java
// filters like any other (GNU Radio's block_gateway, for Java).
//
// Per unit of work it makes one org.sluice.Context (and registers the copy's sluice::Context
// under a handle); when the unit ends, that context and the streams it returned expire. After
// process and finalize it takes back the buffers the Java filter neither wrote nor closed, with
// a warning. A Java exception becomes sluice::Error carrying the full stack trace, or
// sluice::Aborted for an AbortedException (the run is already stopping).
//
// Thread safety: created, used and destroyed on its copy's thread, which must be attached
// (JavaBackend::thread_started).
#ifndef SLUICE_JNI_PROXY_FILTER_H_
#define SLUICE_JNI_PROXY_FILTER_H_

#include <jni.h>

#include "copy_state.h"
#include "sluice/filter.h"

namespace sluice::jni {

class JavaFilter final : public Filter {
 public:
  // `filter`: the Java object (any reference kind; the proxy keeps its own global reference).
  JavaFilter(JNIEnv* env, jobject filter);
  ~JavaFilter() override;

  void init(Context& ctx) override;
  void process(Context& ctx) override;
  void finalize(Context& ctx) override;

 private:
  void begin_unit(Context& ctx);
  void end_unit();
  // Calls `method` on the Java filter; then takes back leftover buffers (warning when the
  // call returned normally), then rethrows the call's exception if any.
  void call(jmethodID method, Context& ctx, const char* stage);
  // What the copy's input streams read ahead (natives.cc, nRead) goes back to the pools with
  // the rest of its buffers: Java drops it first, or a read() in finalize would hand out a
  // released buffer. Warns about it, as unread, when `ctx` is given.
  void drop_read_ahead(Context* ctx, const char* stage);
  void release_buffers(Context* ctx, const char* stage);

  JNIEnv* const env_;
  CopyState state_;
  CopyState* const previous_;  // the thread's CopyState before this one (normally none)
  jobject filter_;             // global references, all
  jobject mailbox_ = nullptr;  // direct ByteBuffer over state_.mailbox
  jobject peer_ = nullptr;     // org.sluice.Peer, made at the first unit
  jobject context_ = nullptr;  // org.sluice.Context of the current unit
};

}  // namespace sluice::jni

#endif  // SLUICE_JNI_PROXY_FILTER_H_
