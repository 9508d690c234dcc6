package org.sluice;

/**
 * A filter copy's end of one incoming stream, from {@link Context#input(String)}. It mirrors
 * the C++ {@code sluice::InputStream}.
 *
 * <p>Valid for the unit of work of the {@link Context} that returned it; afterwards every
 * method throws {@link IllegalStateException}. Use it only on the filter's own thread.
 */
public final class InputStream {
  private final Peer peer;
  private final String name;
  long handle; // 0 once its unit of work ended

  InputStream(Peer peer, long handle, String name) {
    this.peer = peer;
    this.handle = handle;
    this.name = name;
  }

  /**
   * Blocks until a buffer arrives or the unit of work ends for this copy. Buffers from one
   * upstream copy arrive in the order it wrote them.
   *
   * @return the next buffer, which you now own (write it on or close it), or {@code null} at
   *     end of work: every upstream copy finished the unit and all its buffers were delivered.
   *     Once {@code null}, it stays {@code null} until the next unit of work.
   * @throws AbortedException when the run is being stopped; let it propagate
   * @throws IllegalStateException when the stream belongs to an earlier unit of work, or on
   *     another thread than the filter's
   */
  public Buffer read() {
    long h = nRead(live());
    return h == 0 ? null : peer.lent(h);
  }

  /** @return the port name in the topology ({@code in}, {@code left}, ...) */
  public String name() {
    return name;
  }

  @Override
  public String toString() {
    return "InputStream(" + name + (handle == 0 ? ", expired)" : ")");
  }

  private long live() {
    long h = handle;
    if (h == 0) throw Context.expired("InputStream '" + name + "'");
    return h;
  }

  private static native long nRead(long handle);
}
