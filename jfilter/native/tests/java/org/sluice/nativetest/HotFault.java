package org.sluice.nativetest;

import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;

/**
 * In process, runs a hot loop until the JIT has compiled it, then makes it fault the way
 * HotSpot turns into a Java exception with a signal: arg `fault` npe (a null dereference:
 * SIGSEGV on an implicit null check) or div0 (an integer division by zero: SIGFPE). The
 * exception is an ordinary Java one; drains `in` first when connected.
 */
public final class HotFault implements Filter {
  private static final String[] WORDS = {"a", "bb", "ccc"};

  @Override
  public void process(Context ctx) {
    if (ctx.hasInput("in")) {
      for (Buffer b; (b = ctx.input("in").read()) != null; ) b.close();
    }
    String fault = ctx.arg("fault");
    long sum = 0;
    // Long enough for C1 and C2 to compile (on-stack replacement) the loop and what it inlines.
    for (int i = 0; i < 5_000_000; i++) {
      sum += fault.equals("npe") ? length(WORDS[i % 3]) : divide(i, 1 + i % 7);
    }
    ctx.log().info("warmed up: " + sum);
    if (fault.equals("npe")) {
      sum += length(null);
    } else {
      sum += divide((int) sum, 0);
    }
    ctx.log().info("not reached: " + sum);
  }

  private static int length(String s) {
    return s.length();
  }

  private static int divide(int a, int b) {
    return a / b;
  }
}
