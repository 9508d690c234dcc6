package org.sluice.nativetest;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import org.sluice.Context;
import org.sluice.Filter;

/**
 * Crashes the process from Java in process: writes to address 0 through sun.misc.Unsafe (a
 * SIGSEGV that is not the JVM's own, as a JNI library's bug would be).
 */
public final class UnsafeCrash implements Filter {
  @Override
  public void process(Context ctx) {
    try {
      Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
      Field field = unsafeClass.getDeclaredField("theUnsafe");
      field.setAccessible(true);
      Object unsafe = field.get(null);
      Method putLong = unsafeClass.getMethod("putLong", long.class, long.class);
      putLong.invoke(unsafe, 0L, 42L);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot reach sun.misc.Unsafe", e);
    }
  }
}
