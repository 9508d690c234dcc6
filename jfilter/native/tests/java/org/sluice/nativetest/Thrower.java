package org.sluice.nativetest;

import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;

/**
 * Throws from the stage named by arg `in` (init, process or finalize), or calls System.exit(3)
 * in the one named by arg `exit`; otherwise drains. With arg `nul`, the message holds a NUL.
 */
public final class Thrower implements Filter {
  @Override
  public void init(Context ctx) {
    maybe(ctx, "init");
  }

  @Override
  public void process(Context ctx) {
    maybe(ctx, "process");
    if (ctx.hasInput("in")) {
      for (Buffer b; (b = ctx.input("in").read()) != null; ) b.close();
    }
  }

  @Override
  public void finalize(Context ctx) {
    maybe(ctx, "finalize");
  }

  private static void maybe(Context ctx, String stage) {
    if (stage.equals(ctx.arg("in", ""))) {
      // arg `nul`: a message with a NUL character inside, which C strings would end at.
      String nul = ctx.arg("nul", "").isEmpty() ? "" : "\u0000after a NUL";
      throw new UnsupportedOperationException("boom in " + stage + nul);
    }
    if (stage.equals(ctx.arg("exit", ""))) System.exit(3);
  }
}
