package org.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What validation says about classes that cannot be filters (pure Java: no native code). */
class BridgeTest {
  public static final class Good implements Filter {
    @Override
    public void process(Context ctx) {}
  }

  public abstract static class Abstract implements Filter {}

  static final class Hidden implements Filter {
    @Override
    public void process(Context ctx) {}
  }

  public final class Inner implements Filter {
    @Override
    public void process(Context ctx) {}
  }

  public static final class NeedsArgument implements Filter {
    public NeedsArgument(int n) {}

    @Override
    public void process(Context ctx) {}
  }

  public static final class NotAFilter {}

  @RequiredArgs({"path", "limit"})
  public static final class NeedsPathAndLimit implements Filter {
    @Override
    public void process(Context ctx) {}
  }

  // Annotations are read without initializing the class: its static code never runs.
  @RequiredArgs("path")
  public static final class FailsToInitialize implements Filter {
    static {
      if (true) throw new IllegalStateException("initialized by validation");
    }

    @Override
    public void process(Context ctx) {}
  }

  private static String check(String name) {
    return Bridge.check(name, new String[] {Graphs.classes()}, new String[0]);
  }

  /** An exception whose own description throws. */
  static final class Evil extends RuntimeException {
    @Override
    public String getMessage() {
      throw new IllegalStateException("no message for you");
    }

    @Override
    public String toString() {
      throw new IllegalStateException("no description either");
    }
  }

  @Test
  void aStackTraceWhoseDescriptionThrowsStillNamesItsClassAndFrames() {
    String trace = Bridge.stackTrace(new Evil());
    assertTrue(trace.startsWith("org.sluice.BridgeTest$Evil (its description could not be printed: "
        + "java.lang.IllegalStateException)"), trace);
    assertTrue(trace.contains("\tat org.sluice.BridgeTest.aStackTraceWhoseDescriptionThrowsStillNamesItsClassAndFrames("),
        trace);
  }

  static int recurse(int depth) {
    return recurse(depth + 1) + 1;
  }

  static int pingA(int depth) {
    return pingB(depth + 1) + 1;
  }

  static int pingB(int depth) {
    return pingA(depth + 1) + 1;
  }

  // A StackOverflowError printed about a thousand identical frames (an outside review): the
  // error's own line scrolled away. A run of one line, or of a short cycle, is written once.
  @Test
  void aStackOverflowsRecursionIsWrittenOnceWithHowOftenItRepeats() {
    for (boolean cycle : new boolean[] {false, true}) {
      StackOverflowError e = null;
      try {
        if (cycle) {
          pingA(0);
        } else {
          recurse(0);
        }
      } catch (StackOverflowError thrown) {
        e = thrown;
      }
      assertNotNull(e);
      String trace = Bridge.stackTrace(e);
      String[] lines = trace.split("\\R");
      assertTrue(lines.length < 20, () -> lines.length + " lines: " + trace.substring(0, Math.min(2000, trace.length())));
      assertEquals("java.lang.StackOverflowError", lines[0]);
      assertTrue(trace.matches("(?s).*\tat org\\.sluice\\.BridgeTest\\.(recurse|pingA|pingB)\\(BridgeTest\\.java:\\d+\\)\\R"
          + "(\tat .*\\R)?\t\\.\\.\\. \\(the (line|2 lines) above repeated \\d{3,} more times\\).*"), trace);
    }
    assertEquals("a\nb\nb", Bridge.foldRepeats("a\nb\nb"), "two alike are left as they are");
    assertEquals("a\nb\n\t... (the line above repeated 2 more times)\nc", Bridge.foldRepeats("a\nb\nb\nb\nc"));
  }

  @Test
  void acceptsAPublicConcreteFilterWithANoArgumentConstructor() {
    assertNull(check("org.sluice.BridgeTest$Good"));
  }

  @Test
  void saysWhatIsWrongAndWhatWouldBeRight() {
    assertEquals("class 'org.sluice.BridgeTest$NotAFilter' does not implement org.sluice.Filter; declare it as "
        + "'public class NotAFilter implements org.sluice.Filter'", check("org.sluice.BridgeTest$NotAFilter"));
    assertEquals("class 'org.sluice.BridgeTest$Abstract' is abstract; name a concrete class that implements "
        + "org.sluice.Filter", check("org.sluice.BridgeTest$Abstract"));
    assertEquals("class 'org.sluice.BridgeTest$Hidden' is not public; declare it public", check("org.sluice.BridgeTest$Hidden"));
    assertEquals("class 'org.sluice.BridgeTest$Inner' is an inner class; declare it static", check("org.sluice.BridgeTest$Inner"));
    assertEquals("class 'org.sluice.BridgeTest$NeedsArgument' has no public no-argument constructor; add "
        + "'public NeedsArgument() {}'", check("org.sluice.BridgeTest$NeedsArgument"));
    assertTrue(Bridge.check("X", new String[] {"/no/such/dir"}, new String[0]).startsWith("classpath entry '/no/such/dir' does not exist"));
  }

