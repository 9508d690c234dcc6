#include "proxy_filter.h"

#include <string>

#include "java_types.h"
#include "jni_util.h"
#include "sluice/error.h"

namespace sluice::jni {

constinit thread_local CopyState* current_copy_state = nullptr;

JavaFilter::JavaFilter(JNIEnv* env, jobject filter)
    : env_(env), previous_(current_copy_state), filter_(env->NewGlobalRef(filter)) {
  if (filter_ == nullptr) throw Error("the JVM is out of memory (no global reference for a filter)");
  current_copy_state = &state_;
}

JavaFilter::~JavaFilter() {
  try {
    LocalFrame frame(env_, 16);
    end_unit();
    release_buffers(nullptr, nullptr);
  } catch (...) {
    env_->ExceptionClear();  // the filter is going away; nothing to report to
  }
  for (jobject ref : {context_, peer_, mailbox_, filter_}) {
    if (ref != nullptr) env_->DeleteGlobalRef(ref);
  }
  current_copy_state = previous_;
}

namespace {
// Runs `body`, turning a JNI failure it signalled with JavaPending (out of memory, say) into
// the C++ exception that describes the pending Java one.
template <typename F>
void pending_as_error(JNIEnv* env, F&& body) {
  try {
    body();
  } catch (const JavaPending&) {
    rethrow_java_exception(env);
    throw Error("a JNI call failed without a Java exception (internal error)");
  }
}
}  // namespace

void JavaFilter::init(Context& ctx) {
  pending_as_error(env_, [&] {
    LocalFrame frame(env_, 16);
    end_unit();  // the previous unit's, if its finalize never ran (it failed)
    begin_unit(ctx);
    call(types().filter_init, ctx, "init");
  });
}

void JavaFilter::process(Context& ctx) {
  pending_as_error(env_, [&] {
    LocalFrame frame(env_, 16);
    if (context_ == nullptr) begin_unit(ctx);
    call(types().filter_process, ctx, "process");
  });
}

void JavaFilter::finalize(Context& ctx) {
  pending_as_error(env_, [&] {
    LocalFrame frame(env_, 16);
    if (context_ == nullptr) begin_unit(ctx);
    call(types().filter_finalize, ctx, "finalize");
    end_unit();
  });
}

void JavaFilter::begin_unit(Context& ctx) {
  const JavaTypes& t = types();
  if (peer_ == nullptr) {
    jobject mailbox = env_->NewDirectByteBuffer(state_.mailbox, sizeof state_.mailbox);
    rethrow_java_exception(env_);
    mailbox_ = env_->NewGlobalRef(mailbox);
    jobject peer = env_->NewObject(t.peer, t.peer_new, mailbox_, to_jstring(env_, ctx.filter_name()),
                                   static_cast<jint>(ctx.copy_index()), static_cast<jint>(ctx.copy_count()),
                                   to_jstring(env_, ctx.host()), to_jstring(env_, ctx.topology_dir()));
    rethrow_java_exception(env_);
    peer_ = env_->NewGlobalRef(peer);
  }
  const jlong handle = state_.registry.add(HandleRegistry::Kind::kContext, &ctx);
  jobject context = env_->NewObject(t.context, t.context_new, peer_, handle, to_jstring(env_, ctx.work()),
                                    static_cast<jlong>(ctx.work_index()));
  rethrow_java_exception(env_);
  context_ = env_->NewGlobalRef(context);
}

void JavaFilter::end_unit() {
  state_.registry.release_unit();
  // Held back for streams whose handles just went stale (init read, then threw): no read
  // can ask for them any more.
  state_.held_back.clear();
  if (context_ == nullptr) return;
  env_->CallVoidMethod(context_, types().context_expire);
  env_->DeleteGlobalRef(context_);
  context_ = nullptr;
  rethrow_java_exception(env_);
}

void JavaFilter::call(jmethodID method, Context& ctx, const char* stage) {
  env_->CallVoidMethod(filter_, method, context_);
  jthrowable thrown = nullptr;
  if (env_->ExceptionCheck()) {
    thrown = env_->ExceptionOccurred();
    env_->ExceptionClear();
  }
  if (method != types().filter_init) {
    drop_read_ahead(thrown == nullptr ? &ctx : nullptr, stage);
    release_buffers(thrown == nullptr ? &ctx : nullptr, stage);
  }
  if (thrown != nullptr) {
    env_->Throw(thrown);
    rethrow_java_exception(env_);
  }
}

void JavaFilter::drop_read_ahead(Context* ctx, const char* stage) {
  jstring warn_as = nullptr;  // the stage's name: warn about what was dropped
  if (ctx != nullptr) {
    warn_as = env_->NewStringUTF(stage);
    env_->ExceptionClear();  // null when the JVM is out of memory: no warning then
  }
  env_->CallVoidMethod(context_, types().context_drop_read_ahead, warn_as);
  env_->ExceptionClear();  // cannot fail short of a VM error; the release goes on
  if (!state_.held_back.empty() && ctx != nullptr) {
    ctx->log().warn(std::string(stage) + " returned with " + std::to_string(state_.held_back.size()) +
                    " unread buffer(s) the runtime had held back from a read (the JVM was out of memory); " +
                    "they were discarded");
  }
  state_.held_back.clear();
}

void JavaFilter::release_buffers(Context* ctx, const char* stage) {
  state_.drain_closed(env_);  // closed by the filter: not held
  if (state_.registry.live_buffers() == 0) return;
  const JavaTypes& t = types();
  // Held by the filter; the others were spares its output streams kept, or buffers an input
  // stream read ahead (InputStream.nRead) and had not handed out yet.
  std::size_t held = 0;
  state_.registry.release_buffers(env_, [&](std::int32_t binding, jlong handle, jobject shared) {
    // Mark the Java object released, so data()/size() throw IllegalStateException too.
    if (shared != nullptr) {
      env_->SetLongField(shared, t.buffer_handle, 0);
      ++held;
    } else if (binding >= 0) {
      const jboolean filters = env_->CallBooleanMethod(peer_, t.peer_expire, binding, handle);
      env_->ExceptionClear();  // expire() cannot fail short of a VM error; the release goes on
      if (filters) ++held;
    }
    // A shared block without its Java object was read ahead, never handed out: not held.
  });
  if (held == 0) return;
  if (ctx != nullptr) {
    ctx->log().warn(std::string(stage) + " returned holding " + std::to_string(held) +
                    " buffer(s) it neither wrote nor closed; they went back to their pools "
                    "(write or close() every buffer you read or allocate)");
  }
}

}  // namespace sluice::jni
