package org.sluice.bench;

import org.sluice.Context;
import org.sluice.Filter;

/** A filter that does nothing, for timing filter creation (one class per measurement). */
public final class NoopD implements Filter {
  @Override
  public void process(Context ctx) {}
}
