package org.sluice.bench;

import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.OutputStream;

/**
 * The seed's producer, in Java: writes `count` buffers of `size` bytes and times each
 * {@link OutputStream#write} with System.nanoTime (allocate is not timed). Appends
 * "seed role=producer lang=java ... first_ns=F rest_mean_ns=M" to the file args.report; see
 * bench/seed_filters.cc for the C++ twin and bench/seed_table.py for the driver.
 */
public final class SeedProducer implements Filter {
  @Override
  public void process(Context ctx) {
    OutputStream out = ctx.output("out");
    long count = ctx.argLong("count");
    int size = (int) ctx.argLong("size");
    long first = 0;
    long rest = 0;
    long[] times = new long[(int) count];
    for (long i = 0; i < count; i++) {
      Buffer b = out.allocate();
      if (size >= 8) b.data().putLong(0, i);
      else b.data().put(0, (byte) i);
      b.size(size);
      long t0 = System.nanoTime();
      out.write(b);
      long t = System.nanoTime() - t0;
      if (i == 0) first = t;
      else rest += t;
      times[(int) i] = t;
    }
    SeedReport.write(ctx, "producer", size, count, first, rest, times);
  }
}
