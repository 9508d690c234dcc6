package org.sluice.nativetest;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.sluice.Buffer;
import org.sluice.OutputStream;

/**
 * What a probe filter checked: one line per check, "ok name" or "FAIL name: what happened",
 * sent as text buffers to a JTextSink at the end.
 */
final class Checklist {
  interface Action {
    void run() throws Throwable;
  }

  private final List<String> lines = new ArrayList<>();

  void check(String name, boolean ok, String what) {
    lines.add(ok ? "ok " + name : "FAIL " + name + ": " + what);
  }

  // `action` must throw a `type` whose message contains `fragment` (null: any message).
  void expect(String name, Class<? extends Throwable> type, String fragment, Action action) {
    try {
      action.run();
      lines.add("FAIL " + name + ": no exception");
    } catch (Throwable t) {
      boolean good = type.isInstance(t) && (fragment == null || String.valueOf(t.getMessage()).contains(fragment));
      lines.add(good ? "ok " + name : "FAIL " + name + ": " + t);
    }
  }

  // `action` must not throw.
  void expectNothing(String name, Action action) {
    try {
      action.run();
      lines.add("ok " + name);
    } catch (Throwable t) {
      lines.add("FAIL " + name + ": " + t);
    }
  }

  // One buffer per line on `report`.
  void send(OutputStream report) {
    for (String line : lines) {
      Buffer r = report.allocate();
      byte[] text = line.getBytes(StandardCharsets.UTF_8);
      r.data().put(0, text);
      r.size(text.length);
      report.write(r);
    }
    lines.clear();
  }
}
