package org.sluice;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * org.sluice.Application from this JVM, embedded, with the C++ test filters of the C++ API's
 * own tests (application/test_filters: AppSource stamps every result with its origin, AppStage
 * forwards; results checked as application/results_check.h does, by ResultsCheck).
 */
class ApplicationTest {
  static final String CLIENT_STREAM = "stage.out -> client";

  /** build/application/libsluice_app_filters.so, from the build (pom.xml, surefire). */
  static String filters() {
    String path = System.getProperty("sluice.app.filters.library");
    if (path == null || !Files.isRegularFile(Path.of(path))) {
      throw new IllegalStateException("the C++ test filters (" + path + ") are missing; build the native side "
          + "with its tests (make build) and run Maven with -Dsluice.build.dir=BUILD");
    }
    return path;
  }

  /** src (AppSource, `sources` copies) -> [middle] -> stage (AppStage) -> client. */
  static String topology(int sources, String middle) {
    String lib = filters();
    String yaml = "name: app-test\n"
        + "filters:\n"
        + "  src:   {class: AppSource, library: '" + lib + "', copies: " + sources + "}\n"
        + "  stage: {class: AppStage, library: '" + lib + "'}\n";
    if (middle == null) {
      return yaml + "streams:\n"
          + "  - {from: src.out, to: stage.in, depth: 4, buffer_size: 4KiB}\n"
          + "  - {from: stage.out, to: client, depth: 4, buffer_size: 4KiB}\n";
    }
    return yaml + "  mid:   " + middle + "\n"
        + "streams:\n"
        + "  - {from: src.out, to: mid.in, depth: 4, buffer_size: 4KiB}\n"
        + "  - {from: mid.out, to: stage.in, depth: 4, buffer_size: 4KiB}\n"
        + "  - {from: stage.out, to: client, depth: 4, buffer_size: 4KiB}\n";
  }

  static Application open(int sources) {
    return Application.fromText(topology(sources, null), "app-test.yaml", "/tmp");
  }

  /** Reads every result of `unit` into `check`, closing each. */
  static void readAll(Unit unit, ResultsCheck check) {
    for (Buffer b; (b = unit.read()) != null; ) {
      try {
        check.add(b);
      } finally {
        b.close();
      }
    }
  }

  // A result's ByteBuffer kept past the application (an outside review did, as ByteBuffer
  // habits go): reading it crashed the JVM (SIGSEGV in DirectByteBuffer.get) once the results'
  // pool, a mapping of its own at 64 KiB buffers, was unmapped. The view holds a share of the
  // memory now: it reads zeros (the pages were given back), and the JVM lives on.
  @Test
  void aResultsByteBufferKeptPastCloseReadsZerosInsteadOfCrashingTheJvm() {
    String yaml = topology(1, null).replace("buffer_size: 4KiB", "buffer_size: 64KiB");
    ByteBuffer kept;
    ByteBuffer keptClosed;
    try (Application app = Application.fromText(yaml, "app-test.yaml", "/tmp")) {
      app.start();
      Unit unit = app.submit("count=5 size=100");
      Buffer held = unit.read();
      Buffer closed = unit.read();
      assertNotNull(closed);
      kept = held.data();  // never closed: close() of the application makes it stale
      keptClosed = closed.data();
      closed.close();
      assertEquals(65536, kept.capacity());
    }
    for (int i = 0; i < 3; ++i) {
      System.gc();
    }
    assertEquals(0, kept.get(0), "a kept view reads the zero pages left once the pool went");
    assertEquals(0, keptClosed.getLong(65528));
    kept.put(1, (byte) 7);  // and a write lands on a page of its own
    assertEquals(7, kept.get(1));
  }

