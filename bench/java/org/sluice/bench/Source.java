package org.sluice.bench;

import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.OutputStream;

/**
 * As java_bench's C++ BenchSource: allocate, write 8 bytes (or, with fill, copy `size` bytes in
 * from a private array first), set the size, write on.
 */
public final class Source implements Filter {
  @Override
  public void process(Context ctx) {
    OutputStream out = ctx.output("out");
    long count = ctx.argLong("count");
    int size = (int) ctx.argLong("size");
    boolean fill = ctx.argBoolean("fill", false);
    byte[] data = new byte[size];
    java.util.Arrays.fill(data, (byte) 1);
    for (long i = 0; i < count; i++) {
      Buffer b = out.allocate();
      if (fill) b.data().put(0, data, 0, size);
      if (size >= 8) b.data().putLong(0, i);
      b.size(size);
      out.write(b);
    }
  }
}
