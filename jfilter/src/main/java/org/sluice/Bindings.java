package org.sluice;

import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.util.Arrays;

// The direct ByteBuffer over each pool block that has reached Java, by binding id: made once
// per block by the native side, which assigns the ids (one per block, reused after the block's
// pool is destroyed) and keeps the id in the block's binding. Each filter copy makes its own
// Buffer object around it (Peer), so that a copy's objects never change hands; this table is
// what lets a copy find the block's memory without any JNI call or allocation.
//
// Each such ByteBuffer holds a share of its pool's memory (native: BlockMemory::share), let go
// by a Cleaner once the ByteBuffer and every view made from it (Buffer.data(), a duplicate or
// slice a filter or a client made) are garbage: a view kept past its buffer, or past its pool
// (an Application closed), reads stale bytes or zeros but never unmapped memory.
final class Bindings {
  private static volatile ByteBuffer[] table = new ByteBuffer[1024];
  private static final Cleaner CLEANER = Cleaner.create(task -> {
    Thread t = new Thread(task, "sluice-cleaner");
    t.setDaemon(true);
    return t;
  });

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

  // Called by the native side for each ByteBuffer it makes over a block: `share` (a native
  // pointer) is let go of once `memory` is unreachable.
  static void keep(ByteBuffer memory, long share) {
    CLEANER.register(memory, new Release(share));
  }

  // Holds no reference to the ByteBuffer (a Cleaner's action must not, or it is never run).
  private static final class Release implements Runnable {
    private final long share;

    Release(long share) {
      this.share = share;
    }

    @Override
    public void run() {
      nRelease(share);
    }
  }

  private static native void nRelease(long share);
}
