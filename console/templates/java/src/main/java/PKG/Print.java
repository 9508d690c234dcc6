package @PACKAGE@;

import java.nio.charset.StandardCharsets;
import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;

/** Writes every buffer it reads to stdout, one line each. */
public final class Print implements Filter {
  @Override
  public void process(Context ctx) {
    InputStream in = ctx.input("in");
    for (Buffer b; (b = in.read()) != null; ) {
      byte[] bytes = new byte[b.size()];
      b.data().get(0, bytes);
      b.close();
      synchronized (System.out) {
        System.out.println(new String(bytes, StandardCharsets.UTF_8));
        System.out.flush();
      }
    }
  }
}
