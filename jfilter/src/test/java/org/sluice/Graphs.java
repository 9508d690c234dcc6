package org.sluice;

import static org.junit.jupiter.api.Assertions.assertNull;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Runs small topologies through the real native runtime, in this JVM (see Embedded). */
final class Graphs {
  private Graphs() {}

  /** The directory that holds the test classes: the classpath of the Java filters under test. */
  static String classes() {
    try {
      return Path.of(Graphs.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** build/examples/libexamples.so: C++ filters (Produce, Forward, Consume, LineReader...). */
  static String examples() {
    Path lib = Path.of(System.getProperty("sluice.build.dir", "../build"), "examples", "libexamples.so");
    if (!Files.isRegularFile(lib)) {
      throw new IllegalStateException(lib + " does not exist; build the native side first (make, or cmake --build build)");
    }
    return lib.toAbsolutePath().toString();
  }

  /** `{lang: java, class: org.sluice.<nested>, classpath: [test classes]` without the closing brace. */
  static String java(Class<? extends Filter> type) {
    return "{lang: java, class: '" + type.getName() + "', classpath: ['" + classes() + "']";
  }

  /** `{class: name, library: libexamples.so` without the closing brace. */
  static String cpp(String name) {
    return "{class: " + name + ", library: '" + examples() + "'";
  }

  static Embedded.Result run(String yaml) {
    return Embedded.run(yaml, classes());
  }

  static Embedded.Result runOk(String yaml) {
    Embedded.Result result = run(yaml);
    assertNull(result.failure, () -> "the run failed: " + result.failure);
    return result;
  }
}
