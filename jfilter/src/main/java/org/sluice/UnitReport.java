package org.sluice;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * How a unit of work ended: finished, or the failure (who failed, where, why), and what each
 * stream carried. It mirrors the C++ {@code sluice::UnitReport}; {@link #toString()} is its
 * {@code str()}. From {@link Unit#waitFor()}. Immutable.
 */
public final class UnitReport {
  private final long index;
  private final String work;
  private final boolean finished;
  private final double seconds;
  private final String filter;
  private final int copy;
  private final String host;
  private final String stage;
  private final String message;
  private final String crash;
  private final String text;
  private final List<UnitStreamCount> streams;
  private final List<String> partialCounts;

  // Made by the native side (application/app_types.cc) when the unit ends.
  UnitReport(long index, String work, boolean finished, double seconds, String filter, int copy, String host,
             String stage, String message, String crash, String text, String[] streamNames, long[] buffers,
             long[] bytes, String[] partialCounts) {
    this.index = index;
    this.work = work;
    this.finished = finished;
    this.seconds = seconds;
    this.filter = filter;
    this.copy = copy;
    this.host = host;
    this.stage = stage;
    this.message = message;
    this.crash = crash;
    this.text = text;
    List<UnitStreamCount> list = new ArrayList<>(streamNames.length);
    for (int i = 0; i < streamNames.length; i++) list.add(new UnitStreamCount(streamNames[i], buffers[i], bytes[i]));
    this.streams = Collections.unmodifiableList(list);
    this.partialCounts = List.of(partialCounts);
  }

  /** @return the unit's index: 0, 1, 2 ... in submission order over the application's life */
  public long index() {
    return index;
  }

  /** @return the payload the unit was submitted with */
  public String work() {
    return work;
  }

  /** @return true when every copy ran init, process and finalize for the unit */
  public boolean finished() {
    return finished;
  }

  /** @return seconds from the moment the unit started running to its end (0 if it never ran) */
  public double seconds() {
    return seconds;
  }

  /**
   * @return the filter that failed; {@code ""} when the unit finished, or when the failure was
   *     no filter's fault (cancelled, a host lost, the application aborted before it ran)
   */
  public String filter() {
    return filter;
  }

  /** @return the failed filter's copy, or -1 */
  public int copy() {
    return copy;
  }

  /** @return the host where it failed, or {@code ""} */
  public String host() {
    return host;
  }

  /**
   * @return where it failed: {@code create}, {@code init}, {@code process}, {@code finalize},
   *     {@code cancelled}, {@code deploy}, {@code host}, ...; {@code ""} when it finished
   */
  public String stage() {
    return stage;
  }

  /**
   * @return the failure's message: the exception's (for a Java filter, with its stack trace);
   *     {@code ""} when it finished
   */
  public String message() {
    return message;
  }

  /**
   * @return across hosts, when the unit failed because a process that ran its copies ended,
   *     how: a signal's name ({@code "SIGSEGV"}, {@code "SIGABRT"}; {@code "SIGKILL"} for an app
   *     daemon killed from outside), {@code "exit(7)"} or {@code "System.exit(3)"} when a filter
   *     ended its process, {@code "JVM ended (status 3)"} when the JVM ended outside any copy;
   *     {@code ""} for everything else (an exception, a lost host, cancelled), so a program can
   *     tell a crash from an exception without reading the message
   */
  public String crash() {
    return crash;
  }

  /** @return what every stream carried in this unit, in the topology's order */
  public List<UnitStreamCount> streams() {
    return streams;
  }

  /**
   * @return when the unit failed across hosts, the hosts whose final counts never came, each
   *     as {@code "b, which never reported"} or {@code "b, last reported 0.4 s before the end"}
   *     (a host lost, an app daemon that crashed): {@link #streams()} then counts at least what
   *     was carried. Empty otherwise.
   */
  public List<String> partialCounts() {
    return partialCounts;
  }

  /**
   * @param name a stream as {@link UnitStreamCount#stream()} names it, e.g. {@code "stage.out -> client"}
   * @return what it carried in this unit, or null when the topology has no such stream
   */
  public UnitStreamCount stream(String name) {
    for (UnitStreamCount s : streams) {
      if (s.stream().equals(name)) return s;
    }
    return null;
  }

  /**
   * @return {@code "unit 3 [payload] finished in 0.012 s"}, or the failure named as
   *     {@code sluice run} names it (the C++ {@code UnitReport::str()})
   */
  @Override
  public String toString() {
    return text;
  }
}
