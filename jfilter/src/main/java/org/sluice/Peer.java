package org.sluice;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

// The Java half of one filter copy's native peer, made once per copy on the copy's thread: what
// stays the same across units of work, the mailbox through which the native side describes
// each buffer it allocates (so that an allocate is one native call returning a long, with no
// object made and no field set through JNI; a read describes a whole batch, which its
// InputStream copies out) and takes back closed ones, and this copy's Buffer object for each pool block.
//
// A submitted Unit has a Peer of its own for its results (client != null): the same mailbox
// and table of Buffer objects, lent by Unit.read() instead of InputStream.read().
//
// A Buffer object belongs to one copy: it is made the first time its block reaches the copy
// and reused each time the block comes back to the same copy, and no other copy ever sees or
// changes it. So a reference kept past write()/close() stays released while the block serves
// other copies, and a misuse of it cannot reach their buffers.
final class Peer {
  // Mailbox layout, written by the native side before read/allocate return:
  static final int BINDING = 0; // int: the block's Bindings id, or -1 for a shared block
  static final int SIZE = 4;    // int: used bytes
  static final int KEY = 8;     // long: key
  // Written by Java: a count n (int) at CLOSED_COUNT and n handles (longs) from CLOSED of
  // buffers the filter closed, still registered on the native side, which the next native
  // call on a stream returns to their pools. So a loop that reads and closes crosses into
  // native code once per batch of reads (InputStream), not twice a buffer. (Only a filter
  // copy's mailbox has these fields; a Unit's results are released through the Unit.)
  static final int CLOSED_COUNT = 16;
  static final int CLOSED = 24;
  static final int MAX_CLOSED = 8; // CopyState::kMaxClosed (jfilter/native/copy_state.h)
  // Written by the native side before InputStream.nRead returns: the batch it read, n entries
  // of three longs [handle, binding id << 32 | size, key] (CopyState::post_read), which the
  // stream copies out at once with takeReadBatch (the mailbox is the copy's, the batch the
  // stream's).
  static final int READ_BATCH = CLOSED + 8 * MAX_CLOSED;
  static final int MAILBOX_BYTES = READ_BATCH + 3 * 8 * InputStream.READ_AHEAD;

  private final ByteBuffer mailbox;
  // This copy's Buffer for each block, by Bindings id; grown on demand.
  private Buffer[] buffers = new Buffer[64];
  final Thread thread; // the copy's own
  final String filterName;
  final int copyIndex;
  final int copyCount;
  final String host;
  final String topologyDir;
  final Logger log;
  // The unit whose results this Peer lends, or null for a filter copy's.
  final Unit client;

  // A filter copy's, made by the native side (proxy_filter.cc).
  Peer(ByteBuffer mailbox, String filterName, int copyIndex, int copyCount, String host,
       String topologyDir) {
    this(mailbox, filterName, copyIndex, copyCount, host, topologyDir, null);
    if (mailbox.capacity() < MAILBOX_BYTES) {
      throw new IllegalArgumentException("a filter copy's mailbox needs " + MAILBOX_BYTES + " bytes");
    }
  }

  // A submitted unit's: its results.
  Peer(ByteBuffer mailbox, Unit client) {
    this(mailbox, "client", 0, 1, "", "", client);
  }

  private Peer(ByteBuffer mailbox, String filterName, int copyIndex, int copyCount, String host,
               String topologyDir, Unit client) {
    this.client = client;
    this.mailbox = mailbox.order(ByteOrder.nativeOrder());
    this.thread = Thread.currentThread();
    this.filterName = filterName;
    this.copyIndex = copyIndex;
    this.copyCount = copyCount;
    this.host = host;
    this.topologyDir = topologyDir;
    this.log = new Logger(filterName + "#" + copyIndex + "@" + host);
  }

  // The Buffer for a handle the native side just lent, described in the mailbox.
  Buffer lent(long handle) {
    ByteBuffer m = mailbox;
    return lent(handle, m.getInt(BINDING), m.getInt(SIZE), m.getLong(KEY));
  }

  // The Buffer for a handle the native side lent: block `id` (-1: a shared block), `size`
  // bytes used, `key`.
  Buffer lent(long handle, int id, int size, long key) {
    Buffer b;
    if (id >= 0) {
      Buffer[] t = buffers;
      b = id < t.length ? t[id] : null;
      // Another memory: the id was freed with its pool and now names a block of a new one.
      if (b == null || b.memory != Bindings.get(id)) b = bind(id);
    } else {
      b = client == null ? Buffer.shared(this, handle) : client.sharedResult(handle);
    }
    return b.lend(handle, size, key);
  }

  // Makes this copy's Buffer for block `id`: once per block and copy, off the hot path.
  private Buffer bind(int id) {
    Buffer[] t = buffers;
    if (id >= t.length) buffers = t = Arrays.copyOf(t, Math.max(id + 1, t.length * 2));
    Buffer b = new Buffer(this, Bindings.get(id), false);
    t[id] = b;
    return b;
  }

  // Copies the n entries of the batch nRead just described into `to`, from index 0.
  void takeReadBatch(long[] to, int n) {
    ByteBuffer m = mailbox;
    for (int i = 0, end = 3 * n; i < end; i++) to[i] = m.getLong(READ_BATCH + 8 * i);
  }

  // Leaves the handle of a buffer the filter just closed for the next native call to release;
  // false when MAX_CLOSED already wait (then the caller releases it now, and the native side
  // takes them all).
  boolean closeLater(long handle) {
    ByteBuffer m = mailbox;
    int n = m.getInt(CLOSED_COUNT);
    if (n == MAX_CLOSED) return false;
    m.putLong(CLOSED + 8 * n, handle);
    m.putInt(CLOSED_COUNT, n + 1);
    return true;
  }

  // Marks this copy's Buffer of block `id` released if it still carries `handle` (the runtime
  // took back a buffer the filter did not write or close). Called by the native side; false
  // when the filter did not hold it: a spare an OutputStream kept for its next allocate(), or
  // a buffer an InputStream read ahead and had not handed out (no Buffer carries its handle).
  boolean expire(int id, long handle) {
    Buffer[] t = buffers;
    Buffer b = id < t.length ? t[id] : null;
    if (b == null || b.handle != handle) return false;
    b.handle = 0;
    boolean filters = !b.spare;
    b.spare = false;
    return filters;
  }
}
