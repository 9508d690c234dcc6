package org.sluice;

import java.nio.ByteBuffer;
import java.util.Arrays;

// The direct ByteBuffer over each pool block that has reached Java, by binding id: made once
// per block by the native side, which assigns the ids (one per block, reused after the block's
// pool is destroyed) and keeps the id in the block's binding. Each filter copy makes its own
// Buffer object around it (Peer), so that a copy's objects never change hands; this table is
// what lets a copy find the block's memory without any JNI call or allocation.
final class Bindings {
  private static volatile ByteBuffer[] table = new ByteBuffer[1024];

  private Bindings() {}

  static ByteBuffer get(int id) {
    return table[id];
  }

  // Called by the native side, on the thread that creates the binding, before the id is
  // published to any other thread through the block.
  static synchronized void put(int id, ByteBuffer memory) {
    ByteBuffer[] t = table;
    if (id >= t.length) t = Arrays.copyOf(t, Math.max(id + 1, t.length * 2));
    t[id] = memory;
    table = t; // volatile write: publishes the element with the array
  }
}
