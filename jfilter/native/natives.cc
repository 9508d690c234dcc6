// The native methods of org.sluice: each resolves its handles through the calling copy's
// registry, does the work through the ordinary C++ API, and turns any C++ exception into a Java
// one (guarded, jni_util.h). Signatures come from the headers javac -h generates, so they
// cannot drift from the Java declarations; java_types.cc registers them with RegisterNatives,
// after checking its descriptors against the classes (register_natives.h).
//
// Hot path: InputStream.nRead, OutputStream.nAllocate / nWrite. Each is one down-call that
// makes no Java object once a pool block has its binding: an allocated buffer's binding id,
// size and key go to the copy's mailbox and its handle is the return value; a read describes
// a batch there, which the InputStream copies out (Java then lends the copy's own Buffer
// object for each block: org.sluice.Peer). A loop that reads and closes crosses once
// per batch of up to 8 buffers: close() leaves the handle in the mailbox for the next call
// to take back (CopyState::drain_closed). A loop that allocates and writes crosses once a
// buffer: nWrite lends the next block with the write (a spare, for the next allocate()).
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>

#include "bindings.h"
#include "copy_state.h"
#include "jni_util.h"
#include "org_sluice_Buffer.h"
#include "org_sluice_Context.h"
#include "org_sluice_InputStream.h"
#include "org_sluice_Logger.h"
#include "org_sluice_OutputStream.h"
#include "sluice/sluice.h"
#include "stream/output_port.h"

using sluice::jni::CopyState;
using sluice::jni::HandleRegistry;
using Kind = sluice::jni::HandleRegistry::Kind;

namespace {

// Registers `buffer` with the copy and describes it in the mailbox; returns its handle.
jlong lend(JNIEnv* env, CopyState& copy, sluice::Buffer&& buffer) {
  const std::int32_t binding = sluice::jni::binding_id(env, buffer);
  copy.post(binding, static_cast<std::uint32_t>(buffer.size()), buffer.key());
  return copy.registry.add_buffer(std::move(buffer), binding);
}

// lend(), for a buffer the stream may not have given (end of work, nothing free): 0 then.
jlong lend_if_any(JNIEnv* env, CopyState& copy, std::optional<sluice::Buffer>&& buffer) {
  return buffer ? lend(env, copy, std::move(*buffer)) : 0;
}

sluice::Context& context_of(CopyState& copy, jlong handle) {
  return copy.registry.get<sluice::Context>(handle, Kind::kContext);
}

}  // namespace

// ---- Buffer

JNIEXPORT void JNICALL Java_org_sluice_Buffer_nClose(JNIEnv* env, jclass, jlong handle) {
  return sluice::jni::guarded(env, [&] {
    CopyState& copy = sluice::jni::current_copy();
    copy.drain_closed(env);
    sluice::Buffer released = copy.registry.take_buffer(env, handle);
  });
}

JNIEXPORT jobject JNICALL Java_org_sluice_Buffer_nShared(JNIEnv* env, jclass, jobject peer, jlong handle) {
  return sluice::jni::guarded(env, [&] {
    HandleRegistry& registry = sluice::jni::current_copy().registry;
    jobject buffer = sluice::jni::shared_buffer_object(env, peer, registry.buffer(handle));
    jobject kept = env->NewGlobalRef(buffer);
    if (kept == nullptr) throw sluice::jni::JavaPending{};
    registry.keep_java(handle, kept);  // to mark it released if the filter never gives it back
    return buffer;
  });
}

// ---- InputStream

