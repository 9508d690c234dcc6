package org.sluice.nativedep;

/** A library subtype of Base (see PassesDerived). */
public final class Derived extends Base {}
