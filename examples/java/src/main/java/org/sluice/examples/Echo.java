package org.sluice.examples;

import java.nio.charset.StandardCharsets;
import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.OutputStream;

/**
 * Source. Writes the unit of work's payload ({@link Context#work()}, UTF-8) to {@code out},
 * in buffers of the stream's size, keyed 0, 1, 2... An empty payload writes nothing. The
 * source of examples/client.yaml, whose results go back to the program that submitted the
 * unit (QueryClient).
 */
public final class Echo implements Filter {
  @Override
  public void process(Context ctx) {
    OutputStream out = ctx.output("out");
    byte[] payload = ctx.work().getBytes(StandardCharsets.UTF_8);
    long key = 0;
    for (int at = 0; at < payload.length; ) {
      Buffer b = out.allocate();
      int n = Math.min(b.capacity(), payload.length - at);
      b.data().put(0, payload, at, n);
      b.size(n);
      b.key(key++);
      out.write(b);
      at += n;
    }
  }
}
