package org.sluice.nativetest;

import org.sluice.Context;
import org.sluice.Filter;

/** Logs args.line in init (tests/daemons/logs_test.py: a Java copy's log line across hosts). */
public final class Chatter implements Filter {
  @Override
  public void init(Context ctx) {
    ctx.log().info(ctx.arg("line"));
  }

  @Override
  public void process(Context ctx) {}
}
