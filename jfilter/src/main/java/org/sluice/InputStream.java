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
  private long handle; // 0 once its unit of work ended
  // Buffers the last native read took with the one it returned (they were already off the
  // queue), which read() hands out without crossing into native code: entries [next, count)
  // of `batch`, each [handle, id << 32 | size, key] (jfilter/native/natives.cc). Lent to
  // this copy but not yet to the filter: the runtime takes them back silently at the end.
  static final int READ_AHEAD = 8; // CopyState::kMaxReadBatch; natives.cc (nRead) says why 8
  private final long[] batch = new long[3 * READ_AHEAD];
  private int next;
  private int count;

  InputStream(Peer peer, long handle, String name) {
    this.peer = peer;
    this.handle = handle;
    this.name = name;
  }

  // The unit of work ended (Context.expire): the runtime has taken back what was read ahead.
  void expire() {
    handle = 0;
    dropReadAhead();
  }

  // Forgets what was read ahead, which the runtime is about to take back (process or
  // finalize returned): a later read() asks the runtime again. Returns how many.
  int dropReadAhead() {
    int n = count - next;
    next = count = 0;
    return n;
  }

  /**
   * Blocks until a buffer arrives or the unit of work ends for this copy. Buffers from one
   * upstream copy arrive in the order it wrote them.
   *
   * @return the next buffer, which you now own (write it on or close it), or {@code null} at
   *     end of work: every upstream copy finished the unit and all its buffers were delivered.
   *     Once {@code null}, it stays {@code null} until the next unit of work.
   * @throws AbortedException when the run is being stopped (noticed when this call needs the
   *     runtime: read() hands out up to 7 buffers the runtime already took off the queue
   *     without asking it); let it propagate
   * @throws IllegalStateException when the stream belongs to an earlier unit of work, or on
   *     another thread than the filter's
   */
  public Buffer read() {
    long stream = live();
    int i = next;
    if (i == count) {
      int n = nRead(stream, READ_AHEAD);
      if (n == 0) {
        next = count = 0;
        return null;
      }
      peer.takeReadBatch(batch, n);
      count = n;
      i = 0;
    } else if (Thread.currentThread() != peer.thread) {
      throw Buffer.otherThread(); // as the native read does
    }
    long[] d = batch;
    long described = d[3 * i + 1];
    Buffer b = peer.lent(d[3 * i], (int) (described >> 32), (int) described, d[3 * i + 2]);
    next = i + 1; // only now: an entry lent() could not hand out stays read ahead, not lost
    return b;
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

  // Reads at least one buffer (waiting for it) and describes up to `room` (at most
  // READ_AHEAD) in the copy's mailbox (Peer.takeReadBatch); returns how many, 0 at end of work.
  private static native int nRead(long handle, int room);
}
