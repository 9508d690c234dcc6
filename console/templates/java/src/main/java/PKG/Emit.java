package @PACKAGE@;

import java.nio.charset.StandardCharsets;
import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.OutputStream;

/** Source: writes the unit of work's payload (sluice run --work TEXT) as one buffer. */
public final class Emit implements Filter {
  @Override
  public void process(Context ctx) {
    OutputStream out = ctx.output("out");
    byte[] text = ctx.work().getBytes(StandardCharsets.UTF_8);
    Buffer b = out.allocate();
    if (text.length > b.capacity()) { // say so rather than cut it
      int capacity = b.capacity();
      b.close();
      throw new IllegalArgumentException("the payload (" + text.length + " bytes) does not fit in one buffer ("
          + capacity + " bytes): give the stream from " + ctx.filterName() + ".out a larger buffer_size in the "
          + "topology (buffer_size: 1MiB)");
    }
    b.data().put(0, text);
    b.size(text.length);
    out.write(b);
  }
}
