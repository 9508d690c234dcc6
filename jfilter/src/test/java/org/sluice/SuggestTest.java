package org.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Suggest answers every case of testing/data/closest_match.txt as the C++ closest_match does
 * (core-cpp/src/topology/suggest_test.cc reads the same table).
 */
class SuggestTest {
  @Test
  void answersTheSharedTableLikeTheCppOne() throws IOException {
    Path table = Path.of(System.getProperty("sluice.testing.data", "../testing/data"), "closest_match.txt");
    int cases = 0;
    for (String line : Files.readAllLines(table)) {
      if (line.isBlank() || line.startsWith("#")) continue;
      String[] fields = line.split("\\|", -1);
      assertEquals(3, fields.length, () -> table + ": not 'word | candidates | answer': " + line);
      String word = fields[0].trim();
      List<String> candidates = fields[1].isBlank()
          ? List.of() : Arrays.asList(fields[1].trim().split(" +"));
      String answer = fields[2].trim();
      assertEquals(answer.isEmpty() ? null : answer, Suggest.closestMatch(word, new ArrayList<>(candidates)),
          () -> table + ": " + line);
      cases++;
    }
    assertTrue(cases >= 20, table + " holds only " + cases + " cases");
  }
}
