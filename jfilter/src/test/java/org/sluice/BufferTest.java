package org.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Buffer API, on buffers that a C++ filter produced and a C++ filter checks afterwards. */
class BufferTest {
  static final List<String> problems = new CopyOnWriteArrayList<>();
  static final AtomicLong checked = new AtomicLong();

  static void expect(boolean ok, String what) {
    if (!ok) problems.add(what);
  }

  static void expectThrows(Class<? extends Throwable> type, String fragment, Runnable action, String what) {
    try {
      action.run();
      problems.add(what + ": no exception");
    } catch (Throwable t) {
      if (!type.isInstance(t) || !String.valueOf(t.getMessage()).contains(fragment)) problems.add(what + ": " + t);
    }
  }

  /** Checks every buffer it reads and allocates, then writes it on untouched. */
  public static final class Probe implements Filter {
    @Override
    public void process(Context ctx) {
      InputStream in = ctx.input("in");
      OutputStream out = ctx.output("out");
      expect(ctx.input("in") == in && ctx.output("out") == out, "input()/output() return the same object");
      expect(out.bufferSize() == 128 && out.name().equals("out") && in.name().equals("in"), "stream names and sizes");
      long seq = 0;
      for (Buffer b; (b = in.read()) != null; seq++) {
        ByteBuffer data = b.data();
        expect(data == b.data(), "data() is one object");
        expect(data.isDirect() && data.capacity() == 128 && b.capacity() == 128, "data() is a direct view of the block");
        expect(data.order() == ByteOrder.nativeOrder(), "data() is in native order");
        expect(data.position() == 0 && data.limit() == 128, "data() is rewound when lent: " + data);
        data.position(7).limit(9);  // moved on purpose: the next lending of this block must rewind it
        expect(b.size() == 100 && b.key() == seq && !b.isShared(), "size, key, shared of buffer " + seq);
        expect(b.toString().equals("Buffer(size=100, capacity=128, key=" + seq + ")"), b.toString());
        b.key(99);
        expect(b.key() == 99, "key(long)");
        b.key(seq);
        Buffer fb = b;
        expectThrows(IllegalArgumentException.class, "capacity", () -> fb.size(129), "size(129)");
        expectThrows(IllegalArgumentException.class, "capacity", () -> fb.size(-1), "size(-1)");
        expectThrows(NullPointerException.class, "buffer", () -> out.write(null), "write(null)");
        out.write(b);
        expectThrows(IllegalStateException.class, "already written", fb::size, "size() after write");
        expectThrows(IllegalStateException.class, "already written", fb::data, "data() after write");
        expectThrows(IllegalStateException.class, "already written", () -> out.write(fb), "write after write");
        fb.close();  // harmless
        expect(fb.toString().equals("Buffer(released)"), fb.toString());
        try (Buffer c = out.allocate()) {
          expect(c.size() == 0 && c.key() == 0 && c.capacity() == 128, "allocate() gives an empty buffer");
          expect(c.data().position() == 0 && c.data().limit() == 128, "allocated data() is rewound");
          c.data().position(3);
        }
        checked.incrementAndGet();
      }
    }
  }

  @BeforeEach
  void reset() {
    problems.clear();
    checked.set(0);
  }

  @Test
  void buffersBehaveAsDocumentedAndCppSeesThemIntact() {
    Embedded.Result result = Graphs.runOk(
        "filters:\n"
            + "  produce: " + Graphs.cpp("Produce") + ", args: {size: 100, count: 2000}}\n"
            + "  probe: " + Graphs.java(Probe.class) + "}\n"
            + "  consume: " + Graphs.cpp("Consume") + "}\n"
            + "streams:\n"
            + "  - {from: produce.out, to: probe.in, buffer_size: 128B, depth: 4}\n"
            + "  - {from: probe.out, to: consume.in, buffer_size: 128B, depth: 4}\n");
    assertEquals(List.of(), problems);
    assertEquals(2000, checked.get());
    assertEquals(2000L, result.buffers.get("probe.out -> consume.in"));
  }
}
