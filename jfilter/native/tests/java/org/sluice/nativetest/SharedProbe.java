package org.sluice.nativetest;

import java.nio.ReadOnlyBufferException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;
import org.sluice.OutputStream;

/**
 * For a copy behind a broadcast stream: shared buffers are read-only, and one kept past its
 * unit of work is released by the runtime and goes stale like any other. Reports on `report`.
 */
public final class SharedProbe implements Filter {
  // A block is shared while another holder remains: a copy that released every reference
  // before its sibling read the block would leave the sibling the block alone, writable. So
  // neither copy lets go of its first buffer (returns, which releases it) before both have
  // read theirs. The copies are Java copies: each runs on a thread of its own.
  private static final CyclicBarrier BOTH_READ_THE_FIRST = new CyclicBarrier(2);
  private final List<String> results = new ArrayList<>();
  private Buffer kept;

  private void check(String name, boolean ok) {
    results.add((ok ? "ok " : "FAIL ") + name);
  }

  @Override
  public void init(Context ctx) {
    if (ctx.workIndex() != 1) return;
    try {
      kept.size();
      check("shared-released", false);
    } catch (IllegalStateException e) {
      check("shared-released", true);
    }
  }

  @Override
  public void process(Context ctx) {
    InputStream in = ctx.input("in");
    if (ctx.workIndex() == 0) {
      kept = in.read();
      check("shared", kept.isShared() && kept.data().isReadOnly());
      try {
        kept.data().put(0, (byte) 1);
        check("shared-read-only", false);
      } catch (ReadOnlyBufferException e) {
        check("shared-read-only", true);
      }
      try {
        BOTH_READ_THE_FIRST.await(60, TimeUnit.SECONDS);
      } catch (Exception e) {
        check("both-read-the-first " + e, false);
      }
    }
    for (Buffer b; (b = in.read()) != null; ) b.close();
    if (ctx.workIndex() == 1) {
      OutputStream report = ctx.output("report");
      for (String line : results) {
        Buffer r = report.allocate();
        byte[] text = line.getBytes(StandardCharsets.UTF_8);
        r.data().put(0, text);
        r.size(text.length);
        report.write(r);
      }
    }
  }
}
