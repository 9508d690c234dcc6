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
    int size = Math.min(text.length, b.capacity());
    b.data().put(0, text, 0, size);
    b.size(size);
    out.write(b);
  }
}
