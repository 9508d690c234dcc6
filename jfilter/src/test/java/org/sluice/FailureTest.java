package org.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Java exceptions stop the run with their stack trace; the others unwind with AbortedException. */
class FailureTest {
  static final List<String> sawInOthers = new CopyOnWriteArrayList<>();

  /** Throws from a nested method after reading `after` buffers. */
  public static final class Throws implements Filter {
    @Override
    public void process(Context ctx) {
      InputStream in = ctx.input("in");
      long after = ctx.argLong("after");
      long n = 0;
      for (Buffer b; (b = in.read()) != null; n++) {
        b.close();
        if (n == after) fail(n);
      }
    }

    private static void fail(long n) {
      throw new IllegalStateException("no more after " + n);
    }
  }

  /** Reads until the run stops; writes down what stopped it, and checks it keeps saying so. */
  public static final class Waits implements Filter {
    @Override
    public void process(Context ctx) {
      InputStream in = ctx.input("in");
      try {
        while (true) {
          Buffer b = in.read();
          if (b != null) b.close();
        }
      } catch (AbortedException e) {
        sawInOthers.add("aborted: " + e.getMessage());
        try {
          in.read();
          sawInOthers.add("read after abort returned");
        } catch (AbortedException again) {
          sawInOthers.add("aborted again");
        }
        throw e;
      }
    }
  }

  @BeforeEach
  void reset() {
    sawInOthers.clear();
  }

  @Test
  void javaExceptionStopsTheRunWithItsStackTrace() {
    Embedded.Result result = Graphs.run("filters:\n"
        + "  produce: " + Graphs.cpp("Produce") + ", args: {size: 64B, count: 100000000}}\n"
        + "  bad: " + Graphs.java(Throws.class) + ", args: {after: 1000}}\n"
        + "  produce2: " + Graphs.cpp("Produce") + ", args: {size: 64B, count: 100000000}}\n"
        + "  waits: " + Graphs.java(Waits.class) + "}\n"
        + "streams:\n"
        + "  - {from: produce.out, to: bad.in, buffer_size: 64B}\n"
        + "  - {from: produce2.out, to: waits.in, buffer_size: 64B}\n");
    assertEquals("bad", result.failedFilter, String.valueOf(result));
    assertEquals(0, result.failedCopy);
    assertEquals("process", result.failedStage);
    assertTrue(result.failedMessage.startsWith("java.lang.IllegalStateException: no more after 1000\n"), result.failedMessage);
    assertTrue(result.failedMessage.contains("\tat org.sluice.FailureTest$Throws.fail(FailureTest.java:"), result.failedMessage);
    assertTrue(result.failedMessage.contains("\tat org.sluice.FailureTest$Throws.process(FailureTest.java:"), result.failedMessage);
    assertTrue(result.failure.startsWith("filter 'bad' copy 0 on host local failed in process (unit of work 0): "
        + "java.lang.IllegalStateException: no more after 1000"), result.failure);
    assertEquals(List.of("aborted: run aborted because another part of the application failed", "aborted again"), sawInOthers);
  }

  @Test
  void aTopologyThatDoesNotValidateIsRefusedBeforeAnythingRuns() {
    SluiceException e = assertThrows(SluiceException.class, () -> Graphs.run("filters:\n"
        + "  x: {lang: java, class: org.sluice.FailureTest$Thorws, classpath: ['" + Graphs.classes() + "']}\n"));
    assertTrue(e.getMessage().startsWith("embedded.yaml:2:26: filter 'x': class 'org.sluice.FailureTest$Thorws' is not in classpath"),
        e.getMessage());
    assertTrue(e.getMessage().contains("did you mean 'org.sluice.FailureTest$Throws'?"), e.getMessage());
  }
}
