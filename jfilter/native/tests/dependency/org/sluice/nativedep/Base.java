package org.sluice.nativedep;

/** A library supertype, which Helper.describe takes (see PassesDerived). */
public class Base {
  @Override
  public String toString() {
    return "a " + getClass().getSimpleName();
  }
}
