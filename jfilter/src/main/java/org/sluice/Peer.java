package org.sluice;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

// The Java half of one filter copy's native peer, made once per copy: what stays the same
// across units of work, and the mailbox through which the native side describes each buffer
// it lends (so that a read is one native call returning a long, with no object made and no
// field set through JNI).
final class Peer {
  // Mailbox layout, written by the native side before read/allocate return:
  static final int BINDING = 0; // int: the block's Bindings id, or -1 for a shared block
  static final int SIZE = 4;    // int: used bytes
  static final int KEY = 8;     // long: key

  private final ByteBuffer mailbox;
  final String filterName;
  final int copyIndex;
  final int copyCount;
  final String host;
  final String topologyDir;
  final Logger log;

  Peer(ByteBuffer mailbox, String filterName, int copyIndex, int copyCount, String host,
       String topologyDir) {
    this.mailbox = mailbox.order(ByteOrder.nativeOrder());
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
    int id = m.getInt(BINDING);
    Buffer b = id >= 0 ? Bindings.get(id) : Buffer.shared(handle);
    return b.lend(handle, m.getInt(SIZE), m.getLong(KEY));
  }
}
