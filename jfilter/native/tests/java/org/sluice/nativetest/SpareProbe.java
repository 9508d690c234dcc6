package org.sluice.nativetest;

import java.util.ArrayList;
import java.util.List;
import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.OutputStream;

/**
 * The two shortcuts of the Java hot path, from the filter's side: close() hands the block back
 * at the copy's next stream call, and write() keeps a spare block for the next allocate().
 * Writes `count` buffers on `out` (allocate, write), checks that the last one stays stale and
 * that allocate() on another thread is refused while a spare waits; then takes every block of
 * `pool` (never written to) with tryAllocate until it gives null, closes one and allocates
 * again (which must not wait: the next stream call gave the closed block back), and checks
 * that closing them all makes them all free again. Reports on `report` (Checklist). Holds
 * nothing when process returns, so the runtime must warn about nothing.
 */
public final class SpareProbe implements Filter {
  @Override
  public void process(Context ctx) throws Exception {
    Checklist checks = new Checklist();
    OutputStream out = ctx.output("out");
    long count = ctx.argLong("count");
    Buffer written = null;
    for (long i = 0; i < count; i++) {
      Buffer b = out.allocate();
      b.data().putLong(0, i);
      b.size(8);
      b.key(i);
      out.write(b);  // keeps a spare for the next allocate() when the pool has a free block
      written = b;
    }
    Buffer last = written;
    checks.expect("kept-after-write-is-stale", IllegalStateException.class, "already written", last::size);
    // A forward: writing read or foreign buffers never takes a spare, and a kept reference to
    // a block that became the spare stays stale: write(stale) sends nothing.
    checks.expect("kept-rewrite-is-stale", IllegalStateException.class, "already written", () -> out.write(last));
    checks.expect("allocate-other-thread", IllegalStateException.class, "own thread", () -> {
      Thread other = new Thread(() -> out.allocate());
      List<Throwable> thrown = new ArrayList<>();
      other.setUncaughtExceptionHandler((t, e) -> thrown.add(e));
      other.start();
      other.join();
      if (!thrown.isEmpty()) throw thrown.get(0);
    });

    // Nothing is ever written on `pool`: its blocks are free until taken here.
    OutputStream pool = ctx.output("pool");
    List<Buffer> all = new ArrayList<>();
    for (Buffer b; all.size() < 100_000 && (b = pool.tryAllocate()) != null; ) all.add(b);
    checks.check("try-allocate-runs-dry", all.size() > 1 && all.size() < 100_000,
        "tryAllocate gave " + all.size() + " buffers");
    checks.check("try-allocate-fresh", all.stream().allMatch(b -> b.size() == 0 && b.key() == 0),
        "a buffer from tryAllocate was not empty");
    all.remove(all.size() - 1).close();  // left for the next stream call to give back
    Buffer again = pool.tryAllocate();  // null unless that call gave it back first
    checks.check("closed-block-comes-back", again != null, "the closed block was not free again");
    if (again != null) again.close();
    for (Buffer b : all) b.close();  // several closes in a row: each goes back
    List<Buffer> refill = new ArrayList<>();
    for (Buffer b; refill.size() < 100_000 && (b = pool.tryAllocate()) != null; ) refill.add(b);
    checks.check("closed-blocks-come-back", refill.size() == all.size() + 1,
        refill.size() + " blocks free after closing all " + (all.size() + 1));
    for (Buffer b : refill) b.close();
    checks.send(ctx.output("report"));

    // Return with a spare on `pool` (its pool is all free: the write takes one) and a closed
    // buffer not yet given back: the runtime must count neither as a buffer held.
    Buffer one = pool.allocate();
    one.size(8);
    pool.write(one);
    Buffer closed = out.tryAllocate();
    if (closed != null) closed.close();
  }
}
