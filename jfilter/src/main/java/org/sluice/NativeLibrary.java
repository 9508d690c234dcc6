package org.sluice;

import java.io.File;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

// Finds and loads libsluice_application_jni.so, the native side of Application and Unit, into
// the caller's JVM, once. Where it looks, first match wins:
//   1. the system property sluice.application.library (a path to the .so),
//   2. the environment variable SLUICE_APPLICATION_LIBRARY (a path to the .so),
//   3. the installed package, from the jar this class came from: PREFIX/share/sluice/jfilter.jar
//      -> PREFIX/lib (or lib64, or lib/<multiarch>)/libsluice_application_jni.so; or, for the
//      build tree's build/jfilter/jfilter.jar, build/core-cpp/libsluice_application_jni.so,
//   4. java.library.path (System.loadLibrary("sluice_application_jni")).
// The library finds libsluice_jni, libsluice-application and libsluice beside itself ($ORIGIN),
// and adopts this JVM when it loads, so Java filters of the topology run here.
final class NativeLibrary {
  static final String PROPERTY = "sluice.application.library";
  static final String ENVIRONMENT = "SLUICE_APPLICATION_LIBRARY";
  static final String NAME = "sluice_application_jni";
  static final String FILE = "lib" + NAME + ".so";

  private static boolean loaded;

  private NativeLibrary() {}

  static synchronized void load() {
    if (loaded) return;
    String path = resolve(System.getProperty(PROPERTY), System.getenv(ENVIRONMENT), jarDirectory());
    if (path != null) {
      System.load(path);
    } else {
      try {
        System.loadLibrary(NAME);
      } catch (UnsatisfiedLinkError e) {
        throw notFound(jarDirectory(), e);
      }
    }
    loaded = true;
  }

  // The library's path from the property, the environment or the installed package; null to
  // try java.library.path. A property or variable that names no file is an error (a typo
  // must not fall through to another library).
  static String resolve(String property, String environment, Path jarDirectory) {
    if (property != null && !property.isEmpty()) return existing(property, "-D" + PROPERTY);
    if (environment != null && !environment.isEmpty()) return existing(environment, ENVIRONMENT);
    for (Path candidate : beside(jarDirectory)) {
      if (Files.isRegularFile(candidate)) return candidate.toAbsolutePath().normalize().toString();
    }
    return null;
  }

  // Where the installed package keeps the library, seen from PREFIX/share/sluice/jfilter.jar,
  // and where a build tree does, seen from build/jfilter/jfilter.jar.
  static List<Path> beside(Path jarDirectory) {
    List<Path> out = new ArrayList<>();
    if (jarDirectory == null || jarDirectory.getParent() == null) return out;
    out.add(jarDirectory.getParent().resolve("core-cpp").resolve(FILE));
    Path prefix = jarDirectory.getParent().getParent();
    if (prefix == null) return out;
    out.add(prefix.resolve("lib").resolve(FILE));
    out.add(prefix.resolve("lib64").resolve(FILE));
    String arch = System.getProperty("os.arch", "").toLowerCase(Locale.ROOT);
    String multiarch = arch.equals("amd64") || arch.equals("x86_64") ? "x86_64-linux-gnu"
        : arch.equals("aarch64") ? "aarch64-linux-gnu" : null;
    if (multiarch != null) out.add(prefix.resolve("lib").resolve(multiarch).resolve(FILE));
    return out;
  }

  private static String existing(String path, String setting) {
    if (!new File(path).isFile()) {
      throw new UnsatisfiedLinkError(setting + " names '" + path + "', which is not a file; point it at "
          + FILE + " (installed in PREFIX/lib, built in build/core-cpp)");
    }
    return new File(path).getAbsolutePath();
  }

  static UnsatisfiedLinkError notFound(Path jarDirectory, UnsatisfiedLinkError cause) {
    StringBuilder looked = new StringBuilder();
    for (Path p : beside(jarDirectory)) looked.append(looked.length() == 0 ? "" : ", ").append(p);
    UnsatisfiedLinkError e = new UnsatisfiedLinkError("cannot find " + FILE + ", the native side of "
        + "org.sluice.Application (looked beside the jfilter jar"
        + (looked.length() == 0 ? "" : ": " + looked) + ", and in java.library.path: "
        + System.getProperty("java.library.path") + "); install sluice (cmake --install build), then run java with -D"
        + PROPERTY + "=PREFIX/lib/" + FILE + ", or set " + ENVIRONMENT
        + " to that path, or add PREFIX/lib to -Djava.library.path (in a build tree: build/core-cpp/" + FILE + ")");
    e.initCause(cause);
    return e;
  }

  // The directory of the jar (or class directory) this class was loaded from, or null.
  private static Path jarDirectory() {
    try {
      CodeSource source = NativeLibrary.class.getProtectionDomain().getCodeSource();
      if (source == null || source.getLocation() == null) return null;
      return Path.of(source.getLocation().toURI()).toAbsolutePath().getParent();
    } catch (URISyntaxException | IllegalArgumentException | SecurityException e) {
      return null;
    }
  }
}
