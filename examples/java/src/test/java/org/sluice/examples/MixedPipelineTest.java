package org.sluice.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The example pipeline end to end, through the console (build/console/sluice), as `make run`
 * runs it: C++ LineReader -> Java Upper -> Java Words -> C++ WordCount -> C++ TopWords. The
 * topology is examples/mixed.yaml with the Java classpath pointed at this module's classes
 * (the jar comes later, in Maven's package phase).
 */
class MixedPipelineTest {
  private static final Path EXAMPLES = Path.of("..").toAbsolutePath().normalize();
  private static final Path BUILD = Path.of(System.getProperty("sluice.build.dir", "../../build")).toAbsolutePath();

  private static String run(Path topology, String... work) throws IOException, InterruptedException {
    Path console = BUILD.resolve("console/sluice");
    assertTrue(Files.isExecutable(console), console + " is missing: build the native side first (make)");
    List<String> command = new ArrayList<>(List.of(console.toString(), "run", topology.toString(), "--no-progress"));
    for (String w : work) command.addAll(List.of("--work", w));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the run did not end");
    assertEquals(0, p.exitValue(), output);
    return output;
  }

  private static Path localized(Path dir) throws IOException {
    String yaml = Files.readString(EXAMPLES.resolve("mixed.yaml"))
        .replace("../build/", BUILD + "/")
        .replace("data/words.txt", EXAMPLES.resolve("data/words.txt").toString())
        .replace("java/target/examples.jar", Path.of("target/classes").toAbsolutePath().toString());
    Path topology = dir.resolve("mixed.yaml");
    Files.writeString(topology, yaml);
    return topology;
  }

  @Test
  void mixedPipelineCountsUpperCasedWords(@TempDir Path dir) throws Exception {
    String output = run(localized(dir), "one", "two");
    // The text has 329 words (147 distinct); Upper rewrote them in place, Words split them one per buffer.
    assertTrue(output.contains("unit 0 [one]: 329 words, 147 distinct"), output);
    assertTrue(output.contains("unit 1 [two]: 329 words, 147 distinct"), output);
    assertTrue(output.contains("  56\tTHE\n"), output);
    assertTrue(output.contains("units of work: 2/2 finished"), output);
  }
}
