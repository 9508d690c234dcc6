package org.sluice;

import java.util.Objects;

/**
 * A filter copy's end of one outgoing stream, from {@link Context#output(String)}. It mirrors
 * the C++ {@code sluice::OutputStream}.
 *
 * <p>Valid for the unit of work of the {@link Context} that returned it; afterwards every
 * method throws {@link IllegalStateException}. Use it only on the filter's own thread.
 */
public final class OutputStream {
  private final Peer peer;
  private final String name;
  private final int bufferSize;
  // The stream ("a.out -> b.in"), named in the refusals' messages as C++ names it.
  private final String streamLabel;
  long handle; // 0 once its unit of work ended
  // A block the last write() took from the pool for the next allocate() (null: none), so
  // that a loop that allocates and writes crosses into native code once a buffer. Lent to
  // this copy but not yet to the filter: the runtime takes it back silently at the end.
  // Only a write of a buffer this stream's allocate() handed out takes one (Buffer.allocatedBy):
  // a filter that passes read buffers on never holds a block it would not use.
  private Buffer spare;

  OutputStream(Peer peer, long handle, String name) {
    this.peer = peer;
    this.handle = handle;
    this.name = name;
    this.bufferSize = nBufferSize(handle);
    this.streamLabel = nStreamLabel(handle);
  }

  /** "output 'out' (a.out -> b.in)": the port and its stream, for messages. */
  String described() {
    return "output '" + name + "'" + (streamLabel.isEmpty() ? "" : " (" + streamLabel + ")");
  }

  /** "the buffer_size of stream a.out -> b.in", or "the stream's buffer_size". */
  String bufferSizeSetting() {
    return streamLabel.isEmpty() ? "the stream's buffer_size" : "the buffer_size of stream " + streamLabel;
  }

  /**
   * An empty buffer (size 0, key 0) of {@link #bufferSize()} bytes from the stream's pool.
   * Blocks while the pool is empty: that is backpressure from slower consumers.
   *
   * @return a buffer you now own: write it or close it
   * @throws AbortedException when the run is being stopped; let it propagate
   * @throws IllegalStateException when the stream belongs to an earlier unit of work, or on
   *     another thread than the filter's
   */
  public Buffer allocate() {
    long stream = live();
    Buffer b = takeSpare();
    if (b == null) b = peer.lent(nAllocate(stream));
    b.allocatedBy = this;
    return b;
  }

  /**
   * As {@link #allocate()}, but never waits.
   *
   * @return a buffer you now own (write it or close it), or {@code null} while no block of the
   *     pool is free (every one is queued or held)
   * @throws AbortedException when the run is being stopped; let it propagate
   * @throws IllegalStateException when the stream belongs to an earlier unit of work, or on
   *     another thread than the filter's
   */
  public Buffer tryAllocate() {
    long stream = live();
    Buffer b = takeSpare();
    if (b == null) {
      long h = nTryAllocate(stream);
      if (h == 0) return null;
      b = peer.lent(h);
    }
    b.allocatedBy = this;
    return b;
  }

  // The spare, handed to the filter now; null when there is none (or the runtime took it
  // back: its unit of work ended).
  private Buffer takeSpare() {
    Buffer b = spare;
    if (b == null) return null;
    if (Thread.currentThread() != peer.thread) throw Buffer.otherThread();
    spare = null;
    boolean live = b.spare && b.handle != 0;
    b.spare = false;
    return live ? b : null;
  }

  /**
   * Sends the buffer to a consumer copy chosen by the stream's policy. Any buffer you own may
   * be written, one from {@link #allocate()} or one from {@link InputStream#read()}: the native
   * block moves on, its bytes are not copied. Blocks while the chosen copy's queue is full.
   * Afterwards the buffer is no longer yours.
   *
   * @param buffer a buffer you own, with {@code size() <= bufferSize()}
   * @throws SluiceException when the buffer is larger than the stream's buffer size (the buffer
   *     is then still yours: close it, or make it smaller and write it again), or when called
   *     after {@code process} returned (end of work was already sent)
   * @throws AbortedException when the run is being stopped; let it propagate
   * @throws IllegalStateException when the buffer was already written or closed, or belongs to
   *     another filter copy, or the stream belongs to an earlier unit of work, or on another
   *     thread than the filter's; the buffer is then unchanged
   */
  public void write(Buffer buffer) {
    Objects.requireNonNull(buffer, "buffer");
    long stream = live();
    boolean wantSpare = buffer.allocatedBy == this && spare == null;
    // The handle goes first: once the native write has taken the block, the buffer is no
    // longer the filter's, even when the write then fails.
    long h = buffer.take(peer);
    if (buffer.size > bufferSize) {
      // Refused before the native side takes the block, as C++ leaves a refused buffer with
      // its caller: the filter may still split the data it holds.
      buffer.handle = h;
      throw new SluiceException("write of a " + buffer.size + "-byte buffer to " + described()
          + " whose buffer_size is " + bufferSize + " bytes; raise " + bufferSizeSetting() + " or split the data"
          + " (the buffer is still yours)");
    }
    long next = nWrite(stream, h, buffer.size, buffer.key, wantSpare);
    if (next != 0) {
      Buffer s = peer.lent(next);
      s.spare = true;
      spare = s;
    }
  }

  /** @return the stream's buffer size in bytes (topology {@code buffer_size}) */
  public int bufferSize() {
    return bufferSize;
  }

  /** @return the port name in the topology ({@code out}, ...) */
  public String name() {
    return name;
  }

  @Override
  public String toString() {
    return "OutputStream(" + name + (handle == 0 ? ", expired)" : ")");
  }

  private long live() {
    long h = handle;
    if (h == 0) throw Context.expired("OutputStream '" + name + "'");
    return h;
  }

  private static native long nAllocate(long handle);

  private static native long nTryAllocate(long handle);

  // With spare, also lends a free block of the pool, if there is one now (0: none).
  private static native long nWrite(long handle, long buffer, int size, long key, boolean spare);

  private static native int nBufferSize(long handle);

  private static native String nStreamLabel(long handle);
}
