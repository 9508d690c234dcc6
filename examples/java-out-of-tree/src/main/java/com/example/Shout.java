package com.example;

import java.nio.charset.StandardCharsets;
import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.OutputStream;

/** A source: writes args.count lines "HELLO i", shouted by {@link #shout}. */
public final class Shout implements Filter {
  /** The text this filter writes for line {@code i}. */
  public static String shout(String word, long i) {
    return word.toUpperCase(java.util.Locale.ROOT) + " " + i + "\n";
  }

  @Override
  public void process(Context ctx) {
    OutputStream out = ctx.output("out");
    String word = ctx.arg("word", "hello");
    long count = ctx.argLong("count", 3);
    for (long i = 0; i < count; i++) {
      byte[] text = shout(word, i).getBytes(StandardCharsets.UTF_8);
      Buffer b = out.allocate();
      b.data().put(0, text);
      b.size(text.length);
      out.write(b);
    }
  }
}
