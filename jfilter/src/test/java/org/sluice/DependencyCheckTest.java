package org.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Validation finds a dependency jar missing from a filter's classpath (pure Java: filters and
 * a dependency compiled here, the dependency then left off the classpath).
 */
class DependencyCheckTest {
  @TempDir static Path dir;
  static String dependency; // classes of package dep
  static String filters; // classes of package user, compiled against dep

  @BeforeAll
  static void compile() throws IOException {
    dependency = compile("dep", List.of(
        "package dep; public class Helper { public static int twice(int x) { return 2 * x; } }",
        "package dep; public abstract class Base implements org.sluice.Filter {}",
        "package dep; public class Extra extends Missing {}",
        "package dep; public class Missing {}"), null);
    filters = compile("user", List.of(
        "package user; public class FieldUser implements org.sluice.Filter {"
            + " private dep.Helper helper; public void process(org.sluice.Context ctx) {} }",
        "package user; public class SignatureUser implements org.sluice.Filter {"
            + " public dep.Helper make() { return null; } public void process(org.sluice.Context ctx) {} }",
        "package user; public class CodeUser implements org.sluice.Filter {"
            + " public void process(org.sluice.Context ctx) { ctx.log().info(\"\" + dep.Helper.twice(2)); } }",
        "package user; public class SuperUser extends dep.Base { public void process(org.sluice.Context ctx) {} }",
        "package user; public class ExtraUser implements org.sluice.Filter {"
            + " public void process(org.sluice.Context ctx) { new dep.Extra(); } }",
        "package user; public class Plain implements org.sluice.Filter {"
            + " private final StringBuilder text = new StringBuilder(); public void process(org.sluice.Context ctx) {"
            + " text.append(java.util.List.of(1)); } }"), dependency);
    // dep.Extra's superclass, left out of its own classpath below.
    Files.delete(Path.of(dependency, "dep", "Missing.class"));
  }

  private static String compile(String name, List<String> sources, String classpath) throws IOException {
    Path src = Files.createDirectories(dir.resolve(name + "-src"));
    Path out = Files.createDirectories(dir.resolve(name + "-classes"));
    List<String> args = new ArrayList<>(List.of("--release", "17", "-d", out.toString(), "-cp",
        System.getProperty("java.class.path") + (classpath == null ? "" : java.io.File.pathSeparator + classpath)));
    for (String source : sources) {
      String simple = source.replaceAll("(?s).*public (?:abstract )?class (\\w+).*", "$1");
      Path file = src.resolve(simple + ".java");
      Files.writeString(file, source);
      args.add(file.toString());
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    assertNotNull(javac, "the tests need a JDK (javax.tools)");
    assertEquals(0, javac.run(null, null, null, args.toArray(new String[0])), "javac " + args);
    return out.toString();
  }

  private static String check(String className, String... classpath) {
    return Bridge.check(className, classpath, new String[0]);
  }

  @Test
  void aFieldTypeFromAMissingJarIsNamedWithWhatToDo() {
    assertEquals("classpath [" + filters + "] lacks class 'dep.Helper', which class 'user.FieldUser' needs "
        + "(a field's or method's type); add the jar that holds it to classpath: (in a Maven project, "
        + "mvn dependency:copy-dependencies copies every dependency jar to target/dependency/)",
        check("user.FieldUser", filters));
    assertNull(check("user.FieldUser", filters, dependency));
  }

  @Test
  void aMethodSignatureTypeIsFound() {
    String problem = check("user.SignatureUser", filters);
    assertNotNull(problem);
    assertTrue(problem.contains("lacks class 'dep.Helper', which class 'user.SignatureUser' needs"), problem);
  }

  @Test
  void aClassUsedOnlyInsideProcessIsFound() {
    String problem = check("user.CodeUser", filters);
    assertNotNull(problem);
    assertTrue(problem.contains("lacks class 'dep.Helper', which class 'user.CodeUser' needs (its code uses it)"), problem);
    assertNull(check("user.CodeUser", filters, dependency));
  }

  @Test
  void aMissingSuperclassIsNamed() {
    String problem = check("user.SuperUser", filters);
    assertNotNull(problem);
    assertTrue(problem.contains("lacks class 'dep.Base', which class 'user.SuperUser' needs (its superclass or an "
        + "interface)"), problem);
    assertNull(check("user.SuperUser", filters, dependency));
  }

  @Test
  void aClassThatAUsedClassNeedsIsFound() {
    String problem = check("user.ExtraUser", filters, dependency);
    assertNotNull(problem);
    assertTrue(problem.contains("lacks class 'dep.Missing', which class 'user.ExtraUser' needs (through dep.Extra, "
        + "which its code uses)"), problem);
  }

  @Test
  void aFilterThatNeedsOnlyTheJdkAndSluicePasses() {
    assertNull(check("user.Plain", filters));
  }

  @Test
  void theConstantPoolNamesTheClassesACodeUses() throws IOException {
    try (InputStream in = Files.newInputStream(Path.of(filters, "user", "CodeUser.class"))) {
      List<String> names = ClassReferences.of(in);
      assertTrue(names.contains("dep.Helper"), names.toString());
      assertTrue(names.contains("org.sluice.Context"), names.toString());
      assertTrue(names.contains("org.sluice.Logger"), names.toString());
    }
  }
}
