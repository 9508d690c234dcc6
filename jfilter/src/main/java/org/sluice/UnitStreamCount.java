package org.sluice;

/**
 * What one stream carried during one unit of work, summed over every host: part of a
 * {@link UnitReport}. It mirrors the C++ {@code sluice::UnitStreamCount}. Immutable.
 */
public final class UnitStreamCount {
  private final String stream;
  private final long buffers;
  private final long bytes;

  UnitStreamCount(String stream, long buffers, long bytes) {
    this.stream = stream;
    this.buffers = buffers;
    this.bytes = bytes;
  }

  /** @return the stream, as {@code "read.out -> count.in"} ({@code "stage.out -> client"} for results) */
  public String stream() {
    return stream;
  }

  /** @return the buffers it carried in the unit */
  public long buffers() {
    return buffers;
  }

  /** @return the bytes (used sizes) of those buffers */
  public long bytes() {
    return bytes;
  }

  @Override
  public String toString() {
    return stream + ": " + buffers + " buffers, " + bytes + " bytes";
  }
}
