package org.sluice;

import java.util.LinkedHashMap;
import java.util.Map;

// Runs a topology through the native runtime inside this JVM's process (the embedded mode,
// as the console runs it), with Java filters in this very JVM. A test hook, not API: it and its
// native side (libsluice_test_jni.so, jfilter/native/tests/embedded_native.cc, which links
// libsluice_jni.so) exist only in the test build; the JUnit tests load that library (system
// property sluice.test.jni.library, set by the pom) and run small mixed graphs through it.
final class Embedded {
  private static boolean loaded;

  private Embedded() {}

  // What a run did: the first failure (null when every unit finished) and, per stream,
  // the buffers that crossed it.
  static final class Result {
    final String failure;        // Failure::str(), or null
    final String failedFilter;   // the failure's filter, copy, stage and message
    final int failedCopy;
    final String failedStage;
    final String failedMessage;
    final Map<String, Long> buffers = new LinkedHashMap<>();

    Result(String[] raw) {
      failure = raw[0];
      failedFilter = raw[1];
      failedCopy = raw[2] == null ? -1 : Integer.parseInt(raw[2]);
      failedStage = raw[3];
      failedMessage = raw[4];
      for (int i = 5; i + 1 < raw.length; i += 2) buffers.put(raw[i], Long.parseLong(raw[i + 1]));
    }

    @Override
    public String toString() {
      return failure == null ? "ok " + buffers : failure;
    }
  }

  static synchronized void load() {
    if (loaded) return;
    String path = System.getProperty("sluice.test.jni.library");
    if (path == null || !new java.io.File(path).isFile()) {
      throw new UnsatisfiedLinkError(path + " does not exist; build the native side with its tests first (make, "
          + "or cmake --build build) or point -Dsluice.test.jni.library at libsluice_test_jni.so");
    }
    System.load(path);
    loaded = true;
  }

  // Parses `yaml` (relative paths resolve against baseDir), checks that every class loads,
  // and runs every unit of work. Throws SluiceException for a topology that does not validate.
  static Result run(String yaml, String baseDir) {
    load();
    return new Result(nRun(yaml, baseDir));
  }

  private static native String[] nRun(String yaml, String baseDir);
}
