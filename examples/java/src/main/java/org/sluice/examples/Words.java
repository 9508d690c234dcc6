package org.sluice.examples;

import java.nio.ByteBuffer;
import org.sluice.Buffer;
import org.sluice.Context;
import org.sluice.Filter;
import org.sluice.InputStream;
import org.sluice.OutputStream;

/**
 * Splits text into words (letters and inner apostrophes) and writes each word in a buffer of
 * its own, newly allocated from the output stream's pool, keyed by the word's 64-bit FNV-1a
 * hash: on a by_key stream, equal words meet the same consumer copy. The input buffers go back
 * to their pool with close(). Words longer than the output's buffer_size are cut.
 */
public final class Words implements Filter {
  @Override
  public void process(Context ctx) {
    InputStream in = ctx.input("in");
    OutputStream out = ctx.output("out");
    for (Buffer text; (text = in.read()) != null; ) {
      ByteBuffer data = text.data();
      int size = text.size();
      int start = -1;
      for (int i = 0; i <= size; i++) {
        boolean letter = i < size && isWordByte(data.get(i), start >= 0);
        if (letter && start < 0) start = i;
        if (!letter && start >= 0) {
          emit(out, data, start, i - start);
          start = -1;
        }
      }
      text.close();
    }
  }

  private static boolean isWordByte(byte c, boolean inWord) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c == '\'' && inWord);
  }

  private static void emit(OutputStream out, ByteBuffer from, int start, int length) {
    Buffer word = out.allocate();
    int n = Math.min(length, word.capacity());
    word.data().put(0, from, start, n);
    word.size(n);
    word.key(fnv1a(word.data(), n));
    out.write(word);
  }

  // 64-bit FNV-1a, as the C++ examples' word_key.
  static long fnv1a(ByteBuffer bytes, int n) {
    long hash = 0xcbf29ce484222325L;
    for (int i = 0; i < n; i++) {
      hash ^= bytes.get(i) & 0xff;
      hash *= 0x100000001b3L;
    }
    return hash;
  }
}
