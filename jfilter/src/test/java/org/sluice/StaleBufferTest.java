package org.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicReference;

import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Stale buffers between Java copies: a reference a copy keeps past write() stays released while
 * its pool block serves the next Java copy, and misusing it never reaches that copy's buffer.
 */
class StaleBufferTest {
  static final List<String> problems = new CopyOnWriteArrayList<>();
  // Per filter name: the Buffer object its copy 0 was lent for the block it read first.
  static final ConcurrentHashMap<String, Buffer> firstObject = new ConcurrentHashMap<>();

  static void expectStale(Runnable action, String what) {
    try {
      action.run();
      problems.add(what + ": no exception");
    } catch (IllegalStateException e) {
      if (!e.getMessage().contains("already written")) problems.add(what + ": " + e.getMessage());
    }
  }

  /**
   * Forwards every buffer and keeps the one it wrote last; on each read it misuses that stale
   * reference (read its size, key and data, set them, write it again, close it) while the next
   * Java copy downstream is likely holding its block.
   */
  public static final class Keeper implements Filter {
    @Override
    public void process(Context ctx) {
      InputStream in = ctx.input("in");
      OutputStream out = ctx.output("out");
      Buffer prev = null;
      for (Buffer b; (b = in.read()) != null; ) {
        if (prev != null) {
          Buffer p = prev;
          expectStale(p::size, "size()");
          expectStale(p::key, "key()");
          expectStale(p::data, "data()");
          expectStale(() -> p.size(0), "size(0)");
          expectStale(() -> p.key(-1), "key(-1)");
          expectStale(() -> out.write(p), "write()");
          try {
            p.close();  // a stale close does nothing
          } catch (RuntimeException e) {
            problems.add("close(): " + e);
          }
        }
        firstObject.putIfAbsent(ctx.filterName(), b);
        out.write(b);
        prev = b;
      }
    }
  }

  /** Passes buffers on untouched; a write fails if someone else released its buffer. */
  public static final class Relay implements Filter {
    @Override
    public void process(Context ctx) {
      InputStream in = ctx.input("in");
      OutputStream out = ctx.output("out");
      for (Buffer b; (b = in.read()) != null; ) {
        firstObject.putIfAbsent(ctx.filterName(), b);
        out.write(b);
      }
    }
  }

  @BeforeEach
  void reset() {
    problems.clear();
    firstObject.clear();
  }

  @Test
  void aKeptBufferStaysStaleWhileTheNextJavaCopyHoldsItsBlock() {
    // Consume checks every buffer's sequence number and checksum: the relay's buffers arrive
    // intact and in order, none released or rewritten by the keeper's misuse.
    Embedded.Result result = Graphs.runOk("filters:\n"
        + "  produce: " + Graphs.cpp("Produce") + ", args: {size: 100, count: 20000}}\n"
        + "  keep: " + Graphs.java(Keeper.class) + "}\n"
        + "  relay: " + Graphs.java(Relay.class) + "}\n"
        + "  consume: " + Graphs.cpp("Consume") + "}\n"
        + "streams:\n"
        + "  - {from: produce.out, to: keep.in, buffer_size: 128B, depth: 4}\n"
        + "  - {from: keep.out, to: relay.in, depth: 2}\n"
        + "  - {from: relay.out, to: consume.in, depth: 2}\n");
    assertEquals(List.of(), problems.subList(0, Math.min(problems.size(), 5)));
    assertEquals(20000L, result.buffers.get("relay.out -> consume.in"));
    // The keeper's first buffer reached the relay too, as a Buffer object of the relay's own.
    assertNotSame(firstObject.get("keep"), firstObject.get("relay"));
    assertSame(firstObject.get("keep").memory, firstObject.get("relay").memory, "the same pool block");
  }

