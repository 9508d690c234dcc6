package org.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Java filters between C++ ones, and Java to Java, through the real runtime. */
class MixedGraphTest {
  static final List<String> problems = new CopyOnWriteArrayList<>();
  // seq -> payload address, as the Java source and the Java sink saw it; and the Buffer objects.
  static final Map<Long, Long> sourceAddress = new ConcurrentHashMap<>();
  static final Map<Long, Long> sinkAddress = new ConcurrentHashMap<>();
  static final Map<Long, Buffer> sourceObject = new ConcurrentHashMap<>();
  static final Map<Long, Buffer> sinkObject = new ConcurrentHashMap<>();

  static long address(ByteBuffer b) {
    try {
      Field f = java.nio.Buffer.class.getDeclaredField("address");
      f.setAccessible(true);
      return f.getLong(b);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Passes buffers on untouched. */
  public static final class Forward implements Filter {
    @Override
    public void process(Context ctx) {
      InputStream in = ctx.input("in");
      OutputStream out = ctx.output("out");
      for (Buffer b; (b = in.read()) != null; ) out.write(b);
    }
  }

  /** Writes `count` buffers numbered 0, 1, ... and remembers where each one's bytes were. */
  public static final class Source implements Filter {
    @Override
    public void process(Context ctx) {
      OutputStream out = ctx.output("out");
      long count = ctx.argLong("count");
      for (long seq = 0; seq < count; seq++) {
        Buffer b = out.allocate();
        b.data().putLong(0, seq);
        b.size(8);
        b.key(seq);
        if (seq % 100 == 0) {
          sourceAddress.put(seq, address(b.data()));
          sourceObject.put(seq, b);
        }
        out.write(b);
      }
    }
  }

  /** Checks the numbers arrive in order, per source copy, and remembers where they were. */
  public static final class Sink implements Filter {
    @Override
    public void process(Context ctx) {
      InputStream in = ctx.input("in");
      long expected = 0;
      for (Buffer b; (b = in.read()) != null; expected++) {
        long seq = b.data().getLong(0);
        if (seq != expected || b.key() != seq || b.size() != 8) problems.add("got " + seq + " expecting " + expected);
        if (seq % 100 == 0) {
          sinkAddress.put(seq, address(b.data()));
          sinkObject.put(seq, b);
        }
        b.close();
      }
    }
  }

  @BeforeEach
  void reset() {
    problems.clear();
    sourceAddress.clear();
    sinkAddress.clear();
    sourceObject.clear();
    sinkObject.clear();
  }

  @Test
  void cppToJavaToCppKeepsEveryBufferInOrderAndIntact() {
    // Consume checks sequence numbers and checksums of what Produce wrote, per producer copy
    // (one path per pair, so order holds end to end; the C++ graph tests cover Java copies).
    Embedded.Result result = Graphs.runOk("filters:\n"
        + "  produce: " + Graphs.cpp("Produce") + ", copies: 2, args: {size: 1KiB, count: 50000}}\n"
        + "  forward: " + Graphs.java(Forward.class) + "}\n"
        + "  consume: " + Graphs.cpp("Consume") + ", copies: 2}\n"
        + "streams:\n"
        + "  - {from: produce.out, to: forward.in, buffer_size: 1KiB, policy: demand_driven}\n"
        + "  - {from: forward.out, to: consume.in, buffer_size: 1KiB, policy: by_key}\n"
        + "work: [one, two]\n");
    assertEquals(200000L, result.buffers.get("produce.out -> forward.in"));
    assertEquals(200000L, result.buffers.get("forward.out -> consume.in"));
  }

  @Test
  void javaToJavaHandsOverTheSameNativeBlockWithAnObjectPerCopy() {
    Graphs.runOk("filters:\n"
        + "  source: " + Graphs.java(Source.class) + ", args: {count: 100000}}\n"
        + "  sink: " + Graphs.java(Sink.class) + "}\n"
        + "streams:\n"
        + "  - {from: source.out, to: sink.in, buffer_size: 64B, depth: 8}\n");
    assertEquals(List.of(), problems);
    assertEquals(1000, sinkAddress.size());
    assertEquals(sourceAddress, sinkAddress, "the sink reads the very bytes the source wrote");
    for (Map.Entry<Long, Buffer> e : sourceObject.entrySet()) {
      Buffer source = e.getValue(), sink = sinkObject.get(e.getKey());
      assertNotSame(source, sink, "each Java copy has its own Buffer object for a block");
      assertSame(source.memory, sink.memory, "over the block's one direct ByteBuffer");
    }
  }
}
