package org.sluice.nativetest;

import java.nio.ByteBuffer;
import org.sluice.Buffer;

/** The test record format of testing/graph_test_filters.h, in Java: check, transform, stamp. */
final class Records {
  static final int HEADER = 48;
  static final int MAGIC = 0x6a617661;

  private Records() {}

  static long mix(long x) {
    x ^= x >>> 30;
    x *= 0xbf58476d1ce4e5b9L;
    x ^= x >>> 27;
    x *= 0x94d049bb133111ebL;
    return x ^ (x >>> 31);
  }

  // sequenced::checksum over the payload, mixed with source, seq and transforms.
  static long checksum(ByteBuffer d, int size) {
    int n = size - HEADER;
    long sum = n;
    int i = 0;
    for (; i + 8 <= n; i += 8) sum = (sum ^ d.getLong(HEADER + i)) * 0x100000001b3L + i;
    for (; i < n; i++) sum = (sum ^ (d.get(HEADER + i) & 0xff)) * 0x100000001b3L + i;
    long source = d.getInt(4) & 0xffffffffL;
    long transforms = d.getInt(20) & 0xffffffffL;
    return mix(sum) ^ (source * 0x9e3779b97f4a7c15L) ^ (d.getLong(8) * 0xc2b2ae3d27d4eb4fL) ^ transforms;
  }

  // Checks magic, checksum, payload and hop order (next[hop] is the lowest acceptable hop seq);
  // throws IllegalStateException naming the record.
  static void check(Buffer b, long[] next, String where) {
    ByteBuffer d = b.data();
    int size = b.size();
    if (size < HEADER || d.getInt(0) != MAGIC) throw new IllegalStateException(where + ": not a record");
    long seq = d.getLong(8);
    int transforms = d.getInt(20);
    String id = where + ": source " + d.getInt(4) + " seq " + seq;
    if (checksum(d, size) != d.getLong(32)) throw new IllegalStateException(id + ": checksum mismatch");
    for (int i = 0; i < size - HEADER; i++) {
      if (d.get(HEADER + i) != (byte) (seq + 7L * i + transforms)) {
        throw new IllegalStateException(id + ": payload byte " + i + " wrong after " + transforms + " transforms");
      }
    }
    int hop = d.getInt(16);
    long hopSeq = d.getLong(24);
    if (hopSeq < next[hop]) {
      throw new IllegalStateException(id + ": from upstream copy " + hop + " hop seq " + hopSeq + " after " + (next[hop] - 1));
    }
    next[hop] = hopSeq + 1;
  }

  // Adds 1 to every payload byte, counts it, re-checksums: a write the sink can verify.
  static void transform(Buffer b) {
    ByteBuffer d = b.data();
    int size = b.size();
    for (int i = HEADER; i < size; i++) d.put(i, (byte) (d.get(i) + 1));
    d.putInt(20, d.getInt(20) + 1);
    d.putLong(32, checksum(d, size));
  }

  static void stamp(Buffer b, int hop, long hopSeq) {
    ByteBuffer d = b.data();
    d.putInt(16, hop);
    d.putLong(24, hopSeq);
  }
}
