package org.sluice.nativetest;

import java.util.ArrayList;
import java.util.List;
import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;
import org.sluice.OutputStream;

/**
 * Reads the way that stresses the read-ahead of InputStream (a native read returns a batch of
 * buffers that read() then hands out one by one): two inputs in turns, so that each stream's
 * batch outlives reads of the other, and closes `hold` buffers of `side` at once (more closes
 * between two native calls than the mailbox keeps). Checks every record of `in`
 * (Records.check) and forwards it on `out`; `side` (one source copy) must arrive whole and in
 * order, which it reports on `report` (Checklist).
 *
 * <p>With `stop_after` N, it waits `wait_ms` first (so that the queues fill and the first read
 * takes a batch), reads N buffers of `in` only, writes them on and returns: the rest of that
 * batch is read ahead but not the filter's, and the runtime must take it back (as unread, not
 * as held). Its finalize then reads `in` again, which must give null (never one of those
 * released buffers), and logs what it got: "finalize read: null" or "finalize read: a buffer".
 */
public final class ReadAheadProbe implements Filter {
  @Override
  public void process(Context ctx) throws Exception {
    InputStream in = ctx.input("in");
    OutputStream out = ctx.output("out");
    String where = ctx.filterName() + "#" + ctx.copyIndex();
    long stopAfter = ctx.argLong("stop_after", -1);
    if (stopAfter >= 0) {
      Thread.sleep(ctx.argLong("wait_ms", 0));
      long[] next = new long[1024];
      for (long n = 0; n < stopAfter; n++) {
        Buffer b = in.read();
        Records.check(b, next, where);
        out.write(b);
      }
      return;
    }
    Checklist checks = new Checklist();
    InputStream side = ctx.input("side");
    int hold = (int) ctx.argLong("hold");
    long[] next = new long[1024];
    long sideSeq = 0;
    long sideWrong = -1;
    List<Buffer> held = new ArrayList<>();
    boolean inOpen = true;
    boolean sideOpen = true;
    while (inOpen || sideOpen) {
      if (inOpen) {
        Buffer b = in.read();
        if (b == null) {
          inOpen = false;
        } else {
          Records.check(b, next, where);
          out.write(b);
        }
      }
      if (sideOpen) {
        Buffer s = side.read();
        if (s == null) {
          sideOpen = false;
        } else {
          if (s.data().getLong(8) != sideSeq && sideWrong < 0) sideWrong = sideSeq;
          sideSeq++;
          held.add(s);
        }
      }
      if (held.size() == hold || (!sideOpen && !held.isEmpty())) {
        for (Buffer h : held) h.close();
        held.clear();
      }
    }
    checks.check("side-whole-and-in-order", sideWrong < 0 && sideSeq == ctx.argLong("side_count"),
        sideWrong >= 0 ? "seq " + sideWrong + " was not where expected" : sideSeq + " buffers on side");
    checks.check("stays-ended", in.read() == null && side.read() == null, "a read after the end gave a buffer");
    checks.send(ctx.output("report"));
  }

  @Override
  public void finalize(Context ctx) {
    if (ctx.argLong("stop_after", -1) < 0) return;
    Buffer b = ctx.input("in").read();
    ctx.log().info("finalize read: " + (b == null ? "null" : "a buffer"));
    if (b != null) b.close();
  }
}