  // The smallest class file: public class NAME extends Object, nothing in it.
  static byte[] classFile(String internalName) throws IOException {
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    try (java.io.DataOutputStream out = new java.io.DataOutputStream(bytes)) {
      out.writeInt(0xCAFEBABE);
      out.writeShort(0);
      out.writeShort(52);
      out.writeShort(5); // constant pool: #1..#4
      out.writeByte(1);
      out.writeUTF(internalName);
      out.writeByte(7);
      out.writeShort(1);
      out.writeByte(1);
      out.writeUTF("java/lang/Object");
      out.writeByte(7);
      out.writeShort(3);
      out.writeShort(0x0021); // public, super
      out.writeShort(2);
      out.writeShort(4);
      out.writeShort(0); // interfaces, fields, methods, attributes
      out.writeShort(0);
      out.writeShort(0);
      out.writeShort(0);
    }
    return bytes.toByteArray();
  }

  @Test
  void aClasspathDirectoryAboveTheClassesIsToldWhichOneToName(@TempDir Path dir) throws IOException {
    // java/target for java/target/classes: it suggested a class named 'classes.com.example.Negate'.
    Path classes = dir.resolve("target").resolve("classes");
    Files.createDirectories(classes.resolve("com/example"));
    Files.write(classes.resolve("com/example/Negate.class"), classFile("com/example/Negate"));
    String above = Bridge.check("com.example.Negate", new String[] {dir.resolve("target").toString()}, new String[0]);
    assertTrue(above.endsWith("; it is in '" + classes + "', below the entry: a directory entry is the one its packages "
        + "start in, so write classpath: [" + classes + "]"), above);
  }

  @Test
  void aClasspathWrittenAsJavaWritesItIsToldToBeAList(@TempDir Path dir) throws IOException {
    String joined = Graphs.classes() + ":" + dir.resolve("dep.jar");
    assertEquals("classpath entry '" + joined + "' does not exist: classpath: is a YAML list, not a :-separated path; "
        + "write classpath: [" + Graphs.classes() + ", " + dir.resolve("dep.jar") + "] with each entry as it was",
        Bridge.check("org.sluice.BridgeTest$Good", new String[] {joined}, new String[0]));
    String none = Bridge.check("org.example.Missing", new String[0], new String[0]);
    assertTrue(none.endsWith("the filter has no classpath: add classpath: [the jar or directory of its classes] to it "
        + "in the topology"), none);
    Files.createFile(dir.resolve("dep.jar"));
    String jars = Bridge.check("org.example.Missing", new String[] {dir.toString()}, new String[0]);
    assertTrue(jars.endsWith("directory '" + dir + "' holds jars but no classes, and a directory entry does not include "
        + "its jars: write '" + dir + "/*' for them"), jars);
  }

  private static String checkWithArgs(String name, String... keys) {
    return Bridge.check(name, new String[] {Graphs.classes()}, keys);
  }

  @Test
  void namesTheDeclaredArgumentsATopologyLeavesOut() {
    String name = "org.sluice.BridgeTest$NeedsPathAndLimit";
    assertEquals("class '" + name + "' needs args.path, args.limit (it declares them with @RequiredArgs); add them to "
        + "the filter, e.g. args: {path: ...}", checkWithArgs(name));
    assertEquals("class '" + name + "' needs args.limit (it declares them with @RequiredArgs); add it to the filter, "
        + "e.g. args: {limit: ...}", checkWithArgs(name, "path", "other"));
    assertNull(checkWithArgs(name, "limit", "path"));
    assertEquals("class '" + name + "' needs args.limit (it declares them with @RequiredArgs); add it to the filter, "
        + "e.g. args: {limit: ...}; args.limt is there: did you mean 'limit'?", checkWithArgs(name, "path", "limt"),
        "a misspelt key is pointed at");
    assertNull(checkWithArgs("org.sluice.BridgeTest$Good"), "a class without @RequiredArgs needs none");
    assertEquals("class 'org.sluice.BridgeTest$FailsToInitialize' needs args.path (it declares them with "
        + "@RequiredArgs); add it to the filter, e.g. args: {path: ...}",
        checkWithArgs("org.sluice.BridgeTest$FailsToInitialize"), "read without running the class's static code");
  }

  @Test
  void suggestsTheNearestClass() {
    assertTrue(check("org.sluice.BridgeTest.Good").endsWith("did you mean 'org.sluice.BridgeTest$Good'?"),
        check("org.sluice.BridgeTest.Good"));
    assertTrue(check("BridgeTest$Good").endsWith("did you mean 'org.sluice.BridgeTest$Good'?"));
    assertTrue(check("org.sluice.BrigdeTest$Good").endsWith("did you mean 'org.sluice.BridgeTest$Good'?"));
    assertEquals("org.example.Upper", Bridge.closest("org.example.upper", List.of("org.example.Upper", "org.example.Lower")));
    assertNull(Bridge.closest("com.acme.Thing", List.of("org.example.Upper")));
  }
}
