package org.sluice.nativetest;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;
import org.sluice.OutputStream;

/**
 * Writes the address of each buffer's data() (read independently, from java.nio.Buffer's own
 * field; needs --add-opens=java.base/java.nio=ALL-UNNAMED) into the record's aux field, so the
 * sink can compare it with the source's and its own. Fails when it sees more distinct Buffer or
 * ByteBuffer objects than max_objects (the pool's size): they must be made once per block.
 */
public final class ZeroCopyProbe implements Filter {
  private static final Field ADDRESS;

  static {
    try {
      ADDRESS = java.nio.Buffer.class.getDeclaredField("address");
      ADDRESS.setAccessible(true);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @Override
  public void process(Context ctx) throws Exception {
    InputStream in = ctx.input("in");
    OutputStream out = ctx.output("out");
    long maxObjects = ctx.argLong("max_objects");
    Set<Object> buffers = Collections.newSetFromMap(new IdentityHashMap<>());
    Set<Object> views = Collections.newSetFromMap(new IdentityHashMap<>());
    for (Buffer b; (b = in.read()) != null; ) {
      ByteBuffer data = b.data();
      if (!data.isDirect() || data.capacity() != b.capacity() || data != b.data() || b.isShared()) {
        throw new IllegalStateException("data() is not the one direct view of the whole block");
      }
      buffers.add(b);
      views.add(data);
      data.putLong(40, ADDRESS.getLong(data));
      out.write(b);
    }
    if (buffers.size() > maxObjects || views.size() > maxObjects) {
      throw new IllegalStateException(buffers.size() + " Buffer and " + views.size()
          + " ByteBuffer objects for a pool of " + maxObjects + " blocks: allocated per buffer");
    }
  }
}
