package org.sluice.bench;

import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;
import org.sluice.OutputStream;

/** The Java forwarding filter of java_bench: every buffer on, untouched. */
public final class Forward implements Filter {
  @Override
  public void process(Context ctx) {
    InputStream in = ctx.input("in");
    OutputStream out = ctx.output("out");
    for (Buffer b; (b = in.read()) != null; ) out.write(b);
  }
}
