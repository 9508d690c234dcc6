package org.sluice;

import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A topology deployed once and driven from your own Java program, one unit of work at a time
 * (DESIGN.md, "Applications that stay deployed"). It mirrors the C++
 * {@code sluice::Application} ({@code #include <sluice/application.h>}).
 *
 * <pre>{@code
 * try (Application app = Application.open("query.yaml", new ApplicationOptions())) {
 *   app.start();                                        // every copy created, once
 *   try (Unit unit = app.submit("x=10 y=20 w=256 h=256")) {
 *     for (Buffer b; (b = unit.read()) != null; ) {     // the topology's `to: client` stream
 *       consume(b.data(), b.size());
 *       b.close();                                      // the block goes back to its pool
 *     }
 *     UnitReport report = unit.waitFor();               // finished, or the failure
 *   }
 * }                                                     // close(): stop()
 * }</pre>
 *
 * <p>Units run one at a time, in submission order, on the copies {@link #start()} created:
 * filter objects live across units. A unit that fails (a filter throws, crashes, or a host is
 * lost) is reported to its own {@link Unit} only; the application is deployed again before the
 * next unit, and the units after it run as usual.
 *
 * <p><b>Embedded or across hosts</b>, the same object: a topology without {@code hosts:} (and
 * options without hosts or a launcher) runs in this process. Its Java filters then run in this
 * JVM, the caller's: their classes load from the topology's {@code classpath:} through a class
 * loader whose parent holds {@code org.sluice}, so they share this program's {@code org.sluice}
 * classes (and whatever else its class path has).
 *
 * <p><b>The native library.</b> The first {@code open} loads {@code libsluice_application_jni.so}
 * from {@code -Dsluice.application.library=PATH}, else {@code $SLUICE_APPLICATION_LIBRARY},
 * else beside the installed jar ({@code PREFIX/lib}), else {@code java.library.path}; it fails
 * with an {@link UnsatisfiedLinkError} that says which to set.
 *
 * <p><b>Ownership.</b> An Application holds a native deployment (threads, pools, and across
 * hosts the app daemons) until {@link #close()}; no finalizer runs, so close it
 * (try-with-resources). {@code close()} may be called more than once; every other method but
 * {@link #name()}, {@link #remote()} and {@code toString()} (which need no deployment) throws
 * {@link IllegalStateException} afterwards.
 *
 * <p><b>Threads.</b> Every method may be called from any thread, and {@link #submit} from
 * several at once (units queue in the order the calls took effect). Do not call {@code stop()},
 * {@code abort()} or {@code close()} from a filter of the same application: they wait for it.
 */
public final class Application implements AutoCloseable {
  private final AtomicBoolean closed = new AtomicBoolean();
  private final long handle;
  private final String name;
  private final boolean remote;

  private Application(long handle) {
    this.handle = handle;
    this.name = nName(handle);
    this.remote = nRemote(handle);
  }

  /**
   * Parses and checks a topology file and the options. Starts nothing.
   *
   * @param topologyPath the topology (YAML); relative paths in it resolve against its directory
   * @return the application, which you own: close it
   * @throws SluiceException listing every mistake in the topology as {@code file:line:column},
   *     or what is wrong with the options
   * @throws UnsatisfiedLinkError when the native library cannot be found (the message says
   *     what to set)
   */
  public static Application open(String topologyPath) {
    return open(topologyPath, new ApplicationOptions());
  }

  /**
   * As {@link #open(String)}, with options.
   *
   * @param topologyPath the topology (YAML)
   * @param options hosts, token, launcher...; copied, so later changes do not matter
   * @return the application, which you own: close it
   */
  public static Application open(String topologyPath, ApplicationOptions options) {
    Objects.requireNonNull(topologyPath, "topologyPath");
    Objects.requireNonNull(options, "options");
    NativeLibrary.load();
    return new Application(nOpen(topologyPath, null, null, null, options.strings(), options.encrypt(),
        options.nodes(), options.logToStderr()));
  }

  /**
   * As {@link #open(String)}, from YAML text.
   *
   * @param yaml the topology
   * @param name what stands for the file in messages ({@code name:line:column: ...})
   * @param baseDir the directory relative paths in the topology resolve against
   * @return the application, which you own: close it
   */
  public static Application fromText(String yaml, String name, String baseDir) {
    return fromText(yaml, name, baseDir, new ApplicationOptions());
  }

  /**
   * As {@link #fromText(String, String, String)}, with options.
   *
   * @param yaml the topology
   * @param name what stands for the file in messages
   * @param baseDir the directory relative paths resolve against
   * @param options hosts, token, launcher...
   * @return the application, which you own: close it
   */
  public static Application fromText(String yaml, String name, String baseDir, ApplicationOptions options) {
    Objects.requireNonNull(yaml, "yaml");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(baseDir, "baseDir");
    Objects.requireNonNull(options, "options");
    NativeLibrary.load();
    return new Application(nOpen(null, yaml, name, baseDir, options.strings(), options.encrypt(), options.nodes(),
        options.logToStderr()));
  }

  /**
   * Loads every library and class, places and creates every copy (across hosts, through the
   * host daemons), and waits until all are ready. {@link #submit} calls it when you did not.
   *
   * @throws SluiceException naming what failed (filter, copy, host)
   * @throws IllegalStateException after {@link #close()}
   */
  public void start() {
    nStart(live());
  }

  /**
   * Appends a unit of work. Returns at once.
   *
   * @param payload what {@link Context#work()} returns in every copy for this unit
   * @return the unit: read its results to the end, or wait for it, or close it (see {@link Unit})
   * @throws IllegalStateException once the application was stopped, aborted or closed
   * @throws SluiceException across hosts, for a payload over 16 MiB less 64 bytes (it crosses
   *     to the hosts in one control message): pass a file's path or a key instead
   */
  public Unit submit(String payload) {
    Objects.requireNonNull(payload, "payload");
    return submit(payload, payload.getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Appends a unit of work whose payload is these bytes, exactly (a binary query: a protobuf
   * message, say). Returns at once.
   *
   * @param payload what {@link Context#workBytes()} returns in every copy for this unit (and
   *     {@code sluice::Context::work()} in C++ copies); {@link Context#work()} and
   *     {@link Unit#work()} read it as UTF-8
   * @return the unit, as {@link #submit(String)} returns it
   * @throws IllegalStateException once the application was stopped, aborted or closed
   * @throws SluiceException across hosts, for a payload over 16 MiB less 64 bytes
   */
  public Unit submit(byte[] payload) {
    Objects.requireNonNull(payload, "payload");
    return submit(new String(payload, StandardCharsets.UTF_8), payload);
  }

  private Unit submit(String text, byte[] bytes) {
    Unit unit = new Unit(text);
    long[] submitted = nSubmit(live(), bytes, unit);
    unit.submitted(submitted[0], submitted[1]);
    return unit;
  }

  /**
   * Finishes the units already submitted, then stops every copy (across hosts, the app daemons
   * end; the host daemons keep running). Units submitted afterwards are refused. Results that no
   * thread has read by now are discarded: a thread still reading a unit gets
   * {@link IllegalStateException} from its next {@link Unit#read()}; result buffers still held
   * are closed (stale from now on). Every unit's {@link Unit#waitFor()} answers afterwards.
   * Idempotent.
   *
   * @throws IllegalStateException after {@link #close()}
   */
  public void stop() {
    nStop(live(), false);
  }

  /**
   * As {@link #stop()}, but fails the running unit and every queued one with stage
   * {@code cancelled} instead of running them.
   *
   * @throws IllegalStateException after {@link #close()}
   */
  public void abort() {
    nStop(live(), true);
  }

  /** @return the topology's {@code name:} */
  public String name() {
    return name;
  }

  /** @return whether it runs across hosts (else embedded, in this process) */
  public boolean remote() {
    return remote;
  }

  /**
   * @return the units that have ended so far
   * @throws IllegalStateException after {@link #close()}
   */
  public long unitsEnded() {
    return nUnitsEnded(live());
  }

  /**
   * {@link #stop()}, then lets go of the native deployment. Safe to call more than once (only
   * the first call does anything).
   */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) nClose(handle);
  }

  @Override
  public String toString() {
    return "Application(" + name + (remote ? ", across hosts" : ", embedded") + (closed.get() ? ", closed)" : ")");
  }

  private long live() {
    if (closed.get()) throw new IllegalStateException("this Application was closed; open it again");
    return handle;
  }

  private static native long nOpen(String path, String yaml, String name, String baseDir, String[] options,
                                   boolean encrypt, int nodes, boolean logToStderr);

  private static native String nName(long handle);

  private static native boolean nRemote(long handle);

  private static native void nStart(long handle);

  private static native long[] nSubmit(long handle, byte[] payload, Unit unit);

  private static native void nStop(long handle, boolean abort);

  private static native void nClose(long handle);

  private static native long nUnitsEnded(long handle);
}
