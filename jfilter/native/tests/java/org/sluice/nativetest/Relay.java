package org.sluice.nativetest;

import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;
import org.sluice.OutputStream;

/**
 * Checks each record, transforms its payload in place (transform, default true) or into a
 * newly allocated buffer (copy: true, for shared broadcast buffers), re-stamps the hop and
 * writes it on. Copy throw_copy (default 0) throws after throw_at buffers, from a nested
 * method, so that the stack trace has depth.
 */
public final class Relay implements Filter {
  @Override
  public void process(Context ctx) {
    InputStream in = ctx.input("in");
    OutputStream out = ctx.output("out");
    boolean transform = ctx.argBoolean("transform", true);
    boolean copy = ctx.argBoolean("copy", false);
    long throwAt = ctx.argLong("throw_at", -1);
    long throwCopy = ctx.argLong("throw_copy", 0);
    int me = ctx.copyIndex();
    String where = ctx.filterName() + "#" + me;
    long[] next = new long[1024];
    long seq = 0;
    for (Buffer b; (b = in.read()) != null; ) {
      if (me == throwCopy && seq == throwAt) refuse(me, seq);
      Records.check(b, next, where);
      Buffer o = b;
      if (copy) {
        o = out.allocate();
        o.size(b.size());
        o.key(b.key());
        o.data().put(0, b.data(), 0, b.size());
        b.close();
      } else if (b.isShared()) {
        throw new IllegalStateException(where + ": got a shared buffer without copy: true");
      }
      if (transform) Records.transform(o);
      Records.stamp(o, me, seq++);
      out.write(o);
    }
  }

  private static void refuse(int me, long seq) {
    throw new IllegalArgumentException("relay copy " + me + " refuses buffer " + seq);
  }
}