// Reads a buffer, waiting for it, and with it up to `room` - 1 more (at most kReadAhead)
// that the stream already took off the queue (InputStream::available: no wait). Each is
// registered, and described in the copy's mailbox (CopyState::post_read); Java copies the
// batch out and hands the buffers to the filter one read() at a time (org.sluice.InputStream).
// Returns how many; 0 at end of work. A shared block ends the batch (Java makes its Buffer
// object when it hands it out).
//
// Why 8: the blocks of a batch the filter closes go back to their pool only at the copy's
// next native call, so a batch keeps up to its size from the producer (the stream's pool has
// that many blocks more for it: Graph::pool_count). With 64 KiB buffers a
// queue holds 16; batches of 32 (or 16) made a C++ source -> Java sink pair slower than one
// read per call, batches of 4-8 faster (bench/RESULTS.md, "2026-12-08").
JNIEXPORT jint JNICALL Java_org_sluice_InputStream_nRead(JNIEnv* env, jclass, jlong handle, jint room) {
  return sluice::jni::guarded(env, [&]() -> jint {
    constexpr jint kReadAhead = static_cast<jint>(CopyState::kMaxReadBatch);
    CopyState& copy = sluice::jni::current_copy();
    copy.drain_closed(env);
    sluice::InputStream& in = copy.registry.get<sluice::InputStream>(handle, Kind::kInput);
    copy.make_room_to_hold_back();  // before anything is taken off the queue
    std::optional<sluice::Buffer> b = copy.take_held_back(handle);  // older than anything still queued
    if (!b) b = in.read();
    if (!b) return 0;
    const jint limit = std::clamp(room, 1, kReadAhead);
    jint n = 0;
    for (;;) {
      const std::uint32_t size = static_cast<std::uint32_t>(b->size());
      const std::uint64_t key = b->key();
      std::int32_t binding;
      jlong registered;
      try {
        binding = sluice::jni::binding_id(env, *b);
        registered = copy.registry.add_buffer(std::move(*b), binding);  // moves only on success
      } catch (...) {
        // This buffer waits for the stream's next read (whose bind fails again, to the
        // filter, unless the JVM found memory meanwhile); the batch so far goes to Java. The
        // first buffer's failure goes to the filter now. None is held back for this stream
        // here: it was taken above, and a batch stops at its first failure.
        copy.hold_back(handle, std::move(*b));
        if (n == 0) throw;
        env->ExceptionClear();
        break;
      }
      copy.post_read(static_cast<std::size_t>(n), registered, binding, size, key);
      ++n;
      if (binding < 0 || n >= limit || in.available() == 0) break;
      b = in.read();  // inline: taken already
    }
    return n;
  });
}

// ---- OutputStream

JNIEXPORT jlong JNICALL Java_org_sluice_OutputStream_nAllocate(JNIEnv* env, jclass, jlong handle) {
  return sluice::jni::guarded(env, [&] {
    CopyState& copy = sluice::jni::current_copy();
    copy.drain_closed(env);
    return lend(env, copy, copy.registry.get<sluice::OutputStream>(handle, Kind::kOutput).allocate());
  });
}

JNIEXPORT jlong JNICALL Java_org_sluice_OutputStream_nTryAllocate(JNIEnv* env, jclass, jlong handle) {
  return sluice::jni::guarded(env, [&] {
    CopyState& copy = sluice::jni::current_copy();
    copy.drain_closed(env);
    return lend_if_any(env, copy, copy.registry.get<sluice::OutputStream>(handle, Kind::kOutput).try_allocate());
  });
}

// With `spare`, also takes a free block of the stream's pool, if one is free now, and lends
// it (the return value; 0 when none): Java keeps it for the copy's next allocate(), which
// then needs no native call (org.sluice.OutputStream).
JNIEXPORT jlong JNICALL Java_org_sluice_OutputStream_nWrite(JNIEnv* env, jclass, jlong stream, jlong buffer,
                                                           jint size, jlong key, jboolean spare) {
  return sluice::jni::guarded(env, [&]() -> jlong {
    CopyState& copy = sluice::jni::current_copy();
    copy.drain_closed(env);
    // The buffer first: Java has already given up its handle, so the block must go somewhere
    // (the stream, or back to its pool when the stream handle is stale).
    sluice::Buffer b = copy.registry.take_buffer(env, buffer);
    sluice::OutputStream& out = copy.registry.get<sluice::OutputStream>(stream, Kind::kOutput);
    b.resize(static_cast<std::size_t>(size));  // Java checked 0 <= size <= capacity
    b.set_key(static_cast<std::uint64_t>(key));
    out.write(std::move(b));
    if (!spare) return 0;
    // The write is done: a spare that cannot be had (the run is stopping, the JVM has no
    // memory for a first binding) is simply not had, and the write does not fail for it.
    try {
      return lend_if_any(env, copy, out.try_allocate());
    } catch (...) {
      if (env->ExceptionCheck()) env->ExceptionClear();
      return jlong{0};
    }
  });
}

JNIEXPORT jint JNICALL Java_org_sluice_OutputStream_nBufferSize(JNIEnv* env, jclass, jlong handle) {
  return sluice::jni::guarded(env, [&] {
    auto& out = sluice::jni::current_copy().registry.get<sluice::OutputStream>(handle, Kind::kOutput);
    return static_cast<jint>(out.buffer_size());
  });
}

// The stream an output writes to ("a.out -> b.in"), for the messages of its refusals; "" for
// an output that is not the runtime's own port.
JNIEXPORT jstring JNICALL Java_org_sluice_OutputStream_nStreamLabel(JNIEnv* env, jclass, jlong handle) {
  return sluice::jni::guarded(env, [&] {
    auto& out = sluice::jni::current_copy().registry.get<sluice::OutputStream>(handle, Kind::kOutput);
    const auto* port = dynamic_cast<const sluice::OutputPort*>(&out);
    return sluice::jni::to_jstring(env, port != nullptr ? port->stream_label() : std::string());
  });
}

// ---- Context

