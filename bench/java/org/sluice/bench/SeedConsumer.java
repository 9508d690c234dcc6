package org.sluice.bench;

import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;

/**
 * The seed's consumer, in Java: reads until end of work and times each
 * {@link InputStream#read} with System.nanoTime (the final read, which returns null, is not
 * counted). Appends "seed role=consumer lang=java ... first_ns=F rest_mean_ns=M" to the file
 * args.report.
 */
public final class SeedConsumer implements Filter {
  static volatile long sink;

  @Override
  public void process(Context ctx) {
    InputStream in = ctx.input("in");
    long first = 0;
    long rest = 0;
    long count = 0;
    long sum = 0;
    int size = 0;
    long[] times = new long[1 << 16];
    for (;;) {
      long t0 = System.nanoTime();
      Buffer b = in.read();
      long t = System.nanoTime() - t0;
      if (b == null) break;
      if (count == 0) first = t;
      else rest += t;
      if (count < times.length) times[(int) count] = t;
      count++;
      size = b.size();
      sum += b.data().get(0);
      b.close();
    }
    sink = sum;
    SeedReport.write(ctx, "consumer", size, count, first, rest, times);
  }
}