  /**
   * Writes each buffer it reads (up to 100 B) into a stream of 64 B buffers: first whole, which
   * is refused, then cut to 64 B, which goes.
   */
  public static final class Shrinker implements Filter {
    @Override
    public void process(Context ctx) {
      InputStream in = ctx.input("in");
      OutputStream out = ctx.output("out");
      // Both refusals name the stream, as C++'s do (an outside review: Java's named none).
      Buffer a = out.allocate();
      try {
        a.size(65);
        problems.add("size(65) of a 64 B block went through");
      } catch (IllegalArgumentException e) {
        if (!e.getMessage().contains("raise the buffer_size of stream shrink.out -> sink.in or split")) {
          problems.add("size refusal: " + e.getMessage());
        }
      }
      a.close();
      for (Buffer b; (b = in.read()) != null; ) {
        int size = b.size();
        try {
          out.write(b);
          problems.add("a " + size + "-byte write to a 64 B stream went through");
        } catch (SluiceException e) {
          if (!e.getMessage().contains("to output 'out' (shrink.out -> sink.in) whose buffer_size is 64 bytes; raise "
              + "the buffer_size of stream shrink.out -> sink.in") || !e.getMessage().contains("still yours")) {
            problems.add("refusal: " + e.getMessage());
          }
          b.size(Math.min(size, 64));  // throws IllegalStateException if the refusal took it
          out.write(b);
        }
      }
    }
  }

  /** Reads and closes every buffer. */
  public static final class Drain implements Filter {
    @Override
    public void process(Context ctx) {
      InputStream in = ctx.input("in");
      for (Buffer b; (b = in.read()) != null; ) {
        b.close();
      }
    }
  }

  // A write refused for its size left the buffer stale, so a filter could not split the data
  // the message told it to split (an outside review); as in C++, the buffer stays the caller's.
  @Test
  void aWriteRefusedForItsSizeLeavesTheBufferWithItsFilter() {
    Embedded.Result result = Graphs.runOk("filters:\n"
        + "  produce: " + Graphs.cpp("Produce") + ", args: {size: 100, count: 50}}\n"
        + "  shrink: " + Graphs.java(Shrinker.class) + "}\n"
        + "  sink: " + Graphs.java(Drain.class) + "}\n"
        + "streams:\n"
        + "  - {from: produce.out, to: shrink.in, buffer_size: 128B, depth: 4}\n"
        + "  - {from: shrink.out, to: sink.in, buffer_size: 64B, depth: 4}\n");
    assertEquals(List.of(), problems.subList(0, Math.min(problems.size(), 5)));
    assertEquals(50L, result.buffers.get("shrink.out -> sink.in"), result::toString);
  }

  // Runs `action` on a thread of its own and returns what it threw.
  static Throwable onAnotherThread(Runnable action) throws InterruptedException {
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
    return thrown.get();
  }

  @Test
  void aLiveBufferRefusesAnotherCopyAndAnotherThreadWithoutChanging() throws InterruptedException {
    // Java objects only, no native call: each refusal must come before the handle is touched.
    Peer mine = new Peer(ByteBuffer.allocateDirect(Peer.MAILBOX_BYTES), "mine", 0, 2, "local", "/");
    Peer other = new Peer(ByteBuffer.allocateDirect(Peer.MAILBOX_BYTES), "other", 1, 2, "local", "/");
    Buffer b = new Buffer(mine, ByteBuffer.allocateDirect(64), false).lend(12345, 10, 7);

    IllegalStateException e = assertThrows(IllegalStateException.class, () -> b.take(other));
    assertTrue(e.getMessage().contains("another filter copy"), e.getMessage());
    Throwable t = onAnotherThread(() -> b.take(mine));
    assertTrue(t instanceof IllegalStateException && t.getMessage().contains("own thread"), String.valueOf(t));
    t = onAnotherThread(b::close);
    assertTrue(t instanceof IllegalStateException && t.getMessage().contains("own thread"), String.valueOf(t));
    assertEquals(12345, b.handle, "still lent to its copy");
    assertEquals(10, b.size());
    assertEquals(12345, b.take(mine), "its own copy, on its own thread");
    assertEquals(0, b.handle);
  }
}
