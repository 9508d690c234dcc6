package org.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where Application's native library is looked for, and what a user is told when it is not there. */
class NativeLibraryTest {
  @Test
  void theInstalledPackageIsFoundFromItsJar(@TempDir Path prefix) throws IOException {
    Path share = Files.createDirectories(prefix.resolve("share/sluice"));
    assertNull(NativeLibrary.resolve(null, null, share), "nothing installed: java.library.path is next");
    Path lib = Files.createDirectories(prefix.resolve("lib")).resolve(NativeLibrary.FILE);
    Files.writeString(lib, "");
    assertEquals(lib.toString(), NativeLibrary.resolve(null, "", share));
  }

  @Test
  void theBuildTreeIsFoundFromItsJar(@TempDir Path build) throws IOException {
    Path jfilter = Files.createDirectories(build.resolve("jfilter"));
    Path lib = Files.createDirectories(build.resolve("core-cpp")).resolve(NativeLibrary.FILE);
    Files.writeString(lib, "");
    assertEquals(lib.toString(), NativeLibrary.resolve(null, null, jfilter));
  }

  @Test
  void thePropertyWinsAndMustNameAFile(@TempDir Path dir) throws IOException {
    Path lib = dir.resolve("custom.so");
    Files.writeString(lib, "");
    assertEquals(lib.toString(), NativeLibrary.resolve(lib.toString(), "/elsewhere.so", null));
    UnsatisfiedLinkError e = assertThrows(UnsatisfiedLinkError.class,
        () -> NativeLibrary.resolve(dir.resolve("typo.so").toString(), null, null));
    assertTrue(e.getMessage().startsWith("-Dsluice.application.library names '"), e::getMessage);
    assertTrue(e.getMessage().contains("which is not a file; point it at libsluice_application_jni.so"), e::getMessage);
    UnsatisfiedLinkError env = assertThrows(UnsatisfiedLinkError.class, () -> NativeLibrary.resolve(null, "/nope.so", null));
    assertTrue(env.getMessage().startsWith("SLUICE_APPLICATION_LIBRARY names '/nope.so'"), env::getMessage);
  }

  @Test
  void notFoundSaysWhatToSet(@TempDir Path prefix) {
    UnsatisfiedLinkError e = NativeLibrary.notFound(prefix.resolve("share/sluice"), new UnsatisfiedLinkError("x"));
    String m = e.getMessage();
    assertTrue(m.startsWith("cannot find libsluice_application_jni.so, the native side of org.sluice.Application"), m);
    assertTrue(m.contains(prefix.resolve("lib/libsluice_application_jni.so").toString()), m);
    assertTrue(m.contains("-Dsluice.application.library=PREFIX/lib/libsluice_application_jni.so"), m);
    assertTrue(m.contains("SLUICE_APPLICATION_LIBRARY"), m);
    assertTrue(m.contains("-Djava.library.path"), m);
  }
}
