package org.sluice.nativetest;

import org.sluice.Context;
import org.sluice.Filter;

/** Throws from its constructor: creation failures are reported too. */
public final class BadConstructor implements Filter {
  public BadConstructor() {
    throw new IllegalStateException("cannot construct");
  }

  @Override
  public void process(Context ctx) {}
}
