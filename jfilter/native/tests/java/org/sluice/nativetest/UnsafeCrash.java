package org.sluice.nativetest;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.sluice.Context;
import org.sluice.Filter;

/**
 * Crashes the process from Java in process: writes to address 0 through sun.misc.Unsafe (a
 * SIGSEGV that is not the JVM's own, as a JNI library's bug would be). Every copy waits for the
 * others first, so that they all fault at the same moment: the crash handler must name one of
 * them even then (HotSpot passes each fault on to it).
 */
public final class UnsafeCrash implements Filter {
  private static CyclicBarrier together;

  private static synchronized CyclicBarrier together(int copies) {
    if (together == null) together = new CyclicBarrier(copies);
    return together;
  }

  @Override
  public void process(Context ctx) {
    try {
      together(ctx.copyCount()).await(10, TimeUnit.SECONDS);
    } catch (InterruptedException | BrokenBarrierException | TimeoutException e) {
      throw new IllegalStateException("the copies did not meet", e);
    }
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
