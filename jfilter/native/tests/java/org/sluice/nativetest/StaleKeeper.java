package org.sluice.nativetest;

import java.nio.charset.StandardCharsets;
import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.OutputStream;

/**
 * Keeps a reference to a buffer it wrote to StaleHolder and misuses it while the holder holds
 * that very pool block, in every way the API promises to catch. Writes one buffer with the
 * text of arg `text` and key 42, then `after` empty ones (more than the stream's queue holds
 * plus one, so that when the last write returns the holder has read the kept block and come
 * back for the next); then uses the stale reference and reports what happened on `report`.
 * The holder checks that its buffer came through untouched.
 */
public final class StaleKeeper implements Filter {
  private final Checklist results = new Checklist();

  @Override
  public void process(Context ctx) {
    OutputStream out = ctx.output("out");
    long after = ctx.argLong("after");
    String me = ctx.filterName() + "#" + ctx.copyIndex() + " ";
    byte[] text = ctx.arg("text").getBytes(StandardCharsets.UTF_8);

    Buffer kept = out.allocate();
    kept.data().put(0, text);
    kept.size(text.length);
    kept.key(42);
    out.write(kept);
    for (long i = 0; i < after; i++) out.write(out.allocate());

    // The holder has the block now: the stale reference must not reach it.
    Class<IllegalStateException> ise = IllegalStateException.class;
    String gone = "already written";
    results.expect(me + "stale-size", ise, gone, () -> kept.size());
    results.expect(me + "stale-data", ise, gone, () -> kept.data().position(5).limit(6));
    results.expect(me + "stale-key", ise, gone, () -> kept.key());
    results.expect(me + "stale-set-size", ise, gone, () -> kept.size(1));
    results.expect(me + "stale-set-key", ise, gone, () -> kept.key(7));
    results.expect(me + "stale-capacity", ise, gone, () -> kept.capacity());
    results.expect(me + "stale-is-shared", ise, gone, () -> kept.isShared());
    results.check(me + "stale-to-string", kept.toString().equals("Buffer(released)"), kept.toString());
    results.expect(me + "stale-write", ise, gone, () -> out.write(kept));
    results.expectNothing(me + "stale-close-does-nothing", () -> kept.close());
    results.send(ctx.output("report"));
  }
}
