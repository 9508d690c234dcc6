package org.sluice.examples;

import java.nio.ByteBuffer;
import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;
import org.sluice.OutputStream;

/**
 * The query server's per-query transform (examples/query.yaml): applies the query's
 * {@code op} (none, invert, threshold:T) to every pixel of each strip, in place in the native
 * block, and passes the strip on. A strip is a 16-byte header, then its pixels.
 */
public final class QueryTransform implements Filter {
  private static final int HEADER = 16;

  @Override
  public void process(Context ctx) {
    String op = "none";
    for (String item : ctx.work().trim().split("\\s+")) {
      if (item.startsWith("op=")) op = item.substring(3);
    }
    int threshold = -1;
    boolean invert = op.equals("invert");
    if (op.startsWith("threshold:")) threshold = Integer.parseInt(op.substring("threshold:".length()));
    InputStream in = ctx.input("in");
    OutputStream out = ctx.output("out");
    for (Buffer b; (b = in.read()) != null; ) {
      if (invert || threshold >= 0) {
        ByteBuffer data = b.data();
        for (int i = HEADER; i < b.size(); i++) {
          int p = data.get(i) & 0xff;
          int q = invert ? 255 - p : (p >= threshold ? 255 : 0);
          data.put(i, (byte) q);
        }
      }
      out.write(b);
    }
  }
}
