// Slot bindings: the Java face of each pool block, made once and reused.
//
// The first time a block reaches a Java filter, the bridge makes one direct ByteBuffer over the
// block's memory (full capacity) and one org.sluice.Buffer around it, files the Buffer in
// org.sluice.Bindings under a small integer id, and keeps the id in the block's
// detail::Slot::binding. Each later read or allocate of that block only posts the id: Java finds
// the object by index, so the hot path makes no object and no JNI call. When the block's pool is
// destroyed, the binding deleter returns the id for reuse (no JNI needed: the next block bound
// to the id replaces the Java object).
#ifndef SLUICE_JNI_BINDINGS_H_
#define SLUICE_JNI_BINDINGS_H_

#include <jni.h>

#include <cstdint>

#include "sluice/buffer.h"

namespace sluice::jni {

// The Bindings id of the block under `buffer` (made now if the block has none), or -1 when
// the block is shared (broadcast): its holders cannot share one Java object, so each gets a
// fresh one (Buffer.nShared). Throws JavaPending if Java failed (out of memory).
std::int32_t binding_id(JNIEnv* env, const Buffer& buffer);

// A fresh read-only org.sluice.Buffer over `buffer`'s block (a local reference).
jobject shared_buffer_object(JNIEnv* env, const Buffer& buffer);

// Installs the pool's binding deleter. Called once, when the bridge library loads.
void install_binding_deleter();

}  // namespace sluice::jni

#endif  // SLUICE_JNI_BINDINGS_H_
