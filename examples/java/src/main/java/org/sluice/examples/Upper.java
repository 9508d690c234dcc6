package org.sluice.examples;

import java.nio.ByteBuffer;
import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;
import org.sluice.OutputStream;

/**
 * Upper-cases ASCII text in place: each buffer's bytes are changed where they lie, in the
 * native block, and the same block moves on. No byte is copied between C++ and Java.
 */
public final class Upper implements Filter {
  @Override
  public void process(Context ctx) {
    InputStream in = ctx.input("in");
    OutputStream out = ctx.output("out");
    for (Buffer b; (b = in.read()) != null; ) {
      ByteBuffer data = b.data();
      for (int i = 0; i < b.size(); i++) {
        byte c = data.get(i);
        if (c >= 'a' && c <= 'z') data.put(i, (byte) (c - ('a' - 'A')));
      }
      out.write(b);
    }
  }
}
