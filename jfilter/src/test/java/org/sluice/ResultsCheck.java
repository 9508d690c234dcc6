package org.sluice;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * Checks the results of one unit of the C++ test filters (application/test_filters/
 * app_filters.cc), as application/results_check.h does: every buffer's bytes, order per
 * source copy, completeness. Each result starts with five native-order u64: source object id,
 * units that object ran before, copy, sequence, unit index; then byte i is
 * (unit * 131 + copy * 31 + seq * 7 + i) & 0xff, inverted when a filter in between inverts.
 */
final class ResultsCheck {
  private final long unit;
  private final int copies;
  private final long count;
  private final int size;
  private final boolean inverted;
  private final Map<Integer, Long> next = new HashMap<>();
  private final Map<Integer, Long> ids = new HashMap<>();
  private final Map<Integer, Long> seen = new HashMap<>();
  private String problem = "";

  ResultsCheck(long unit, int copies, long count, int size) {
    this(unit, copies, count, size, false);
  }

  ResultsCheck(long unit, int copies, long count, int size, boolean inverted) {
    this.unit = unit;
    this.copies = copies;
    this.count = count;
    this.size = Math.max(size, 40);
    this.inverted = inverted;
  }

  /** Checks one result; the first problem is kept. */
  void add(Buffer b) {
    if (!problem.isEmpty()) return;
    if (b.size() != size) {
      fail("a buffer of " + b.size() + " bytes, want " + size);
      return;
    }
    ByteBuffer data = b.data();
    long copy = data.getLong(16);
    long seq = data.getLong(24);
    if (data.getLong(32) != unit) {
      fail("a buffer of unit " + data.getLong(32));
      return;
    }
    if (copy < 0 || copy >= copies) {
      fail("a buffer from copy " + copy);
      return;
    }
    int c = (int) copy;
    long want = next.getOrDefault(c, 0L);
    if (seq != want) {
      fail("copy " + copy + ": sequence " + seq + " after " + want + " (lost, duplicated or reordered)");
      return;
    }
    if (b.key() != seq) {
      fail("copy " + copy + " sequence " + seq + ": key " + b.key());
      return;
    }
    next.put(c, want + 1);
    ids.put(c, data.getLong(0));
    seen.put(c, data.getLong(8));
    for (int i = 40; i < size; i++) {
      int expected = (int) ((unit * 131 + copy * 31 + seq * 7 + i) & 0xff);
      if (inverted) expected = ~expected & 0xff;
      if ((data.get(i) & 0xff) != expected) {
        fail("copy " + copy + " sequence " + seq + ": byte " + i + " corrupt");
        return;
      }
    }
  }

  boolean complete() {
    if (!problem.isEmpty()) return false;
    for (int c = 0; c < copies; c++) {
      if (next.getOrDefault(c, 0L) != count) return false;
    }
    return true;
  }

  String problem() {
    if (!problem.isEmpty()) return problem;
    StringBuilder out = new StringBuilder();
    for (int c = 0; c < copies; c++) out.append("copy ").append(c).append(": ").append(next.getOrDefault(c, 0L)).append('/').append(count).append(' ');
    return out.toString();
  }

  /** Source copy -> the id of the filter object that made its results. */
  Map<Integer, Long> objectIds() {
    return ids;
  }

  /** Source copy -> how many units that object had run before this one. */
  Map<Integer, Long> unitsSeen() {
    return seen;
  }

  private void fail(String why) {
    if (problem.isEmpty()) problem = "unit " + unit + ": " + why;
  }
}
