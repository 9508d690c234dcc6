package org.sluice;

import java.util.LinkedHashMap;
import java.util.Map;

// Runs a topology through the native runtime inside this JVM's process (the embedded mode,
// as the console runs it), with Java filters in this very JVM. For sluice's own tests: the
// JUnit tests load libsluice_jni.so (system property sluice.jni.library) and run small mixed
// graphs through it.
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
    String path = System.getProperty("sluice.jni.library");
    if (path == null) {
      System.loadLibrary("sluice_jni");
    } else {
      if (!new java.io.File(path).isFile()) {
        throw new UnsatisfiedLinkError(path + " does not exist; build the native side first (make, or "
            + "cmake --build build) or point -Dsluice.jni.library at libsluice_jni.so");
      }
      System.load(path);
    }
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
