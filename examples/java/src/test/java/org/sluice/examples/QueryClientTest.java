package org.sluice.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sluice.Application;

/**
 * The Java client example as a user runs it: a plain `java` process (its own JVM, nothing but
 * the jfilter classes and this module's on its class path) that opens examples/client.yaml,
 * submits units and prints their results; the topology's Java filters (Echo, Upper) run in
 * that process's JVM, next to the C++ Forward.
 */
class QueryClientTest {
  private static final Path EXAMPLES = Path.of("..").toAbsolutePath().normalize();
  private static final Path BUILD = Path.of(System.getProperty("sluice.build.dir", "../../build")).toAbsolutePath();

  private static Path localized(Path dir) throws IOException {
    String yaml = Files.readString(EXAMPLES.resolve("client.yaml"))
        .replace("../build/", BUILD + "/")
        .replace("java/target/examples.jar", Path.of("target/classes").toAbsolutePath().toString());
    Path topology = dir.resolve("client.yaml");
    Files.writeString(topology, yaml);
    return topology;
  }

  private static String location(Class<?> type) {
    try {
      return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  private record Run(int status, String out) {}

  private static Run client(String... args) throws IOException, InterruptedException {
    String library = System.getProperty("sluice.application.library");
    assertTrue(library != null && Files.isRegularFile(Path.of(library)),
        library + " is missing: build the native side first (make)");
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xcheck:jni",
        "-Dsluice.application.library=" + library,
        "-cp", location(Application.class) + java.io.File.pathSeparator + location(QueryClient.class),
        QueryClient.class.getName()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the client did not end");
    return new Run(p.exitValue(), out);
  }

  @Test
  void aPlainJavaProgramSubmitsUnitsAndPrintsTheirResults(@TempDir Path dir) throws Exception {
    Path results = dir.resolve("results.bin");
    Run run = client("--results", results.toString(), localized(dir).toString(), "hello", "sluice queries", "");
    assertEquals(0, run.status(), run.out());
    assertTrue(run.out().startsWith("deployed 'client' embedded\n"), run.out());
    String expected = "unit 0 [hello]:\n"
        + "  HELLO\n"
        + "unit 0 [hello] finished in ";
    assertTrue(run.out().contains(expected), run.out());
    assertTrue(run.out().contains("unit 1 [sluice queries]:\n  SLUICE QUERIES\nunit 1 [sluice queries] finished in "), run.out());
    assertTrue(run.out().contains(" (1 results, 14 bytes)\n"), run.out());
    assertTrue(run.out().contains("unit 2 []:\nunit 2 [] finished in "), run.out());
    assertTrue(run.out().contains(" (0 results, 0 bytes)\n"), run.out());
    assertArrayEquals("HELLOSLUICE QUERIES".getBytes(StandardCharsets.UTF_8), Files.readAllBytes(results));
    assertFalse(run.out().contains("WARNING"), "-Xcheck:jni found JNI misuse:\n" + run.out());
  }

  // The same client across two host daemons (real sluiced processes on loopback ports of their
  // choosing): the copies run in app daemons, the results come over the data plane.
  @Test
  void theSameClientAcrossTwoHostDaemons(@TempDir Path dir) throws Exception {
    Path sluiced = BUILD.resolve("daemons/sluiced");
    assertTrue(Files.isExecutable(sluiced), sluiced + " is missing: build the native side first (make)");
    Path token = dir.resolve("token");
    Files.writeString(token, Long.toHexString(new java.security.SecureRandom().nextLong())
        + Long.toHexString(new java.security.SecureRandom().nextLong()) + "\n");
    Files.setPosixFilePermissions(token, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
    List<Process> daemons = new ArrayList<>();
    try {
      StringBuilder hosts = new StringBuilder();
      for (String name : List.of("a", "b")) {
        Path ready = dir.resolve(name + ".ready");
        daemons.add(new ProcessBuilder(sluiced.toString(), "--listen", "127.0.0.1:0", "--token-file", token.toString(),
            "--ready-file", ready.toString()).redirectErrorStream(true).redirectOutput(dir.resolve(name + ".log").toFile()).start());
        String address = "";
        for (int i = 0; i < 300 && address.isEmpty(); i++) {
          if (Files.exists(ready)) address = Files.readString(ready).trim();
          if (address.isEmpty()) Thread.sleep(20);
        }
        assertTrue(!address.isEmpty(), () -> "sluiced " + name + " did not start: " + log(dir.resolve(name + ".log")));
        hosts.append(hosts.length() == 0 ? "" : ",").append(name).append('=').append(address);
      }
      Run run = client("--hosts", hosts.toString(), "--token-file", token.toString(), localized(dir).toString(),
          "hello", "across hosts");
      assertEquals(0, run.status(), run.out());
      assertTrue(run.out().startsWith("deployed 'client' across hosts\n"), run.out());
      assertTrue(run.out().contains("unit 0 [hello]:\n  HELLO\nunit 0 [hello] finished in "), run.out());
      assertTrue(run.out().contains("unit 1 [across hosts]:\n  ACROSS HOSTS\nunit 1 [across hosts] finished in "), run.out());
    } finally {
      for (Process p : daemons) p.destroy();
      for (Process p : daemons) p.waitFor();
    }
  }

  private static String log(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      return "(no log)";
    }
  }

  @Test
  void aTopologyThatDoesNotOpenIsStatus2WithItsLineAndColumn(@TempDir Path dir) throws Exception {
    Path bad = dir.resolve("bad.yaml");
    Files.writeString(bad, "name: bad\nfilters:\n  echo: {lang: java, class: org.sluice.examples.Echo, classpat: [x]}\n");
    Run run = client(bad.toString(), "hello");
    assertEquals(2, run.status(), run.out());
    assertTrue(run.out().contains(bad + ":3:"), run.out());
  }

  @Test
  void describeShowsTextAsTextAndBytesAsHex() {
    assertEquals("HELLO wörld", QueryClient.describe("HELLO wörld".getBytes(StandardCharsets.UTF_8)));
    assertEquals("3 bytes: 00 01 ff", QueryClient.describe(new byte[] {0, 1, (byte) 0xff}));
  }
}