  @Test
  void oneUnitDeliversEveryResultInOrderPerProducer() {
    try (Application app = open(2)) {
      assertEquals("app-test", app.name());
      assertFalse(app.remote());
      app.start();
      Unit unit = app.submit("count=50 size=100");
      assertEquals(0, unit.index());
      ResultsCheck check = new ResultsCheck(unit.index(), 2, 50, 100);
      readAll(unit, check);
      assertNull(unit.read(), "the results stay ended");
      UnitReport report = unit.waitFor();
      assertTrue(report.finished(), report::toString);
      assertTrue(check.complete(), check::problem);
      assertEquals(0, report.index());
      assertEquals("count=50 size=100", report.work());
      assertEquals("", report.filter());
      assertEquals(-1, report.copy());
      UnitStreamCount client = report.stream(CLIENT_STREAM);
      assertNotNull(client, () -> "no '" + CLIENT_STREAM + "' in " + report.streams());
      assertEquals(100, client.buffers());
      assertEquals(100 * 100, client.bytes());
      assertTrue(report.toString().startsWith("unit 0 [count=50 size=100] finished in "), report::toString);
      assertSame(report, unit.waitFor(), "waitFor() answers the same report again");
    }
  }

  // The bar: 1,000 units from 4 client threads on one deployment, every result set
  // checked, filter objects created once (each source object counts the units it ran).
  @Test
  void thousandUnitsFromFourThreads() throws Exception {
    try (Application app = open(2)) {
      app.start();
      Map<Integer, Set<Long>> objectIds = new ConcurrentHashMap<>();
      List<String> problems = new CopyOnWriteArrayList<>();
      List<Thread> clients = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        final int thread = t;
        clients.add(new Thread(() -> {
          try {
            for (int i = 0; i < 250; i++) {
              long count = 1 + (thread * 250 + i) % 13;
              Unit unit = app.submit("count=" + count + " size=64");
              ResultsCheck check = new ResultsCheck(unit.index(), 2, count, 64);
              readAll(unit, check);
              UnitReport report = unit.waitFor();
              if (!report.finished() || !check.complete()) {
                problems.add(report + " " + check.problem());
                continue;
              }
              for (Map.Entry<Integer, Long> e : check.objectIds().entrySet()) {
                objectIds.computeIfAbsent(e.getKey(), k -> ConcurrentHashMap.newKeySet()).add(e.getValue());
              }
              // Units run one at a time in submission order, each source object ran every one
              // before this: it has seen exactly `index` units.
              for (Map.Entry<Integer, Long> e : check.unitsSeen().entrySet()) {
                if (e.getValue() != unit.index()) {
                  problems.add("unit " + unit.index() + ": source copy " + e.getKey() + " had run " + e.getValue() + " units");
                }
              }
            }
          } catch (RuntimeException e) {
            problems.add(Bridge.stackTrace(e));
          }
        }, "client " + t));
      }
      for (Thread c : clients) c.start();
      for (Thread c : clients) c.join();
      assertEquals(List.of(), problems);
      assertEquals(1000, app.unitsEnded());
      assertEquals(2, objectIds.size());
      for (Map.Entry<Integer, Set<Long>> e : objectIds.entrySet()) {
        assertEquals(1, e.getValue().size(), "source copy " + e.getKey() + " was created again");
      }
    }
  }

  @Test
  void aFailedUnitIsReportedToItsSubmitterOnlyAndTheNextSucceeds() throws Exception {
    try (Application app = open(2)) {
      app.start();
      List<String> problems = new CopyOnWriteArrayList<>();
      AtomicReference<UnitReport> failed = new AtomicReference<>();
      AtomicReference<Boolean> nextOk = new AtomicReference<>(false);
      List<Thread> clients = new ArrayList<>();
      for (int t = 0; t < 3; t++) {
        clients.add(new Thread(() -> {
          for (int i = 0; i < 30; i++) {
            Unit unit = app.submit("count=20");
            ResultsCheck check = new ResultsCheck(unit.index(), 2, 20, 64);
            readAll(unit, check);
            UnitReport report = unit.waitFor();
            if (!report.finished() || !check.complete()) problems.add("an innocent unit: " + report + " " + check.problem());
          }
        }));
      }
      clients.add(new Thread(() -> {
        Unit before = app.submit("count=20");
        readAll(before, new ResultsCheck(before.index(), 2, 20, 64));
        if (!before.waitFor().finished()) problems.add("the unit before the failure: " + before.waitFor());
        Unit failing = app.submit("count=20 fail=stage");
        for (Buffer b; (b = failing.read()) != null; ) b.close();
        failed.set(failing.waitFor());
        Unit after = app.submit("count=20");
        ResultsCheck check = new ResultsCheck(after.index(), 2, 20, 64);
        readAll(after, check);
        UnitReport report = after.waitFor();
        nextOk.set(report.finished() && check.complete());
        if (!nextOk.get()) problems.add("the unit after the failure: " + report + " " + check.problem());
      }));
      for (Thread c : clients) c.start();
      for (Thread c : clients) c.join();
      assertEquals(List.of(), problems);
      UnitReport bad = failed.get();
      assertFalse(bad.finished());
      assertEquals("stage", bad.filter());
      assertEquals(0, bad.copy());
      assertEquals("process", bad.stage());
      assertTrue(bad.message().contains("AppStage was told to fail"), bad::message);
      assertEquals("", bad.crash(), "an exception is no crash");
      assertTrue(bad.toString().contains("failed"), bad::toString);
      assertTrue(nextOk.get());
      assertEquals(3 * 30 + 3, app.unitsEnded());
    }
  }

  @Test
  void resultsAreTheBlocksThemselvesAndGoBackToThePoolOnClose() {
    try (Application app = open(1)) {
      // 400 results through a stream 4 deep: only possible if closed blocks come back, and
      // then the unit's Buffer objects are reused, one per block.
      Unit unit = app.submit("count=400 size=200");
      ResultsCheck check = new ResultsCheck(unit.index(), 1, 400, 200);
      Set<Buffer> objects = Collections.newSetFromMap(new IdentityHashMap<>());
      Buffer last = null;
      for (Buffer b; (b = unit.read()) != null; ) {
        check.add(b);
        objects.add(b);
        assertTrue(b.data().isDirect());
        b.close();
        b.close(); // twice is fine
        last = b;
      }
      assertTrue(check.complete(), check::problem);
      assertTrue(objects.size() < 40, objects.size() + " Buffer objects for 400 results through a small pool");
      Buffer stale = last;
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> stale.data());
      assertTrue(e.getMessage().contains("this result of unit " + unit.index() + " was closed"), e::getMessage);
      assertThrows(IllegalStateException.class, stale::size);
      assertTrue(unit.waitFor().finished());
    }
  }

  // Broadcast to two stage copies, both forwarding to the client: each result block reaches
  // the client twice, so while the client holds them they are shared (read-only, a fresh Buffer
  // per read), and they go stale like any other result.
  @Test
  void sharedResultsAreReadOnlyAndGoStaleToo() {
    String lib = filters();
    String yaml = "name: shared\nfilters:\n"
        + "  src:   {class: AppSource, library: '" + lib + "'}\n"
        + "  stage: {class: AppStage, library: '" + lib + "', copies: 2}\n"
        + "streams:\n"
        + "  - {from: src.out, to: stage.in, policy: broadcast, depth: 4}\n"
        + "  - {from: stage.out, to: client, depth: 8}\n";
    try (Application app = Application.fromText(yaml, "shared.yaml", "/tmp")) {
      Unit unit = app.submit("count=2 size=64");
      List<Buffer> held = new ArrayList<>();
      for (Buffer b; (b = unit.read()) != null; ) held.add(b);
      assertEquals(4, held.size());
      long[] seen = new long[2];
      for (Buffer b : held) {
        assertTrue(b.isShared(), "a block two holders share");
        assertThrows(java.nio.ReadOnlyBufferException.class, () -> b.data().put(40, (byte) 1));
        assertEquals(unit.index(), b.data().getLong(32));
        seen[(int) b.data().getLong(24)]++;
      }
      assertEquals(2, seen[0]);
      assertEquals(2, seen[1]);
      held.get(0).close();
      assertThrows(IllegalStateException.class, held.get(0)::data);
      assertTrue(held.get(1).data().isReadOnly(), "the others stay usable");
      unit.close(); // takes back the three still held
      for (Buffer b : held) assertThrows(IllegalStateException.class, b::size);
      assertTrue(unit.waitFor().finished());
    }
  }

  /** Inverts every byte after the 40-byte header; fails when the payload says fail=invert. */
  static final String INVERT_SOURCE = "package org.sluice.apptest;\n"
      + "import java.nio.ByteBuffer;\n"
      + "import org.sluice.*;\n"
      + "public final class Invert implements Filter {\n"
      + "  @Override public void process(Context ctx) {\n"
      + "    System.setProperty(\"sluice.apptest.ran\", System.getProperty(\"sluice.apptest.token\") + \":\"\n"
      + "        + ProcessHandle.current().pid());\n"
      + "    InputStream in = ctx.input(\"in\");\n"
      + "    OutputStream out = ctx.output(\"out\");\n"
      + "    for (Buffer b; (b = in.read()) != null; ) {\n"
      + "      if (ctx.work().contains(\"fail=invert\")) throw new IllegalArgumentException(\"Invert refuses unit \" + ctx.workIndex());\n"
      + "      ByteBuffer d = b.data();\n"
      + "      for (int i = 40; i < b.size(); i++) d.put(i, (byte) ~d.get(i));\n"
      + "      out.write(b);\n"
      + "    }\n"
      + "  }\n"
      + "}\n";

  /** Writes the unit's payload, as bytes and as text, as two results. */
  static final String ECHO_WORK_SOURCE = "package org.sluice.apptest;\n"
      + "import java.nio.charset.StandardCharsets;\n"
      + "import org.sluice.*;\n"
      + "public final class EchoWork implements Filter {\n"
      + "  @Override public void process(Context ctx) {\n"
      + "    OutputStream out = ctx.output(\"out\");\n"
      + "    for (byte[] bytes : new byte[][] {ctx.workBytes(), ctx.work().getBytes(StandardCharsets.UTF_8)}) {\n"
      + "      Buffer b = out.allocate();\n"
      + "      b.data().put(0, bytes);\n"
      + "      b.size(bytes.length);\n"
      + "      out.write(b);\n"
      + "    }\n"
      + "  }\n"
      + "}\n";

  private static byte[] bytesOf(Buffer b) {
    byte[] bytes = new byte[b.size()];
    b.data().get(0, bytes);
    b.close();
    return bytes;
  }

  // A binary payload (a protobuf query, say) reaches a Java filter byte for byte; work()
  // reads it as UTF-8, as before.
  @Test
  void aBinaryPayloadReachesAJavaFilterExactly(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
    Path jar = JavaSources.compileToJar(dir, "org.sluice.apptest.EchoWork", ECHO_WORK_SOURCE);
    String yaml = "name: echo\nfilters:\n  echo: {lang: java, class: org.sluice.apptest.EchoWork, classpath: ['" + jar
        + "']}\nstreams:\n  - {from: echo.out, to: client, buffer_size: 1KiB}\n";
    try (Application app = Application.fromText(yaml, "echo.yaml", dir.toString())) {
      byte[] binary = {(byte) 0xff, (byte) 0xfe, 0, 'a', (byte) 0x80, (byte) 0xc3};
      Unit unit = app.submit(binary);
      assertArrayEquals(binary, bytesOf(unit.read()), "workBytes() is the payload, byte for byte");
      assertEquals("\ufffd\ufffd\u0000a\ufffd\ufffd", new String(bytesOf(unit.read()), StandardCharsets.UTF_8),
          "work() reads it as UTF-8");
      assertNull(unit.read());
      assertTrue(unit.waitFor().finished());
      assertEquals("\ufffd\ufffd\u0000a\ufffd\ufffd", unit.work());

      Unit text = app.submit("héllo");
      byte[] utf8 = "héllo".getBytes(StandardCharsets.UTF_8);
      assertArrayEquals(utf8, bytesOf(text.read()), "a String payload arrives as its UTF-8 bytes");
      assertArrayEquals(utf8, bytesOf(text.read()));
      assertTrue(text.waitFor().finished());
    }
  }

  // A topology that mixes a Java filter with the C++ ones, run from this program: the Java
  // filter runs in this JVM (no second JVM can start in a process that has one), and its class
  // comes from a jar that only the topology's classpath names.
  @Test
  void aJavaFilterBetweenCppFiltersRunsInTheCallersJvm(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
    Path jar = JavaSources.compileToJar(dir, "org.sluice.apptest.Invert", INVERT_SOURCE);
    assertThrows(ClassNotFoundException.class, () -> Class.forName("org.sluice.apptest.Invert"),
        "the filter must not be on the test's own class path");
    String token = Long.toString(System.nanoTime());
    System.setProperty("sluice.apptest.token", token);
    String middle = "{lang: java, class: org.sluice.apptest.Invert, classpath: ['" + jar + "']}";
    try (Application app = Application.fromText(topology(2, middle), "mixed-app.yaml", dir.toString())) {
      app.start();
      for (int i = 0; i < 3; i++) {
        Unit unit = app.submit("count=100 size=300");
        ResultsCheck check = new ResultsCheck(unit.index(), 2, 100, 300, true);
        readAll(unit, check);
        UnitReport report = unit.waitFor();
        assertTrue(report.finished(), report::toString);
        assertTrue(check.complete(), check::problem);
        assertEquals(200, report.stream("src.out -> mid.in").buffers());
      }
      assertEquals(token + ":" + ProcessHandle.current().pid(), System.getProperty("sluice.apptest.ran"),
          "the Java filter ran in another JVM, or not at all");

      // A Java exception reaches its submitter with the stack trace; the next unit runs.
      Unit failing = app.submit("count=10 fail=invert");
      for (Buffer b; (b = failing.read()) != null; ) b.close();
      UnitReport bad = failing.waitFor();
      assertFalse(bad.finished());
      assertEquals("mid", bad.filter());
      assertEquals("process", bad.stage());
      assertTrue(bad.message().contains("java.lang.IllegalArgumentException: Invert refuses unit 3"), bad::message);
      assertTrue(bad.message().contains("at org.sluice.apptest.Invert.process(Invert.java:"), bad::message);
      Unit next = app.submit("count=10 size=300");
      ResultsCheck check = new ResultsCheck(next.index(), 2, 10, 300, true);
      readAll(next, check);
      assertTrue(next.waitFor().finished(), () -> next.waitFor().toString());
      assertTrue(check.complete(), check::problem);
    }
  }

  @Test
  void closeWithUnitsQueuedFinishesThemAndDiscardsWhatNobodyRead() throws Exception {
    Application app = open(2);
    List<Unit> units = new ArrayList<>();
    for (int i = 0; i < 5; i++) units.add(app.submit("count=50 size=2000")); // each more than the stream holds
    Buffer held = units.get(0).read();
    assertNotNull(held);
    held.data(); // live

    // A reader of a later unit: it cannot finish before close() (the units before it are
    // unread), so whenever its reads happen, close() discards under it.
    CountDownLatch started = new CountDownLatch(1);
    AtomicReference<Throwable> readerGot = new AtomicReference<>();
    Thread reader = new Thread(() -> {
      started.countDown();
      try {
        for (Buffer b; (b = units.get(3).read()) != null; ) b.close();
        readerGot.set(null);
      } catch (Throwable t) {
        readerGot.set(t);
      }
    });
    reader.start();
    started.await();

    app.close();
    reader.join();
    assertTrue(readerGot.get() instanceof IllegalStateException, () -> "the reader got " + readerGot.get());
    assertTrue(readerGot.get().getMessage().contains("the application was stopped"), readerGot.get()::getMessage);

    IllegalStateException stale = assertThrows(IllegalStateException.class, held::data, "a held result is stale after close()");
    assertTrue(stale.getMessage().contains("was closed: by its close(), or by the Unit's or the Application's close()"),
        stale::getMessage);
    held.close(); // closing it again is fine
    for (Unit u : units) {
      UnitReport r = u.waitFor();
      assertTrue(r.finished(), r::toString); // close() = stop(): the submitted units run to their end
      assertEquals(100, r.stream(CLIENT_STREAM).buffers());
    }
    IllegalStateException discarded = assertThrows(IllegalStateException.class, () -> units.get(1).read());
    assertTrue(discarded.getMessage().contains("discarded"), discarded::getMessage);
    IllegalStateException closed = assertThrows(IllegalStateException.class, () -> app.submit("count=1"));
    assertTrue(closed.getMessage().contains("closed"), closed::getMessage);
    assertThrows(IllegalStateException.class, app::unitsEnded);
    app.close(); // twice is fine
  }

  // stop() drains a running unit's results until the unit ends; a reader that comes back
  // after stop() began is told at once, not when the unit ends. The unit here never ends by
  // itself (100 s of results): the old read() waited for it, and the timeout says so.
  @Test
  void aReadAfterStopBeganThrowsWithoutWaitingForTheUnitToEnd() throws Exception {
    Application app = open(1);
    Unit unit = app.submit("count=100000 sleep_ms=1");
    Thread stopper = new Thread(app::stop, "stopper");
    try {
      Buffer first = unit.read();
      assertNotNull(first);
      first.close();
      stopper.start();
      IllegalStateException e = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> assertThrows(
          IllegalStateException.class, () -> {
            for (Buffer b; (b = unit.read()) != null; ) b.close(); // results until stop() discards them
          }));
      assertTrue(e.getMessage().contains("the application was stopped"), e::getMessage);
      assertTrue(stopper.isAlive(), "stop() still waits for the running unit");
    } finally {
      unit.cancel();
      stopper.join();
      app.close();
    }
    assertEquals("cancelled", unit.waitFor().stage());
  }

  @Test
  void stopFinishesQueuedUnitsAndRefusesNewOnes() {
    try (Application app = open(2)) {
      List<Unit> units = new ArrayList<>();
      for (int i = 0; i < 5; i++) units.add(app.submit("count=3"));
      app.stop();
      for (Unit u : units) assertTrue(u.waitFor().finished());
      assertEquals(5, app.unitsEnded());
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> app.submit("count=1"));
      assertTrue(e.getMessage().contains("the application was stopped"), e::getMessage);
      app.stop(); // idempotent
    }
  }

  @Test
  void aUnitClosedHalfReadOrCancelledDoesNotBreakTheNext() {
    try (Application app = open(2)) {
      Unit dropped = app.submit("count=200 size=2000"); // more than the stream holds
      Buffer kept = dropped.read();
      assertNotNull(kept);
      dropped.close();
      assertThrows(IllegalStateException.class, kept::data, "a result of a closed unit is stale");
      IllegalStateException e = assertThrows(IllegalStateException.class, dropped::read);
      assertTrue(e.getMessage().contains("this Unit was closed"), e::getMessage);
      assertTrue(dropped.waitFor().finished(), "closing a unit discards its results, it does not cancel it");
      dropped.close(); // twice is fine

      Unit slow = app.submit("count=1000 sleep_ms=1");
      Buffer first = slow.read();
      assertNotNull(first);
      first.close();
      slow.cancel();
      for (Buffer b; (b = slow.read()) != null; ) b.close();
      UnitReport cancelled = slow.waitFor();
      assertFalse(cancelled.finished());
      assertEquals("cancelled", cancelled.stage());

      Unit next = app.submit("count=30");
      ResultsCheck check = new ResultsCheck(next.index(), 2, 30, 64);
      readAll(next, check);
      assertTrue(next.waitFor().finished());
      assertTrue(check.complete(), check::problem);
    }
  }

  @Test
  void closingALaterUnitWhileHoldingAnEarlierHalfReadOneDoesNotWait() {
    try (Application app = open(2)) {
      Unit earlier = app.submit("count=200 size=2000"); // more than the stream holds: it cannot end unread
      Unit later = app.submit("count=5");
      Buffer first = earlier.read();
      assertNotNull(first);
      first.close();
      // What try-with-resources over both does: the later unit closes first. It cannot run
      // before the earlier one is read, and this thread holds that one: close() must not wait.
      assertTimeoutPreemptively(Duration.ofSeconds(20), later::close,
          "closing a later unit must not wait while this thread holds an earlier one half-read");
      IllegalStateException e = assertThrows(IllegalStateException.class, later::read);
      assertTrue(e.getMessage().contains("this Unit was closed"), e::getMessage);
      Buffer second = earlier.read(); // the earlier unit is still this thread's to read
      assertNotNull(second);
      second.close();
      assertTimeoutPreemptively(Duration.ofSeconds(20), earlier::close);
      assertTrue(earlier.waitFor().finished(), () -> earlier.waitFor().toString());
      assertTrue(later.waitFor().finished(), "closing a unit discards its results, it does not cancel it");
      later.close(); // twice is fine

      Unit next = app.submit("count=30");
      ResultsCheck check = new ResultsCheck(next.index(), 2, 30, 64);
      readAll(next, check);
      assertTrue(next.waitFor().finished());
      assertTrue(check.complete(), check::problem);
      assertEquals(3, app.unitsEnded());
    }
  }

  @Test
  void cancelEndsAWaitingReadWhileTheCopiesAreBusyInTheirOwnCode() throws Exception {
    try (Application app = open(1)) {
      Unit unit = app.submit("count=2 sleep_ms=8000"); // the source sleeps 8 s before its first result
      CountDownLatch ended = new CountDownLatch(1);
      Thread reader = new Thread(() -> {
        for (Buffer b; (b = unit.read()) != null; ) b.close();
        ended.countDown();
      });
      reader.start();
      Thread.sleep(300); // the reader waits by now
      unit.cancel();
      assertTrue(ended.await(4, java.util.concurrent.TimeUnit.SECONDS),
          "read() still waits 4 s after cancel(), for a copy busy in its own code");
      reader.join();
      UnitReport report = unit.waitFor();
      assertFalse(report.finished());
      assertEquals("cancelled", report.stage());
    }
  }

  @Test
  void abortCancelsWhatIsQueued() {
    try (Application app = open(2)) {
      Unit running = app.submit("count=100000 sleep_ms=1");
      List<Unit> queued = new ArrayList<>();
      for (int i = 0; i < 3; i++) queued.add(app.submit("count=3"));
      Buffer b = running.read();
      assertNotNull(b);
      b.close();
      app.abort();
      assertFalse(running.waitFor().finished());
      for (Unit u : queued) {
        UnitReport r = u.waitFor();
        assertFalse(r.finished());
        assertEquals("cancelled", r.stage(), r::toString);
      }
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> app.submit("count=1"));
      assertTrue(e.getMessage().contains("aborted"), e::getMessage);
    }
  }

  @Test
  void withoutAClientStreamResultsAreEmpty() {
    String yaml = "name: no-client\nfilters:\n"
        + "  src:   {class: AppSource, library: '" + filters() + "'}\n"
        + "  stage: {class: AppStage, library: '" + filters() + "'}\n"
        + "streams:\n  - {from: src.out, to: stage.in}\n";
    try (Application app = Application.fromText(yaml, "no-client.yaml", "/tmp")) {
      Unit unit = app.submit("count=5");
      assertNull(unit.read());
      assertTrue(unit.waitFor().finished());
    }
  }

  @Test
  void aBadTopologyIsReportedAtItsLineAndColumn() {
    SluiceException e = assertThrows(SluiceException.class, () -> Application.fromText(
        "name: bad\nfilters:\n  src: {class: AppSource, library: '" + filters() + "', copiez: 2}\n"
        + "streams:\n  - {from: src.out, to: client}\n", "bad.yaml", "/tmp"));
    assertTrue(e.getMessage().matches("(?s)bad\\.yaml:3:\\d+: .*copiez.*"), e::getMessage);
  }

  @Test
  void dataPortsThatAreNoRangeAreRefusedAtOpen() {
    ApplicationOptions options = new ApplicationOptions().dataPorts("7801-");
    SluiceException e = assertThrows(SluiceException.class,
        () -> Application.fromText(topology(1, null), "app-test.yaml", "/tmp", options));
    assertTrue(e.getMessage().startsWith("data_ports: '7801-' is not a port range; write LO-HI"), e::getMessage);
    assertEquals("7801-", options.dataPorts());
  }

  @Test
  void aStartThatFailsNamesWhatFailed() {
    String yaml = "name: missing\nfilters:\n"
        + "  src: {class: NoSuchFilter, library: '" + filters() + "'}\n"
        + "streams:\n  - {from: src.out, to: client}\n";
    try (Application app = Application.fromText(yaml, "missing.yaml", "/tmp")) {
      SluiceException e = assertThrows(SluiceException.class, app::start);
      assertTrue(e.getMessage().contains("NoSuchFilter"), e::getMessage);
      Unit unit = app.submit("count=1");
      UnitReport r = unit.waitFor();
      assertFalse(r.finished());
      assertTrue(r.message().contains("NoSuchFilter"), r::message);
    }
  }

  @Test
  void aClosedApplicationRefusesEverythingButClose() {
    Application app = open(1);
    app.close();
    assertThrows(IllegalStateException.class, app::start);
    assertThrows(IllegalStateException.class, app::stop);
    assertThrows(IllegalStateException.class, () -> app.submit("count=1"));
    assertEquals("app-test", app.name());
    assertTrue(app.toString().contains("closed"), app::toString);
    app.close();
  }
}
