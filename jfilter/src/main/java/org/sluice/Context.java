package org.sluice;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * What a filter copy sees of the running application during one unit of work: its streams,
 * its arguments from the topology, the unit's payload, which copy it is. It mirrors the C++
 * {@code sluice::Context}.
 *
 * <p>The runtime passes a new {@code Context} to {@link Filter#init}, and the same one to
 * {@link Filter#process} and {@link Filter#finalize(Context)} of that unit of work. When the
 * unit ends, the context and the streams it returned expire: their methods then throw
 * {@link IllegalStateException} (a stale handle is a Java exception, never a crash). Use a
 * context only on the filter's own thread.
 */
public final class Context {
  private final Peer peer;
  private final String work;
  private final long workIndex;
  private final Map<String, InputStream> inputs = new HashMap<>(4);
  private final Map<String, OutputStream> outputs = new HashMap<>(4);
  private long handle; // 0 once the unit of work ended

  // Made by the native side at the start of each unit of work.
  Context(Peer peer, long handle, String work, long workIndex) {
    this.peer = peer;
    this.handle = handle;
    this.work = work;
    this.workIndex = workIndex;
  }

  // Called by the native side when the unit of work ends.
  void expire() {
    handle = 0;
    for (InputStream in : inputs.values()) in.expire();
    for (OutputStream out : outputs.values()) out.handle = 0;
  }

  // Called by the native side when process or finalize returned or threw, before it takes
  // back the buffers this copy still has: each input forgets what it read ahead (the runtime
  // takes it back too). With `stage` (the call returned normally), warns about them as unread.
  void dropReadAhead(String stage) {
    for (InputStream in : inputs.values()) {
      int n = in.dropReadAhead();
      if (n != 0 && stage != null) {
        peer.log.warn(stage + " returned with " + n + " unread buffer(s) on input '" + in.name()
            + "' that the runtime had already taken off the queue for it; they were discarded");
      }
    }
  }

  /**
   * The stream connected to an input port. Every call with the same name returns the same
   * object.
   *
   * @param port the port name in the topology, e.g. {@code "in"}
   * @return the stream, valid until this unit of work ends
   * @throws SluiceException naming the filter and port, and the ports that are connected, when
   *     the topology connects no stream there
   * @throws IllegalStateException when the unit of work of this context has ended
   */
  public InputStream input(String port) {
    Objects.requireNonNull(port, "port");
    long h = live();
    InputStream in = inputs.get(port);
    if (in == null) {
      in = new InputStream(peer, nInput(h, port), port);
      inputs.put(port, in);
    }
    return in;
  }

  /**
   * The stream connected to an output port. Every call with the same name returns the same
   * object.
   *
   * @param port the port name in the topology, e.g. {@code "out"}
   * @return the stream, valid until this unit of work ends
   * @throws SluiceException naming the filter and port, and the ports that are connected, when
   *     the topology connects no stream there
   * @throws IllegalStateException when the unit of work of this context has ended
   */
  public OutputStream output(String port) {
    Objects.requireNonNull(port, "port");
    long h = live();
    OutputStream out = outputs.get(port);
    if (out == null) {
      out = new OutputStream(peer, nOutput(h, port), port);
      outputs.put(port, out);
    }
    return out;
  }

  /**
   * @param port a port name
   * @return whether the topology connects a stream to this input port
   */
  public boolean hasInput(String port) {
    return nHasInput(live(), Objects.requireNonNull(port, "port"));
  }

  /**
   * @param port a port name
   * @return whether the topology connects a stream to this output port
   */
  public boolean hasOutput(String port) {
    return nHasOutput(live(), Objects.requireNonNull(port, "port"));
  }

  /**
   * An argument from the topology's {@code args:}, as written.
   *
   * @param key the argument's name
   * @return its text
   * @throws SluiceException when the topology does not give it
   */
  public String arg(String key) {
    return nArg(live(), Objects.requireNonNull(key, "key"), true);
  }

  /**
   * @param key the argument's name
   * @param fallback what to return when the topology does not give it
   * @return the argument's text, or {@code fallback}
   */
  public String arg(String key, String fallback) {
    String value = nArg(live(), Objects.requireNonNull(key, "key"), false);
    return value == null ? fallback : value;
  }

  /**
   * An integer argument: decimal, or a size with {@code B}, {@code KiB}, {@code MiB} or
   * {@code GiB} (as the C++ {@code arg<long long>}).
   *
   * @param key the argument's name
   * @return its value
   * @throws SluiceException when it is missing or is not an integer
   */
  public long argLong(String key) {
    return nArgLong(live(), Objects.requireNonNull(key, "key"));
  }

  /**
   * @param key the argument's name
   * @param fallback what to return when the topology does not give it
   * @return its value, or {@code fallback} when missing
   * @throws SluiceException when it is given but is not an integer
   */
  public long argLong(String key, long fallback) {
    return nArg(live(), Objects.requireNonNull(key, "key"), false) == null ? fallback : nArgLong(handle, key);
  }

  /**
   * @param key the argument's name
   * @return its value as a {@code double}
   * @throws SluiceException when it is missing or is not a number
   */
  public double argDouble(String key) {
    return nArgDouble(live(), Objects.requireNonNull(key, "key"));
  }

  /**
   * @param key the argument's name
   * @param fallback what to return when the topology does not give it
   * @return its value, or {@code fallback} when missing
   * @throws SluiceException when it is given but is not a number
   */
  public double argDouble(String key, double fallback) {
    return nArg(live(), Objects.requireNonNull(key, "key"), false) == null ? fallback : nArgDouble(handle, key);
  }

  /**
   * A boolean argument: true, false, yes, no, on, off, 1 or 0.
   *
   * @param key the argument's name
   * @return its value
   * @throws SluiceException when it is missing or is not a boolean
   */
  public boolean argBoolean(String key) {
    return nArgBoolean(live(), Objects.requireNonNull(key, "key")); // the runtime says when it is missing
  }

  /**
   * A boolean argument: true, false, yes, no, on, off, 1 or 0.
   *
   * @param key the argument's name
   * @param fallback what to return when the topology does not give it
   * @return its value, or {@code fallback} when missing
   * @throws SluiceException when it is given but is not a boolean
   */
  public boolean argBoolean(String key, boolean fallback) {
    return nArg(live(), Objects.requireNonNull(key, "key"), false) == null ? fallback : nArgBoolean(handle, key);
  }

  /**
   * A path argument; a relative path resolves against the topology file's directory.
   *
   * @param key the argument's name
   * @return the path
   * @throws SluiceException when it is missing
   */
  public Path argPath(String key) {
    return Path.of(nArgPath(live(), Objects.requireNonNull(key, "key")));
  }

  /**
   * A path argument; a relative path resolves against the topology file's directory.
   *
   * @param key the argument's name
   * @param fallback what to return when the topology does not give it (returned as it is)
   * @return the path, or {@code fallback} when missing
   */
  public Path argPath(String key, Path fallback) {
    return nArg(live(), Objects.requireNonNull(key, "key"), false) == null ? fallback : Path.of(nArgPath(handle, key));
  }

  /**
   * @return the unit of work's payload (the {@code work:} entry or {@code --work}; "" by
   *     default), decoded as UTF-8 (a byte that is not UTF-8 reads as U+FFFD: use
   *     {@link #workBytes()} for a binary payload)
   */
  public String work() {
    live();
    return work;
  }

  /**
   * @return the unit of work's payload as its bytes, exactly as submitted (a binary payload,
   *     e.g. from {@link Application#submit(byte[])}); a new array on each call
   */
  public byte[] workBytes() {
    return nWorkBytes(live());
  }

  /** @return the unit of work's index in this run, from 0 */
  public long workIndex() {
    live();
    return workIndex;
  }

  /** @return this copy's index, from 0 to {@link #copyCount()} - 1 */
  public int copyIndex() {
    return peer.copyIndex;
  }

  /** @return the filter's number of copies over all hosts */
  public int copyCount() {
    return peer.copyCount;
  }

  /** @return the filter's name in the topology */
  public String filterName() {
    return peer.filterName;
  }

  /** @return the host this copy runs on ({@code local} when the application runs embedded) */
  public String host() {
    return peer.host;
  }

  /** @return the absolute directory of the topology file */
  public Path topologyDir() {
    return Path.of(peer.topologyDir);
  }

  /** @return this copy's logger; usable from any thread, and after the unit of work */
  public Logger log() {
    return peer.log;
  }

  @Override
  public String toString() {
    return "Context(" + peer.filterName + "#" + peer.copyIndex + ", unit " + workIndex
        + (handle == 0 ? ", expired)" : ")");
  }

  private long live() {
    long h = handle;
    if (h == 0) throw expired("Context");
    return h;
  }

  static IllegalStateException expired(String what) {
    return new IllegalStateException(what + " belongs to a unit of work that has ended; use the "
        + "Context passed to the current init/process/finalize and the streams it returns");
  }

  private static native long nInput(long handle, String port);

  private static native long nOutput(long handle, String port);

  private static native boolean nHasInput(long handle, String port);

  private static native boolean nHasOutput(long handle, String port);

  // required: throw the runtime's message when missing; otherwise return null.
  private static native String nArg(long handle, String key, boolean required);

  private static native long nArgLong(long handle, String key);

  private static native double nArgDouble(long handle, String key);

  private static native boolean nArgBoolean(long handle, String key);

  private static native String nArgPath(long handle, String key);

  private static native byte[] nWorkBytes(long handle);
}
