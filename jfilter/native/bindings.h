// Slot bindings: the Java face of each pool block, made once and reused.
//
// The first time a block reaches a Java filter, the bridge makes one direct ByteBuffer over the
// block's memory (full capacity), files it in org.sluice.Bindings under a small integer id, and
// keeps the id in the block's detail::Slot::binding. Each later read or allocate of that block
// only posts the id: Java finds the memory by index, and the copy's own org.sluice.Buffer for
// the block in its Peer (made in Java the first time the block reaches that copy), so the hot
// path makes no object and no JNI call. When the block's pool is destroyed, the binding deleter
// returns the id for reuse (no JNI needed: the next block bound to the id replaces the
// ByteBuffer, and each copy replaces its Buffer when it sees another ByteBuffer under the id).
#ifndef SLUICE_JNI_BINDINGS_H_
#define SLUICE_JNI_BINDINGS_H_

#include <jni.h>

#include <cstdint>

#include "jni_util.h"
#include "sluice/buffer.h"

namespace sluice::jni {

// The Bindings id of the block under `buffer` (made now if the block has none), or -1 when
// the block is shared (broadcast): its holders hold it at once, so each gets a fresh Java
// object per read (Buffer.nShared). Throws JavaPending if Java failed (out of memory).
SLUICE_JNI_SHARED std::int32_t binding_id(JNIEnv* env, const Buffer& buffer);

// A fresh read-only org.sluice.Buffer of `peer` (an org.sluice.Peer) over `buffer`'s block (a
// local reference), through the block's binding (made now if it has none). Throws JavaPending
// if Java failed.
SLUICE_JNI_SHARED jobject shared_buffer_object(JNIEnv* env, jobject peer, const Buffer& buffer);

// Installs the pool's binding deleter. Called once, when the bridge library loads.
void install_binding_deleter();

}  // namespace sluice::jni

#endif  // SLUICE_JNI_BINDINGS_H_
