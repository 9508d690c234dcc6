package org.sluice.nativetest;

import org.sluice.Context;
import org.sluice.Filter;

/** A filter without a public no-argument constructor, for the validation tests. */
public final class NoDefaultConstructor implements Filter {
  private final int n;

  public NoDefaultConstructor(int n) {
    this.n = n;
  }

  @Override
  public void process(Context ctx) {
    ctx.log().info("n=" + n);
  }
}