JNIEXPORT jlong JNICALL Java_org_sluice_Context_nInput(JNIEnv* env, jclass, jlong handle, jstring port) {
  return sluice::jni::guarded(env, [&] {
    CopyState& copy = sluice::jni::current_copy();
    sluice::InputStream& in = context_of(copy, handle).input(sluice::jni::to_utf8(env, port));
    return copy.registry.add(Kind::kInput, &in);
  });
}

JNIEXPORT jlong JNICALL Java_org_sluice_Context_nOutput(JNIEnv* env, jclass, jlong handle, jstring port) {
  return sluice::jni::guarded(env, [&] {
    CopyState& copy = sluice::jni::current_copy();
    sluice::OutputStream& out = context_of(copy, handle).output(sluice::jni::to_utf8(env, port));
    return copy.registry.add(Kind::kOutput, &out);
  });
}

JNIEXPORT jboolean JNICALL Java_org_sluice_Context_nHasInput(JNIEnv* env, jclass, jlong handle, jstring port) {
  return sluice::jni::guarded(env, [&] {
    return context_of(sluice::jni::current_copy(), handle).has_input(sluice::jni::to_utf8(env, port));
  });
}

JNIEXPORT jboolean JNICALL Java_org_sluice_Context_nHasOutput(JNIEnv* env, jclass, jlong handle, jstring port) {
  return sluice::jni::guarded(env, [&] {
    return context_of(sluice::jni::current_copy(), handle).has_output(sluice::jni::to_utf8(env, port));
  });
}

JNIEXPORT jstring JNICALL Java_org_sluice_Context_nArg(JNIEnv* env, jclass, jlong handle, jstring key,
                                                      jboolean required) {
  return sluice::jni::guarded(env, [&] {
    sluice::Context& ctx = context_of(sluice::jni::current_copy(), handle);
    const std::string name = sluice::jni::to_utf8(env, key);
    if (required) return sluice::jni::to_jstring(env, ctx.arg<std::string>(name));
    const std::string* raw = ctx.find_arg(name);
    return raw == nullptr ? nullptr : sluice::jni::to_jstring(env, *raw);
  });
}

JNIEXPORT jlong JNICALL Java_org_sluice_Context_nArgLong(JNIEnv* env, jclass, jlong handle, jstring key) {
  return sluice::jni::guarded(env, [&] {
    return context_of(sluice::jni::current_copy(), handle).arg<long long>(sluice::jni::to_utf8(env, key));
  });
}

JNIEXPORT jdouble JNICALL Java_org_sluice_Context_nArgDouble(JNIEnv* env, jclass, jlong handle, jstring key) {
  return sluice::jni::guarded(env, [&] {
    return context_of(sluice::jni::current_copy(), handle).arg<double>(sluice::jni::to_utf8(env, key));
  });
}

JNIEXPORT jboolean JNICALL Java_org_sluice_Context_nArgBoolean(JNIEnv* env, jclass, jlong handle, jstring key) {
  return sluice::jni::guarded(env, [&] {
    return context_of(sluice::jni::current_copy(), handle).arg<bool>(sluice::jni::to_utf8(env, key));
  });
}

JNIEXPORT jstring JNICALL Java_org_sluice_Context_nArgPath(JNIEnv* env, jclass, jlong handle, jstring key) {
  return sluice::jni::guarded(env, [&] {
    sluice::Context& ctx = context_of(sluice::jni::current_copy(), handle);
    return sluice::jni::to_jstring(env, ctx.arg<std::filesystem::path>(sluice::jni::to_utf8(env, key)).string());
  });
}

JNIEXPORT jbyteArray JNICALL Java_org_sluice_Context_nWorkBytes(JNIEnv* env, jclass, jlong handle) {
  return sluice::jni::guarded(env, [&]() -> jbyteArray {
    const std::string& work = context_of(sluice::jni::current_copy(), handle).work();
    jbyteArray bytes = env->NewByteArray(static_cast<jsize>(work.size()));
    if (bytes == nullptr) return nullptr;  // OutOfMemoryError pending
    env->SetByteArrayRegion(bytes, 0, static_cast<jsize>(work.size()), reinterpret_cast<const jbyte*>(work.data()));
    return bytes;
  });
}

// ---- Logger (no handle: a logger is only its prefix, usable from any thread)

JNIEXPORT void JNICALL Java_org_sluice_Logger_nLog(JNIEnv* env, jclass, jstring prefix, jint level,
                                                  jstring message) {
  return sluice::jni::guarded(env, [&] {
    const auto lvl = static_cast<sluice::LogLevel>(level < 0 ? 0 : level > 3 ? 3 : level);
    if (lvl < sluice::Logger::level()) return;
    sluice::Logger(sluice::jni::to_utf8(env, prefix)).log(lvl, sluice::jni::to_utf8(env, message));
  });
}
