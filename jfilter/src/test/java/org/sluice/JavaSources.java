package org.sluice;

import java.io.IOException;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

/** Compiles a Java filter at test time into a jar that nothing but a topology's classpath names. */
final class JavaSources {
  private JavaSources() {}

  /** Compiles `source` (class `className`) against org.sluice and jars it in `dir`. */
  static Path compileToJar(Path dir, String className, String source) throws IOException {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    if (javac == null) throw new IllegalStateException("no Java compiler in this JVM: run the tests with a JDK 17");
    Path src = dir.resolve("src").resolve(className.replace('.', '/') + ".java");
    Files.createDirectories(src.getParent());
    Files.writeString(src, source);
    Path classes = dir.resolve("classes");
    Files.createDirectories(classes);
    int rc = javac.run(null, null, null, "--release", "17", "-cp", jfilterClasses(), "-d", classes.toString(), src.toString());
    if (rc != 0) throw new IllegalStateException("javac failed on " + src);
    Path jar = dir.resolve(className.substring(className.lastIndexOf('.') + 1).toLowerCase() + ".jar");
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar)); Stream<Path> files = Files.walk(classes)) {
      for (Path p : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
        out.putNextEntry(new JarEntry(classes.relativize(p).toString().replace('\\', '/')));
        Files.copy(p, (OutputStream) out);
        out.closeEntry();
      }
    }
    return jar;
  }

  /** Where org.sluice's classes are (target/classes, or the jfilter jar). */
  static String jfilterClasses() {
    try {
      return Path.of(Filter.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }
}
