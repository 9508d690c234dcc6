package org.sluice.nativetest;

import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.RequiredArgs;

/** A filter that declares the argument it reads, for the validation tests. */
@RequiredArgs("path")
public final class NeedsPath implements Filter {
  @Override
  public void process(Context ctx) {
    ctx.log().info("path: " + ctx.arg("path"));
  }
}
