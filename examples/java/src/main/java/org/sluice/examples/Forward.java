package org.sluice.examples;

import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;
import org.sluice.OutputStream;

/**
 * Passes every buffer on unchanged (bytes, size and key): the same native block moves from
 * its input to its output. Put it between the C++ Produce and Consume filters to check that
 * a Java stage loses, duplicates and alters nothing (Consume verifies sequence and checksum).
 */
public final class Forward implements Filter {
  @Override
  public void process(Context ctx) {
    InputStream in = ctx.input("in");
    OutputStream out = ctx.output("out");
    for (Buffer b; (b = in.read()) != null; ) out.write(b);
  }
}
