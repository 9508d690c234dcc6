package org.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What a Context tells a Java filter, and what it refuses. */
class ContextTest {
  static final Map<String, String> seen = new ConcurrentHashMap<>();

  static String outcome(Runnable action) {
    try {
      action.run();
      return "no exception";
    } catch (RuntimeException e) {
      return e.getClass().getSimpleName() + ": " + e.getMessage();
    }
  }

  /** A source without streams that writes down what its context says. */
  public static final class Probe implements Filter {
    private Context previous;

    @Override
    public void init(Context ctx) {
      String me = ctx.filterName() + "#" + ctx.copyIndex() + "@" + ctx.workIndex();
      if (previous != null) {
        Context old = previous;
        seen.put(me + " old context", outcome(old::work));
        seen.put(me + " old context input", outcome(() -> old.hasInput("in")));
      }
      previous = ctx;
    }

    @Override
    public void process(Context ctx) {
      String me = ctx.filterName() + "#" + ctx.copyIndex() + "@" + ctx.workIndex();
      seen.put(me + " work", ctx.work());
      seen.put(me + " copies", ctx.copyIndex() + "/" + ctx.copyCount());
      seen.put(me + " host", ctx.host());
      seen.put(me + " dir", ctx.topologyDir().toString());
      seen.put(me + " text", ctx.arg("text") + "|" + ctx.arg("missing", "fallback"));
      seen.put(me + " numbers", ctx.argLong("size") + "|" + ctx.argLong("missing", 7) + "|" + ctx.argDouble("ratio")
          + "|" + ctx.argDouble("missing", 1.5) + "|" + ctx.argBoolean("flag", false) + "|" + ctx.argBoolean("missing", true));
      seen.put(me + " path", ctx.argPath("file").toString());
      seen.put(me + " required boolean", ctx.argBoolean("flag") + "|" + outcome(() -> ctx.argBoolean("missing")));
      seen.put(me + " malformed boolean", outcome(() -> ctx.argBoolean("text")));
      seen.put(me + " path or fallback", ctx.argPath("file", Path.of("none")) + "|" + ctx.argPath("missing", Path.of("none")));
      ClassLoader context = Thread.currentThread().getContextClassLoader();
      seen.put(me + " context class loader",
          String.valueOf(context != null && context == Bridge.loader(new String[] {Graphs.classes()})));
      seen.put(me + " ports", ctx.hasInput("in") + "|" + ctx.hasOutput("out"));
      seen.put(me + " missing arg", outcome(() -> ctx.arg("missing")));
      seen.put(me + " malformed arg", outcome(() -> ctx.argLong("text")));
      seen.put(me + " unconnected port", outcome(() -> ctx.input("in")));
      seen.put(me + " toString", ctx.toString());
      ctx.log().info("context probe ran");
    }
  }

  @BeforeEach
  void reset() {
    seen.clear();
  }

  @Test
  void contextDescribesTheCopyAndItsUnitOfWork() {
    Graphs.runOk("filters:\n"
        + "  p: " + Graphs.java(Probe.class) + ", copies: 2,\n"
        + "      args: {text: 'héllo wörld', size: 4KiB, ratio: 0.25, flag: yes, file: data/x.txt}}\n"
        + "work: [alpha, beta]\n");
    String dir = Graphs.classes();
    for (int copy = 0; copy < 2; copy++) {
      for (int unit = 0; unit < 2; unit++) {
        String me = "p#" + copy + "@" + unit;
        assertEquals(unit == 0 ? "alpha" : "beta", seen.get(me + " work"), me);
        assertEquals(copy + "/2", seen.get(me + " copies"));
        assertEquals("local", seen.get(me + " host"));
        assertEquals(dir, seen.get(me + " dir"));
        assertEquals("héllo wörld|fallback", seen.get(me + " text"));
        assertEquals("4096|7|0.25|1.5|true|true", seen.get(me + " numbers"));
        assertEquals(Path.of(dir, "data/x.txt").toString(), seen.get(me + " path"));
        assertEquals("false|false", seen.get(me + " ports"));
        assertTrue(seen.get(me + " required boolean").startsWith("true|SluiceException: ")
            && seen.get(me + " required boolean").contains("needs argument 'missing'"), seen.get(me + " required boolean"));
        assertTrue(seen.get(me + " malformed boolean").contains("a boolean (true, false, yes, no, on, off, 1 or 0)"),
            seen.get(me + " malformed boolean"));
        assertEquals(Path.of(dir, "data/x.txt") + "|none", seen.get(me + " path or fallback"));
        assertEquals("true", seen.get(me + " context class loader"),
            "the filter's thread has the filter's class loader as its context class loader (ServiceLoader finds its classpath)");
        assertTrue(seen.get(me + " missing arg").startsWith("SluiceException: ") && seen.get(me + " missing arg").contains("missing"),
            seen.get(me + " missing arg"));
        assertTrue(seen.get(me + " malformed arg").startsWith("SluiceException: "), seen.get(me + " malformed arg"));
        assertTrue(seen.get(me + " unconnected port").startsWith(
            "SluiceException: filter 'p' (copy " + copy + ") asked for input port 'in', which no stream"),
            seen.get(me + " unconnected port"));
        assertEquals("Context(p#" + copy + ", unit " + unit + ")", seen.get(me + " toString"));
      }
      String later = "p#" + copy + "@1";
      assertTrue(seen.get(later + " old context").startsWith("IllegalStateException: Context belongs to a unit of work that has ended"),
          seen.get(later + " old context"));
      assertTrue(seen.get(later + " old context input").startsWith("IllegalStateException: "), new TreeMap<>(seen).toString());
    }
  }
}
