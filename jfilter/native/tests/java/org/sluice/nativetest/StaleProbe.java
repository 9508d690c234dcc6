package org.sluice.nativetest;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;
import org.sluice.OutputStream;
import org.sluice.SluiceException;

/**
 * Misuses buffers, streams and contexts in every way the API promises to catch, and reports
 * one line per check on `report` ("ok name" or "FAIL name: what happened"). Unit 0 does the
 * buffer and thread checks and keeps its context, streams and one unwritten buffer; unit 1
 * checks that those went stale when unit 0 ended. Needs at least two units of work and a few
 * buffers on `in`.
 */
public final class StaleProbe implements Filter {
  private final List<String> results = new ArrayList<>();
  private Context oldContext;
  private InputStream oldIn;
  private OutputStream oldOut;
  private Buffer kept;

  private interface Action {
    void run() throws Throwable;
  }

  private void expect(String name, Class<? extends Throwable> type, String fragment, Action action) {
    try {
      action.run();
      results.add("FAIL " + name + ": no exception");
    } catch (Throwable t) {
      boolean good = type.isInstance(t) && (fragment == null || String.valueOf(t.getMessage()).contains(fragment));
      results.add((good ? "ok " : "FAIL ") + name + (good ? "" : ": " + t));
    }
  }

  private void expectNothing(String name, Action action) {
    try {
      action.run();
      results.add("ok " + name);
    } catch (Throwable t) {
      results.add("FAIL " + name + ": " + t);
    }
  }

  // Runs `action` on a thread of its own (not the filter's) and rethrows what it threw.
  private static void onAnotherThread(Action action) throws Throwable {
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    Thread t = new Thread(() -> {
      try {
        action.run();
      } catch (Throwable e) {
        thrown.set(e);
      }
    });
    t.start();
    t.join();
    if (thrown.get() != null) throw thrown.get();
  }

  @Override
  public void init(Context ctx) {
    if (ctx.workIndex() != 1) return;
    Class<IllegalStateException> ise = IllegalStateException.class;
    expect("old-context-input", ise, "unit of work that has ended", () -> oldContext.input("in"));
    expect("old-context-work", ise, "unit of work that has ended", () -> oldContext.work());
    expect("old-input-read", ise, "unit of work that has ended", () -> oldIn.read());
    expect("old-output-allocate", ise, "unit of work that has ended", () -> oldOut.allocate());
    expect("kept-buffer-released", ise, "already written, closed or released", () -> kept.size());
    expectNothing("kept-buffer-close-is-harmless", () -> kept.close());
  }

  @Override
  public void process(Context ctx) throws Exception {
    InputStream in = ctx.input("in");
    OutputStream out = ctx.output("out");
    if (ctx.workIndex() == 0) {
      Class<IllegalStateException> ise = IllegalStateException.class;
      Buffer b = in.read();
      out.write(b);
      expect("written-size", ise, "already written", () -> b.size());
      expect("written-data", ise, "already written", () -> b.data());
      expect("written-key", ise, "already written", () -> b.key(1));
      expect("written-rewrite", ise, "already written", () -> out.write(b));
      expectNothing("written-close-is-harmless", () -> b.close());
      Buffer c = out.allocate();
      c.close();
      expect("closed-key", ise, "already written, closed or released", () -> c.key());
      expectNothing("close-twice", () -> c.close());
      Buffer d = out.allocate();
      expect("oversize", IllegalArgumentException.class, "capacity", () -> d.size(d.capacity() + 1));
      d.close();
      expect("other-thread-read", ise, "own thread", () -> onAnotherThread(() -> in.read()));
      expect("other-thread-allocate", ise, "own thread", () -> onAnotherThread(() -> out.allocate()));
      Buffer e = out.allocate();
      expect("other-thread-close", ise, "own thread", () -> onAnotherThread(() -> e.close()));
      expect("unconnected-port", SluiceException.class, "asked for input port 'nope'", () -> ctx.input("nope"));
      expect("missing-arg", SluiceException.class, "nope", () -> ctx.arg("nope"));
      expect("malformed-arg", SluiceException.class, "label", () -> ctx.argLong("label"));
      kept = in.read();  // neither written nor closed: the runtime takes it back
      oldContext = ctx;
      oldIn = in;
      oldOut = out;
    }
    for (Buffer b; (b = in.read()) != null; ) out.write(b);
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
