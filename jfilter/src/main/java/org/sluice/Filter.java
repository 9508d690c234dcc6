package org.sluice;

/**
 * A Java filter: the user's unit of computation, run next to C++ filters.
 *
 * <p>The runtime creates one object per copy (through the public no-argument constructor),
 * once per run, and keeps it across units of work. For each unit of work it calls
 * {@link #init}, then {@link #process}, then {@link #finalize(Context)}, all on the copy's
 * own thread; no two of them run at once, so a filter need not be thread-safe. Different
 * copies are different objects on different threads.
 *
 * <p>An exception thrown by any method stops the application; the console reports the
 * filter, copy, host and unit of work with the exception's full stack trace. Let
 * {@link AbortedException} propagate: it means another part of the application failed.
 *
 * <pre>{@code
 * public final class Upper implements org.sluice.Filter {
 *   @Override public void process(Context ctx) {
 *     InputStream in = ctx.input("in");
 *     OutputStream out = ctx.output("out");
 *     for (Buffer b; (b = in.read()) != null; ) {
 *       ByteBuffer data = b.data();
 *       for (int i = 0; i < b.size(); i++) data.put(i, (byte) Character.toUpperCase(data.get(i)));
 *       out.write(b);
 *     }
 *   }
 * }
 * }</pre>
 *
 * <p>A topology names the class with {@code lang: java}, {@code class:} (fully qualified)
 * and {@code classpath:} (the jars or directories that hold it).
 */
public interface Filter {
  /**
   * Called once per unit of work, before {@link #process}. Default: nothing.
   *
   * @param ctx this copy's view of the running application, valid until the unit of work ends
   * @throws Exception to stop the application
   */
  default void init(Context ctx) throws Exception {}

  /**
   * Reads inputs until end of work (or not at all, for a source) and writes outputs.
   * Returning ends this copy's part of the unit of work: its outputs then carry end of work
   * downstream. Buffers it still holds when it returns are released, with a warning.
   *
   * @param ctx this copy's view of the running application, valid until the unit of work ends
   * @throws Exception to stop the application
   */
  void process(Context ctx) throws Exception;

  /**
   * Called once per unit of work, after {@link #process}; outputs are closed by then.
   * Default: nothing. (It takes a {@link Context}, so it never overrides
   * {@code Object.finalize()}.)
   *
   * @param ctx this copy's view of the running application, valid until the unit of work ends
   * @throws Exception to stop the application
   */
  default void finalize(Context ctx) throws Exception {}
}
