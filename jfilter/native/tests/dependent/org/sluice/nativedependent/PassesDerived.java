package org.sluice.nativedependent;

import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.nativedep.Derived;
import org.sluice.nativedep.Helper;

/**
 * Passes a library subtype where the library takes its supertype (as new Gson().toJson(new
 * JsonObject()) does): the JVM's verifier loads both types when it links this class, before
 * any of its code runs, so a missing jar shows up while validation looks at the constructor.
 */
public final class PassesDerived implements Filter {
  @Override
  public void process(Context ctx) {
    ctx.log().info(Helper.describe(new Derived()));
  }
}
