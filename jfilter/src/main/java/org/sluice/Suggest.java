package org.sluice;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

// "Did you mean": the Java twin of core-cpp/src/topology/suggest.cc, the same algorithm and
// thresholds, so that a misspelt class name gets the suggestion a misspelt key or filter name
// would get. Both read one table of cases in their tests (testing/data/closest_match.txt).
// Like the C++ one it works on UTF-8 bytes, with ASCII letters compared without case.
final class Suggest {
  private Suggest() {}

  // The candidate closest to `word` by edit distance, or null when none is close enough to be
  // a plausible typo (closest_match in suggest.h).
  static String closestMatch(String word, List<String> candidates) {
    int i = closestIndex(word, candidates);
    return i < 0 ? null : candidates.get(i);
  }

  // The index in `candidates` of closestMatch's answer, or -1.
  static int closestIndex(String word, List<String> candidates) {
    // The same parts in another order ("key_by", Flink's "keyBy", for "by_key"): no typo, but
    // far by edit distance.
    List<String> parts = sortedParts(word);
    if (parts.size() >= 2) {
      for (int i = 0; i < candidates.size(); i++) {
        if (sortedParts(candidates.get(i)).equals(parts)) return i;
      }
    }
    byte[] typed = lower(word);
    // The singular of a plural key, or the plural of a singular one ("copy" for "copies"): far
    // by edit distance in a short word, but what was meant.
    for (int i = 0; i < candidates.size(); i++) {
      byte[] candidate = lower(candidates.get(i));
      if (isPluralOf(candidate, typed) || isPluralOf(typed, candidate)) return i;
    }
    // A typo changes a few characters: allow about a third of the word, and at least two.
    int limit = Math.max(2, typed.length / 3);
    int best = -1;
    int bestDistance = limit + 1;
    for (int i = 0; i < candidates.size(); i++) {
      byte[] candidate = lower(candidates.get(i));
      int distance = editDistance(typed, candidate);
      // Rewriting every character is not a typo: "x" is not a misspelt "to".
      boolean plausible = distance < Math.max(typed.length, candidate.length);
      if (plausible && distance < bestDistance) {
        best = i;
        bestDistance = distance;
      }
    }
    return best;
  }

  // A word's parts, lower case and sorted: split at '_', '-' and where a lower-case ASCII
  // letter meets an upper-case one ("keyBy" and "key_by" are [by, key]).
  private static List<String> sortedParts(String word) {
    List<String> parts = new ArrayList<>();
    StringBuilder part = new StringBuilder();
    for (int i = 0; i < word.length(); i++) {
      char c = word.charAt(i);
      boolean cut = c == '_' || c == '-';
      boolean upper = c >= 'A' && c <= 'Z';
      boolean afterLower = i > 0 && word.charAt(i - 1) >= 'a' && word.charAt(i - 1) <= 'z';
      if (cut || (upper && afterLower)) {
        if (part.length() > 0) parts.add(part.toString());
        part.setLength(0);
      }
      if (!cut) part.append(upper ? (char) (c + ('a' - 'A')) : c);
    }
    if (part.length() > 0) parts.add(part.toString());
    Collections.sort(parts);
    return parts;
  }

  // `plural` is `singular` with an English plural ending: "copy" -> "copies", "arg" -> "args".
  // Words of three letters or more: "y" is not the singular of "ies".
  private static boolean isPluralOf(byte[] plural, byte[] singular) {
    int n = singular.length;
    if (n < 3) return false;
    if (plural.length == n + 1 && plural[n] == 's' && startsWith(plural, singular, n)) return true;
    return singular[n - 1] == 'y' && plural.length == n + 2 && startsWith(plural, singular, n - 1)
        && plural[n - 1] == 'i' && plural[n] == 'e' && plural[n + 1] == 's';
  }

  private static boolean startsWith(byte[] word, byte[] prefix, int length) {
    for (int i = 0; i < length; i++) {
      if (word[i] != prefix[i]) return false;
    }
    return true;
  }

  private static byte[] lower(String s) {
    byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] >= 'A' && bytes[i] <= 'Z') bytes[i] = (byte) (bytes[i] + ('a' - 'A'));
    }
    return bytes;
  }

  // Optimal string alignment distance: an insertion, a deletion, a substitution or a swap of
  // two adjacent characters each cost 1, so "plicy", "polcy" and "poilcy" are all one edit from
  // "policy".
  private static int editDistance(byte[] a, byte[] b) {
    int[][] d = new int[a.length + 1][b.length + 1];
    for (int i = 0; i <= a.length; i++) d[i][0] = i;
    for (int j = 0; j <= b.length; j++) d[0][j] = j;
    for (int i = 1; i <= a.length; i++) {
      for (int j = 1; j <= b.length; j++) {
        int cost = a[i - 1] == b[j - 1] ? 0 : 1;
        d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
          d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.length][b.length];
  }
}
