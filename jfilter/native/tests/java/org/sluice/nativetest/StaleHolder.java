package org.sluice.nativetest;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;
import org.sluice.OutputStream;

/**
 * StaleKeeper's consumer: holds the first buffer it reads (the block the keeper keeps a stale
 * reference to) until end of work, when the keeper is done misusing it; closes the rest. Then
 * checks that its buffer is still its own and intact (size and key of arg `text` and 42, the
 * text itself, data() the same view, rewound) and writes it on to `out`. Reports on `report`.
 */
public final class StaleHolder implements Filter {
  private final Checklist results = new Checklist();

  @Override
  public void process(Context ctx) {
    InputStream in = ctx.input("in");
    OutputStream out = ctx.output("out");
    String me = ctx.filterName() + "#" + ctx.copyIndex() + " ";
    byte[] text = ctx.arg("text").getBytes(StandardCharsets.UTF_8);

    Buffer held = in.read();
    ByteBuffer view = held.data();
    long others = 0;
    for (Buffer b; (b = in.read()) != null; others++) b.close();
    results.check(me + "read-all", others == ctx.argLong("after"), others + " buffers after the held one");

    results.expectNothing(me + "held-intact", () -> {
      if (held.size() != text.length || held.key() != 42 || held.isShared()) {
        throw new AssertionError("size " + held.size() + ", key " + held.key() + ", shared " + held.isShared());
      }
      ByteBuffer data = held.data();
      if (data != view || data.position() != 0 || data.limit() != held.capacity()) {
        throw new AssertionError("data() is " + data + (data == view ? "" : ", another object than before"));
      }
      byte[] got = new byte[text.length];
      data.get(0, got);
      if (!new String(got, StandardCharsets.UTF_8).equals(new String(text, StandardCharsets.UTF_8))) {
        throw new AssertionError("the bytes are now '" + new String(got, StandardCharsets.UTF_8) + "'");
      }
    });
    results.expectNothing(me + "held-write", () -> out.write(held));
    results.send(ctx.output("report"));
  }
}
