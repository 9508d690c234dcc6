package org.sluice.nativetest;

/**
 * Native methods for the registration check's own test (jfilter/native/tests/
 * register_natives_test.cc), which holds tables right and wrong for them. Not a filter.
 */
public final class NativeShapes {
  private NativeShapes() {}

  static native long nTwice(long x);

  static native String nName(int id, String[] words);

  native void nInstance();

  /** Not native: a table that registers it is wrong. */
  static long twice(long x) {
    return nTwice(x);
  }
}
