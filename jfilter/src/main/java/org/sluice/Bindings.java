package org.sluice;

import java.util.Arrays;

// The Buffer object of each pool block that has reached Java, by binding id. The native side
// assigns ids (one per block, reused after the block's pool is destroyed) and keeps the id in
// the block's binding; a read or allocate then names the id, and Java finds the object here
// without any JNI call or allocation.
final class Bindings {
  private static volatile Buffer[] table = new Buffer[1024];

  private Bindings() {}

  static Buffer get(int id) {
    return table[id];
  }

  // Called by the Buffer constructor, on the thread that creates the binding, before the
  // id is published to any other thread through the block.
  static synchronized void put(int id, Buffer buffer) {
    Buffer[] t = table;
    if (id >= t.length) t = Arrays.copyOf(t, Math.max(id + 1, t.length * 2));
    t[id] = buffer;
    table = t; // volatile write: publishes the element with the array
  }

  // Marks the object of block `id` released if it still carries `handle` (the runtime
  // took back a buffer the filter did not write or close).
  static void expire(int id, long handle) {
    Buffer b = table[id];
    if (b != null && b.handle == handle) b.handle = 0;
  }
}
