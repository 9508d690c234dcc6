package org.sluice.bench;

import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;

/**
 * As java_bench's C++ BenchSink: read, touch one byte (or, with fill, copy every byte out to a
 * private array), give the buffer back.
 */
public final class Sink implements Filter {
  static volatile long sink;

  @Override
  public void process(Context ctx) {
    InputStream in = ctx.input("in");
    boolean fill = ctx.argBoolean("fill", false);
    byte[] data = new byte[fill ? (int) ctx.argLong("size") : 0];
    long sum = 0;
    for (Buffer b; (b = in.read()) != null; ) {
      if (fill) {
        b.data().get(0, data, 0, b.size());
        sum += data[0];
      } else {
        sum += b.data().get(0);
      }
      b.close();
    }
    sink = sum;
  }
}
