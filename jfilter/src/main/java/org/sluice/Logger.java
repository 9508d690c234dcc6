package org.sluice;

/**
 * A filter copy's log: each message becomes one line on standard error (a message of several
 * lines, one line each), prefixed with the filter's name, copy and host
 * ({@code [count#1@a] warn: ...}), next to the lines of C++ filters. Messages below the process-wide level (environment variable {@code SLUICE_LOG}:
 * debug, info, warn or error; default info) are dropped.
 *
 * <p>Safe to use from any thread, and after the unit of work.
 */
public final class Logger {
  private static final int DEBUG = 0;
  private static final int INFO = 1;
  private static final int WARN = 2;
  private static final int ERROR = 3;

  private final String prefix;

  Logger(String prefix) {
    this.prefix = prefix;
  }

  /** @param message one line of detail for debugging */
  public void debug(String message) {
    nLog(prefix, DEBUG, String.valueOf(message));
  }

  /** @param message one line of information */
  public void info(String message) {
    nLog(prefix, INFO, String.valueOf(message));
  }

  /** @param message one line about something unexpected that the filter survives */
  public void warn(String message) {
    nLog(prefix, WARN, String.valueOf(message));
  }

  /** @param message one line about a failure */
  public void error(String message) {
    nLog(prefix, ERROR, String.valueOf(message));
  }

  private static native void nLog(String prefix, int level, String message);
}
