package com.example;

import java.nio.charset.StandardCharsets;
import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;

/** A sink: prints each buffer's bytes to standard output. */
public final class Print implements Filter {
  @Override
  public void process(Context ctx) {
    InputStream in = ctx.input("in");
    for (Buffer b; (b = in.read()) != null; ) {
      byte[] text = new byte[b.size()];
      b.data().get(0, text);
      b.close();
      System.out.print(new String(text, StandardCharsets.UTF_8));
      System.out.flush();
    }
  }
}
