package org.sluice;

/**
 * Thrown out of a blocking call ({@link InputStream#read}, {@link OutputStream#allocate},
 * {@link OutputStream#write}) when the run is being stopped because another part of the
 * application failed or the run was cancelled. Let it propagate out of the filter: the
 * runtime then unwinds quietly and reports the original failure. Catching it and going on
 * only delays the shutdown, since every later blocking call throws it again.
 */
public final class AbortedException extends SluiceException {
  private static final long serialVersionUID = 1L;

  /**
   * @param message why the run stops
   */
  public AbortedException(String message) {
    super(message);
  }
}
