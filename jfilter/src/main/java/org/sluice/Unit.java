package org.sluice;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One unit of work submitted to an {@link Application}: its results, and how it ended. It
 * mirrors the C++ {@code sluice::Unit}.
 *
 * <pre>{@code
 * try (Unit unit = app.submit("x=10 y=20")) {
 *   for (Buffer b; (b = unit.read()) != null; ) {   // the topology's `to: client` stream
 *     consume(b.data(), b.size());
 *     b.close();                                    // the block goes back to its pool
 *   }
 *   UnitReport report = unit.waitFor();             // finished, or the failure
 * }
 * }</pre>
 *
 * <p><b>Results.</b> {@link #read()} returns the buffers that producer copies write to the
 * topology's {@code to: client} stream during this unit, in order per producer copy, as
 * {@link Buffer} objects, the same class Java filters read: {@link Buffer#data()} is a direct
 * view of the producer's pool block (embedded, nothing is copied; across hosts the block is
 * the one the data plane received into). A result is yours until you {@link Buffer#close()}
 * it; after that every method but {@code close()} throws {@link IllegalStateException}, as for
 * a filter's buffers. Close every result: the producers' pools are bounded, and buffers you
 * keep hold back the producers (and so every later unit).
 *
 * <p><b>Units run one at a time, in submission order.</b> A unit cannot end before its
 * results are read, so each unit must be read to the end ({@code read()} returns null), or
 * waited for ({@link #waitFor()} discards what is left), or closed: a unit nobody reads holds
 * every later unit back. {@link Application#close()} discards what nobody has read. So a
 * thread that reads (or waits for) a later unit while it holds an earlier one unread waits for
 * good, e.g. {@code try (Unit u1 = app.submit(a); Unit u2 = app.submit(b)) { u2.read(); }}:
 * read {@code u1} first, or from another thread (after 5 s a warning names the unit that holds
 * it back). Closing units, in any order, never waits.
 *
 * <p><b>A failed unit's results end too.</b> {@code read()} returns null at the end of the
 * results whether the unit finished or failed; only {@link #waitFor()} says which. Call it.
 *
 * <p><b>Ownership.</b> A Unit holds native state until the client side is done with it: until
 * its results ended and every result buffer was closed (then it lets go by itself), or until
 * the unit ended after {@link #close()}, or until the application is closed. No finalizer
 * runs; close units you abandon half-read (try-with-resources).
 *
 * <p><b>Threads.</b> A Unit may be used from any thread. Concurrent {@code read()} calls are
 * serialized (each result goes to one caller). {@link #cancel()} from another thread ends a
 * {@code read()} that waits (it returns null); after {@link #close()} from another thread, the
 * reader's {@code read()} throws {@link IllegalStateException} as soon as it returns from the
 * wait (with the next result, or the end). Its result buffers may be used and closed on any
 * thread, one thread at a time each.
 */
public final class Unit implements AutoCloseable {
  private final String work;
  // Where the native read describes the result it lends (see Peer): Java's memory, passed
  // with each call, so that it outlives every native write into it.
  private final ByteBuffer mailbox = ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder());
  private final Peer peer;
  private final ReentrantLock reading = new ReentrantLock();
  // Set by Application.submit before the Unit is returned (the native side needs the object
  // first, to report to it).
  private long handle;
  private long index;
  private boolean resultsEnded; // guarded by reading

  private final Object reportLock = new Object(); // not `this`: users may lock a Unit themselves
  private UnitReport report;          // guarded by reportLock; set once, by ended()
  private volatile String discarded;  // why the results still unread were discarded, or null

  Unit(String work) {
    this.work = work;
    this.peer = new Peer(mailbox, this);
  }

  void submitted(long handle, long index) {
    this.handle = handle;
    this.index = index;
  }

  /** @return the unit's index: 0, 1, 2 ... in submission order over the application's life */
  public long index() {
    return index;
  }

  /** @return the payload it was submitted with (a byte payload read as UTF-8) */
  public String work() {
    return work;
  }

  /**
   * The next result. Blocks until the unit runs and a result arrives, or every producer copy
   * ended the unit (or the unit failed: {@link #waitFor()} says how).
   *
   * @return a buffer you now own (close it), or null at the end of the results, and from then
   *     on; null at once for a topology without a {@code to: client} stream
   * @throws IllegalStateException when the results not read yet were discarded: this Unit was
   *     closed, or the application was stopped, aborted or closed
   */
  public Buffer read() {
    reading.lock();
    try {
      if (resultsEnded) return null;
      long h = nRead(handle, mailbox);
      if (h != 0) return peer.lent(h);
      String why = discarded;
      if (why != null) throw new IllegalStateException(why);
      resultsEnded = true;
    } finally {
      reading.unlock();
    }
    // The report, once the unit ended; never waits here (a cancelled unit ends only when its
    // copies are out of their own code). Lets go of what it can.
    nResultsEnded(handle);
    return null;
  }

  /**
   * Reads and discards what is left of the results, waits until the unit ended, and says how.
   * May be called more than once, from any thread: the same report. (Java's
   * {@code Object.wait} is taken, hence the name.)
   *
   * @return how the unit ended
   */
  public UnitReport waitFor() {
    synchronized (reportLock) {
      if (report != null) return report;
    }
    nFinish(handle);
    return awaitReport();
  }

  /**
   * Fails this unit with stage {@code cancelled}: queued, it will not run; running, it is
   * aborted, and the application is deployed again before the next unit. Does nothing once the
   * unit ended.
   */
  public void cancel() {
    nCancel(handle);
  }

  /**
   * Discards the results not read yet and closes the result buffers still held (they become
   * stale). Never waits: the unit runs to its end all the same ({@link #cancel()} first to stop
   * it), and the application reads and drops what is left of its results as they come, so the
   * units after it run too; the native state goes once it ended. {@link #waitFor()} still
   * answers afterwards (it waits for the end); {@link #read()} returns null if the results had
   * ended, else throws {@link IllegalStateException}. Safe to call more than once, and in any
   * order over the units (try-with-resources closes in reverse).
   */
  @Override
  public void close() {
    nClose(handle);
  }

  @Override
  public String toString() {
    return "Unit(" + index + " [" + work + "])";
  }

  // ---- called by the native side (application/client_unit.cc) and by Buffer

  // The unit ended: its report, and why the results nobody read were discarded (or null).
  // Called before the native handle goes away, so waitFor() always finds the report.
  void ended(UnitReport r, String why) {
    synchronized (reportLock) {
      if (report == null) report = r;
      if (why != null && discarded == null) discarded = why;
      reportLock.notifyAll();
    }
  }

  // The native side took back the result buffer lent as `h` (block `binding`).
  void expire(int binding, long h) {
    peer.expire(binding, h);
  }

  // A fresh Buffer over a shared (broadcast) block lent as `h` (Peer.lent).
  Buffer sharedResult(long h) {
    return nShared(handle, peer, h);
  }

  // Buffer.close() of one of this unit's results.
  void release(long h) {
    nRelease(handle, h);
  }

  private UnitReport awaitReport() {
    // nFinish delivered the report, or the unit is being ended by Unit.close() or the
    // application's stop on another thread, which delivers it before letting go.
    boolean interrupted = false;
    synchronized (reportLock) {
      while (report == null) {
        try {
          reportLock.wait();
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) Thread.currentThread().interrupt();
      return report;
    }
  }

  private static native long nRead(long handle, ByteBuffer mailbox);

  private static native Buffer nShared(long handle, Peer peer, long buffer);

  private static native void nRelease(long handle, long buffer);

  private static native void nFinish(long handle);

  private static native void nResultsEnded(long handle);

  private static native void nClose(long handle);

  private static native void nCancel(long handle);
}
