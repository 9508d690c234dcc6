package @PACKAGE@;

import java.nio.ByteBuffer;
import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;
import org.sluice.OutputStream;

/** Upper-cases every buffer it reads and passes the same buffer on. The one to make your own. */
public final class Upper implements Filter {
  @Override
  public void process(Context ctx) {
    InputStream in = ctx.input("in");
    OutputStream out = ctx.output("out");
    for (Buffer b; (b = in.read()) != null; ) {  // null at end of work
      toUpper(b.data(), b.size());
      out.write(b);
    }
  }

  /** Upper-cases the first {@code size} bytes of {@code data} (ASCII letters). */
  static void toUpper(ByteBuffer data, int size) {
    for (int i = 0; i < size; i++) {
      byte c = data.get(i);
      if (c >= 'a' && c <= 'z') data.put(i, (byte) (c - 'a' + 'A'));
    }
  }
}
