package org.sluice;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A fixed-capacity block of pooled native memory with a used size and a 64-bit key: the unit
 * that streams carry. It mirrors the C++ {@code sluice::Buffer}.
 *
 * <p><b>Zero copy.</b> {@link #data()} is a direct {@link ByteBuffer} over the native block
 * itself: what a C++ filter wrote is there, and what you write is what the next filter (C++ or
 * Java) reads; no byte is copied between the languages. Each filter copy has one
 * {@code Buffer} object, with its own {@code ByteBuffer} view, per pool block, made the first
 * time the block reaches the copy and reused each time it comes back to that copy, so the hot
 * path allocates nothing. {@code data()} is in the platform's native byte order (so
 * {@code getLong} reads what C++ stored with {@code memcpy}), positioned at 0 with its limit
 * at {@link #capacity()} when the buffer is handed to you; {@link #size()} is the used part.
 *
 * <p><b>Ownership.</b> You get a buffer from {@link InputStream#read()} or
 * {@link OutputStream#allocate()} (or, in a program that drives an {@link Application}, from
 * {@link Unit#read()}) and own it until you pass it to
 * {@link OutputStream#write(Buffer)} or {@link #close()} it (back to its pool). After that,
 * every method except {@code close()} throws {@link IllegalStateException}; a stale buffer is
 * a Java exception, never a crash, and never reaches the buffer another filter copy now holds
 * in the same block. The one thing a stale reference cannot tell apart: when the block comes
 * back to your own copy, the reference is again the buffer that copy was just handed (the same
 * object). So do not keep a buffer past {@code write}/{@code close}, nor the {@code ByteBuffer}
 * from {@code data()}, which is not guarded: kept past {@code write}/{@code close} it reads and
 * writes whatever the block holds next (another copy's buffer), or zeros once the block's pool
 * is gone (a run that ended, an {@link Application} closed); it never crashes the JVM, as it
 * keeps the pool's memory mapped until it is garbage. Buffers still held when
 * {@link Filter#process} returns are released by the runtime, with a warning.
 *
 * <p><b>Broadcast.</b> On a {@code broadcast} stream every consumer copy receives the same
 * block. Such a buffer {@link #isShared() is shared} while other copies still hold the block:
 * its {@code data()} is a read-only view (and, unlike the unshared case, a fresh object each
 * time). Allocate a new buffer for modified data.
 *
 * <p><b>Threads.</b> Use a buffer only on the filter's own thread, inside
 * {@code init}/{@code process}/{@code finalize}; other threads get
 * {@code IllegalStateException} from the calls that reach the runtime. A result from
 * {@link Unit#read()} belongs to no filter: use it and close it on any thread, one thread at a
 * time; it cannot be written to a filter's stream.
 */
public final class Buffer implements AutoCloseable {
  private static final ByteOrder NATIVE = ByteOrder.nativeOrder();

  final Peer peer;          // the copy this object belongs to
  final ByteBuffer memory;  // the block's one direct ByteBuffer (Bindings), or a shared block's
  private final ByteBuffer data;
  private final int capacity;
  private final boolean shared;
  // The registry handle while lent to this copy's filter; 0 once written, closed or released.
  long handle;
  int size;
  long key;
  // Lent to an OutputStream as the spare for its next allocate(), not yet to the filter:
  // stale to the filter (a reference kept from an earlier round) until allocate() hands it out.
  boolean spare;
  // The stream whose allocate() handed it out, while lent (null for a buffer read): write()
  // to that stream takes a spare with it.
  OutputStream allocatedBy;

  // Made once per pool block and copy (Peer), or by the native side once per read of a shared
  // block (a read-only view).
  Buffer(Peer peer, ByteBuffer memory, boolean shared) {
    this.peer = peer;
    this.memory = memory;
    this.shared = shared;
    this.data = (shared ? memory.asReadOnlyBuffer() : memory.duplicate()).order(NATIVE);
    this.capacity = memory.capacity();
  }

  // Hands the buffer to the filter: fresh handle, size and key; data() rewound.
  Buffer lend(long handle, int size, long key) {
    data.clear().order(NATIVE);
    this.size = size;
    this.key = key;
    this.handle = handle;
    this.spare = false;
    this.allocatedBy = null;
    return this;
  }

  // Takes the handle away for write() to a stream of `by`: the buffer is no longer the
  // filter's. Refuses, changing nothing, a buffer that is not `by`'s or a call from another
  // thread than the copy's.
  long take(Peer by) {
    long h = handle;
    if (h == 0 || spare) throw stale();
    if (by != peer) throw foreign();
    if (Thread.currentThread() != peer.thread) throw otherThread();
    handle = 0;
    return h;
  }

  /**
   * The whole native block as a direct {@code ByteBuffer} of {@link #capacity()} bytes, in
   * native byte order; the used bytes are {@code [0, size())}. Read-only when
   * {@link #isShared()}.
   *
   * @return the same object for every call while you hold this buffer
   * @throws IllegalStateException when the buffer was already written, closed or released
   */
  public ByteBuffer data() {
    check();
    return data;
  }

  /**
   * @return the number of bytes in use, from 0 to {@link #capacity()}
   * @throws IllegalStateException when the buffer was already written, closed or released
   */
  public int size() {
    check();
    return size;
  }

  /**
   * Sets the number of bytes in use. Bytes are not cleared: growing exposes whatever the block
   * held.
   *
   * @param n the new size, from 0 to {@link #capacity()}
   * @throws IllegalArgumentException when {@code n} is negative or larger than the capacity
   * @throws IllegalStateException when the buffer was already written, closed or released
   */
  public void size(int n) {
    check();
    if (n < 0) {
      throw new IllegalArgumentException("size(" + n + ") is negative; a size is 0.." + capacity
          + ", the buffer's capacity");
    }
    if (n > capacity) {
      throw new IllegalArgumentException("size(" + n + ") is outside 0.." + capacity
          + ", the buffer's capacity; raise "
          + (allocatedBy != null ? allocatedBy.bufferSizeSetting() : "the stream's buffer_size")
          + " or split the data");
    }
    size = n;
  }

  /**
   * @return the block's size in bytes: the stream's {@code buffer_size}
   * @throws IllegalStateException when the buffer was already written, closed or released
   */
  public int capacity() {
    check();
    return capacity;
  }

  /**
   * The buffer's label; {@code by_key} streams send equal keys to the same consumer copy.
   *
   * @return the key; 0 for a freshly allocated buffer
   * @throws IllegalStateException when the buffer was already written, closed or released
   */
  public long key() {
    check();
    return key;
  }

  /**
   * Sets the buffer's label.
   *
   * @param k the new key
   * @throws IllegalStateException when the buffer was already written, closed or released
   */
  public void key(long k) {
    check();
    key = k;
  }

  /**
   * @return true when, as this buffer was read, other consumer copies of a broadcast stream
   *     still held the same block, so that {@link #data()} is read-only (a copy that reads the
   *     block after every sibling released it owns it alone and gets it writable)
   * @throws IllegalStateException when the buffer was already written, closed or released
   */
  public boolean isShared() {
    check();
    return shared;
  }

  /**
   * Returns the block to its pool without writing it on. Safe to call more than once, and
   * after {@link OutputStream#write(Buffer)}: then it does nothing, so a buffer fits
   * try-with-resources.
   *
   * @throws IllegalStateException when called from a thread other than the filter's own (a
   *     result of {@link Unit#read()} may be closed on any thread)
   */
  @Override
  public void close() {
    long h = handle;
    if (h == 0 || spare) return;
    Unit client = peer.client;
    if (client != null) { // a result of a submitted unit: back to its pool, from any thread
      handle = 0;
      client.release(h);
      return;
    }
    if (Thread.currentThread() != peer.thread) throw otherThread();
    handle = 0;
    if (!peer.closeLater(h)) nClose(h);
  }

  @Override
  public String toString() {
    return handle == 0 ? "Buffer(released)"
        : "Buffer(size=" + size + ", capacity=" + capacity + ", key=" + key + (shared ? ", shared)" : ")");
  }

  private void check() {
    if (handle == 0 || spare) throw peer.client != null ? staleResult(peer.client) : stale();
  }

  static IllegalStateException stale() {
    return new IllegalStateException("this Buffer was already written, closed or released; a buffer "
        + "is yours from read() or allocate() until write() or close(): read or allocate a new one");
  }

  // A result of a submitted Unit: what can have closed it is not what closes a filter's buffer.
  private static IllegalStateException staleResult(Unit unit) {
    return new IllegalStateException("this result of unit " + unit.index() + " was closed: by its close(), "
        + "or by the Unit's or the Application's close(), which close the results still held; a result "
        + "is yours from Unit.read() until then: read a new one");
  }

  private static IllegalStateException foreign() {
    return new IllegalStateException("this Buffer belongs to another filter copy (or is a result of a "
        + "submitted Unit); a copy can write only the buffers it read or allocated itself");
  }

  static IllegalStateException otherThread() {
    return new IllegalStateException("sluice streams and buffers can be used only on their filter's own "
        + "thread, inside init, process or finalize; hand data to other threads as Java objects");
  }

  // A fresh Buffer of `peer` over the block of a shared (broadcast) buffer the registry holds.
  static Buffer shared(Peer peer, long handle) {
    return nShared(peer, handle);
  }

  private static native void nClose(long handle);

  private static native Buffer nShared(Peer peer, long handle);
}
