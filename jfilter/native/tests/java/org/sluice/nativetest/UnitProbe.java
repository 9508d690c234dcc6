package org.sluice.nativetest;

import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;
import org.sluice.OutputStream;

/**
 * Forwards in -> out and, at the end of each process, writes one line to report describing the
 * unit of work: what the context says and how often init and finalize ran on this object.
 */
public final class UnitProbe implements Filter {
  private int inits;
  private int finalizes;

  @Override
  public void init(Context ctx) {
    inits++;
  }

  @Override
  public void process(Context ctx) {
    InputStream in = ctx.input("in");
    OutputStream out = ctx.output("out");
    long buffers = 0;
    for (Buffer b; (b = in.read()) != null; buffers++) out.write(b);
    String line = "unit=" + ctx.workIndex() + " work=" + ctx.work() + " inits=" + inits + " finalizes=" + finalizes
        + " copy=" + ctx.copyIndex() + "/" + ctx.copyCount() + " host=" + ctx.host() + " filter=" + ctx.filterName()
        + " buffers=" + buffers + " label=" + ctx.arg("label", "none") + " n=" + ctx.argLong("n", -1)
        + " ratio=" + ctx.argDouble("ratio", 0) + " flag=" + ctx.argBoolean("flag", false)
        + " has_out=" + ctx.hasOutput("out") + " has_left=" + ctx.hasInput("left");
    OutputStream report = ctx.output("report");
    Buffer r = report.allocate();
    byte[] text = line.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    r.data().put(0, text);
    r.size(text.length);
    report.write(r);
  }

  @Override
  public void finalize(Context ctx) {
    finalizes++;
  }
}
