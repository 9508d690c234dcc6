package org.sluice.nativedep;

/** A dependency in a jar of its own (java_test_dependency.jar), for the validation tests. */
public final class Helper {
  private Helper() {}

  public static String greeting(String name) {
    return "hello, " + name;
  }

  public static String describe(Base thing) {
    return thing.toString();
  }
}
