package org.sluice.nativedependent;

import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.nativedep.Helper;

/**
 * A filter that needs java_test_dependency.jar, and names it only inside process: validation
 * must find it missing when the topology's classpath leaves that jar out.
 */
public final class UsesHelper implements Filter {
  @Override
  public void process(Context ctx) {
    ctx.log().info(Helper.greeting(ctx.filterName()));
  }
}
