package org.sluice.examples;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.sluice.Application;
import org.sluice.ApplicationOptions;
import org.sluice.Buffer;
import org.sluice.SluiceException;
import org.sluice.Unit;
import org.sluice.UnitReport;

/**
 * A client program: deploys a topology once, submits each payload as a unit of work, and
 * prints each unit's results (the buffers of the topology's {@code to: client} stream) and how
 * it ended. Any topology with a {@code to: client} stream will do:
 *
 * <pre>
 * java -cp PREFIX/share/sluice/jfilter.jar:examples/java/target/examples.jar \
 *     org.sluice.examples.QueryClient [--hosts a=HOST:PORT,...] [--token-file FILE] \
 *     [--results FILE] TOPOLOGY PAYLOAD...
 * </pre>
 *
 * <p>It says where the topology was deployed (embedded, or across hosts), then submits every
 * payload first (units queue, and run one at a time in order), then each
 * unit's results are read as they come: one line per result, its text when it is text, else
 * its size and first bytes in hex. {@code --results FILE} also writes every result's bytes to
 * FILE, in the order read. Exit status: 0 when every unit finished, 1 when one failed, 2 for
 * bad arguments, a topology that does not open or start, or a native library not found.
 */
public final class QueryClient {
  private QueryClient() {}

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  static int run(String[] args, PrintStream out, PrintStream err) {
    ApplicationOptions options = new ApplicationOptions();
    Path resultsFile = null;
    List<String> positional = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      boolean valued = a.equals("--hosts") || a.equals("--token-file") || a.equals("--results");
      if (valued && i + 1 == args.length) return usage(err, a + " needs a value");
      switch (a) {
        case "--hosts" -> options.hosts(args[++i]);
        case "--token-file" -> options.tokenFile(args[++i]);
        case "--results" -> resultsFile = Path.of(args[++i]);
        default -> {
          if (a.startsWith("--")) return usage(err, "unknown option " + a);
          positional.add(a);
        }
      }
    }
    if (positional.size() < 2) return usage(err, "give a topology and at least one payload");
    try (OutputStream results = resultsFile == null ? OutputStream.nullOutputStream() : Files.newOutputStream(resultsFile);
         Application app = Application.open(positional.get(0), options)) {
      app.start();
      out.println("deployed '" + app.name() + "' " + (app.remote() ? "across hosts" : "embedded"));
      List<Unit> units = new ArrayList<>();
      for (String payload : positional.subList(1, positional.size())) units.add(app.submit(payload));
      boolean allFinished = true;
      for (Unit unit : units) {
        try (unit) {
          out.println("unit " + unit.index() + " [" + unit.work() + "]:");
          long count = 0;
          long bytes = 0;
          for (Buffer b; (b = unit.read()) != null; ) {
            byte[] data = new byte[b.size()];
            b.data().get(0, data);
            b.close();
            results.write(data);
            out.println("  " + describe(data));
            count++;
            bytes += data.length;
          }
          UnitReport report = unit.waitFor();
          out.println(report + " (" + count + " results, " + bytes + " bytes)");
          allFinished &= report.finished();
        }
      }
      return allFinished ? 0 : 1;
    } catch (SluiceException | UnsatisfiedLinkError e) {
      err.println("QueryClient: " + e.getMessage());
      return 2;
    } catch (IOException e) {
      err.println("QueryClient: cannot write " + resultsFile + ": " + e.getMessage());
      return 2;
    }
  }

  // The bytes as text when they are printable UTF-8 text, else their size and first bytes.
  static String describe(byte[] data) {
    boolean text = true;
    for (byte c : data) text &= c == '\t' || (c & 0xff) >= 0x20 && c != 0x7f;
    if (text) return new String(data, StandardCharsets.UTF_8);
    StringBuilder hex = new StringBuilder(data.length + " bytes:");
    for (int i = 0; i < Math.min(16, data.length); i++) hex.append(String.format(" %02x", data[i] & 0xff));
    return data.length > 16 ? hex.append(" ...").toString() : hex.toString();
  }

  private static int usage(PrintStream err, String problem) {
    err.println("QueryClient: " + problem);
    err.println("usage: java -cp jfilter.jar:examples.jar org.sluice.examples.QueryClient "
        + "[--hosts a=HOST:PORT,...] [--token-file FILE] [--results FILE] TOPOLOGY PAYLOAD...");
    return 2;
  }
}
