package org.sluice.nativetest;

import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;

/**
 * Reads its two inputs, `a` and `b`, while the JVM is out of memory: the first read of each
 * fails with OutOfMemoryError, because the block of the stream's first buffer needs a Java
 * object to reach Java (InputStream.nRead binds it). The runtime has that buffer off its queue
 * already, and must hold it back for that stream's next read, for both streams at once. Then
 * it frees the memory and reads both to the end: each (one source copy, `count` buffers) must
 * arrive whole and in order, which it reports on `report` (Checklist).
 */
public final class HeldBackProbe implements Filter {
  @Override
  public void process(Context ctx) throws Exception {
    InputStream a = ctx.input("a");
    InputStream b = ctx.input("b");
    long count = ctx.argLong("count");
    Checklist checks = new Checklist();
    Buffer[] readAnyway = new Buffer[2]; // what a read gave although memory was short
    boolean[] failed = new boolean[2];

    Object[] hog = fillHeap();
    try {
      readAnyway[0] = a.read();
    } catch (OutOfMemoryError e) {
      failed[0] = true;
    }
    try {
      readAnyway[1] = b.read();
    } catch (OutOfMemoryError e) {
      failed[1] = true;
    }
    hog = null; // the memory is back

    checks.check("a-first-read-fails", failed[0], "it gave a buffer although the heap was full");
    checks.check("b-first-read-fails", failed[1], "it gave a buffer although the heap was full");
    InputStream[] inputs = {a, b};
    String[] names = {"a", "b"};
    for (int i = 0; i < 2; i++) {
      long seq = 0;
      long wrong = -1;
      for (Buffer x = readAnyway[i] != null ? readAnyway[i] : inputs[i].read(); x != null; x = inputs[i].read()) {
        if (x.data().getLong(8) != seq && wrong < 0) wrong = seq;
        seq++;
        x.close();
      }
      checks.check(names[i] + "-whole-and-in-order", wrong < 0 && seq == count,
          wrong >= 0 ? "seq " + wrong + " was not where expected" : seq + " buffers of " + count);
    }
    checks.send(ctx.output("report"));
  }

  // Allocates until not even the smallest object fits; returns what keeps it all alive.
  private static Object[] fillHeap() {
    Object[] head = null;
    for (int size = 1 << 20; size >= 1; ) {
      try {
        Object[] node = new Object[2];
        node[0] = head;
        node[1] = new byte[size];
        head = node;
      } catch (OutOfMemoryError e) {
        size /= 2;
      }
    }
    return head;
  }
}
