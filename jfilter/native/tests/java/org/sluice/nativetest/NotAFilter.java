package org.sluice.nativetest;

/** A public class that is not a filter, for the validation tests. */
public final class NotAFilter {
  public void process() {}
}
