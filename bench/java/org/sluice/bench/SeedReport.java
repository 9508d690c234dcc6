package org.sluice.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import org.sluice.Context;

/** Appends one result line of the seed's producer/consumer experiment (see SeedProducer). */
final class SeedReport {
  private SeedReport() {}

  static void write(Context ctx, String role, long size, long count, long first, long rest, long[] times) {
    long p50 = 0;
    int n = (int) Math.min(count, times.length);
    if (n > 1) {
      long[] t = java.util.Arrays.copyOfRange(times, 1, n);
      java.util.Arrays.sort(t);
      p50 = t[(t.length - 1) / 2];
    }
    double mean = count > 1 ? (double) rest / (double) (count - 1) : 0.0;
    StringBuilder line = new StringBuilder(200);
    line.append("seed role=").append(role).append(" lang=java host=").append(ctx.host())
        .append(" size=").append(size).append(" count=").append(count)
        .append(" first_ns=").append(first)
        .append(" rest_mean_ns=").append(String.format(java.util.Locale.ROOT, "%.1f", mean))
        .append(" rest_total_ns=").append(rest)
        .append(" rest_p50_ns=").append(p50);
    try {
      Files.write(Paths.get(ctx.arg("report")), (line.toString() + "\n").getBytes(StandardCharsets.UTF_8),
          StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new RuntimeException("cannot write report file " + ctx.arg("report") + ": " + e, e);
    }
    ctx.log().info(line.toString());
  }
}
