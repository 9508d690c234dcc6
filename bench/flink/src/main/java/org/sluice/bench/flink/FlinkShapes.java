// The Apache Flink 1.20 peer of build/bench/graph_bench: the same pipeline shapes at 100 B,
// hand-off only, as jobs on one warm local MiniCluster (started once per JVM, then reused by
// every job), with operator chaining (Flink's default) and object reuse. The jobs go straight
// to MiniCluster.executeJobBlocking: env.execute() on a local environment would start a new
// MiniCluster for every job (LocalExecutor's PerJobMiniClusterFactory), which is not warm.
//
//   pair (1+1)            source -> sink                       parallelism 1 (one chained task)
//   3-stage chain         source -> identity map -> sink       parallelism 1 (one chained task)
//   5-stage chain         source -> 3 identity maps -> sink    parallelism 1 (one chained task)
//   2+2 copies            2 sources -rebalance-> 2 sinks       parallelism 2, count/2 per source
//   4+4 copies            4 sources -rebalance-> 4 sinks       parallelism 4, count/4 per source
//   keyed shuffle 2 -> 2  2 sources -keyBy(seq)-> 2 sinks      parallelism 2, count/2 per source
//
// A record is a byte[100]. The source is a legacy RichParallelSourceFunction (deprecated in
// 1.20 but present; it emits exactly its share of the count from its own thread, straight
// into the chained operators or the network writer). It cycles through a pool of 1024
// pre-allocated arrays (as sluice's pooled blocks are reused) and writes its sequence number
// (0, 1, ... per source copy, little-endian) into the first 8 bytes; it takes the checkpoint
// lock once per 1024 records (collect() takes it again, re-entrantly, per record). The sink
// adds up every record's first byte, so nothing is optimised away; the keyBy key is the
// sequence number (a KeySelector reading the long). Every job's sinks must report exactly the
// records and first-byte sum the sources sent, or the program exits 1.
//
// Timing, per job: "job" = records / wall time of the job (JobGraph built, submitted to the
// warm MiniCluster, executeJobBlocking returned: what env.execute() costs on a running
// cluster); "steady" = records / (last sink's finish() - first source's first emit), both
// System.nanoTime() in this one JVM, carried out as LongMinimum/LongMaximum accumulators: the
// job's own run without submission, scheduling, deployment and tear-down. One warm-up round
// of every shape runs first (reported as rep 0, to be discarded), then --reps rounds, every
// shape once per round, interleaved.
//
// Usage: FlinkShapes [--reps N] [--count N] [--quick] [--only TEXT] [--slots N]
//   --reps N     measured rounds (default 5) after the warm-up round
//   --count N    records through the sinks per shape and job (default 4000000, as graph_bench;
//                --quick: 400000)
//   --only TEXT  run just the shapes whose name contains TEXT
//   --slots N    task slots of the MiniCluster's one TaskManager (default 4, the widest shape)
//
// Output (stdout), tab-separated, one line per shape per round; lines starting with '#' are
// comments (a header naming the columns, and the MiniCluster's start-up time):
//   rep  shape  records  steady_records_per_s  job_records_per_s  job_wall_s  steady_s  net_runtime_s
// rep 0 is the warm-up round. net_runtime_s is Flink's own JobExecutionResult.getNetRuntime().
package org.sluice.bench.flink;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.accumulators.LongMaximum;
import org.apache.flink.api.common.accumulators.LongMinimum;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.RichSinkFunction;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.streaming.api.functions.source.RichParallelSourceFunction;

public final class FlinkShapes {
  static final int SIZE = 100;
  static final int POOL = 1024;  // arrays per source copy, reused in turn
  static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  /** Emits `count` records of 100 bytes, sequence number in the first 8 (little-endian). */
  public static final class Source extends RichParallelSourceFunction<byte[]> {
    private final long count;
    private volatile boolean running = true;
    private final LongMinimum first = new LongMinimum();

    public Source(long count) {
      this.count = count;
    }

    @Override
    public void open(OpenContext context) {
      getRuntimeContext().addAccumulator("first_emit_ns", first);
    }

    @Override
    public void run(SourceContext<byte[]> ctx) {
      final byte[][] pool = new byte[POOL][SIZE];
      final Object lock = ctx.getCheckpointLock();
      long i = 0;
      first.add(System.nanoTime());
      while (i < count && running) {
        final long end = Math.min(count, i + POOL);
        synchronized (lock) {
          for (; i < end; ++i) {
            final byte[] b = pool[(int) (i & (POOL - 1))];
            LONG.set(b, 0, i);
            ctx.collect(b);
          }
        }
      }
    }

    @Override
    public void cancel() {
      running = false;
    }
  }

  /** Passes every record on unchanged (the same array: object reuse). */
  public static final class Identity implements MapFunction<byte[], byte[]> {
    @Override
    public byte[] map(byte[] b) {
      return b;
    }
  }

  /** The key: the sequence number in the first 8 bytes. */
  public static final class Sequence implements KeySelector<byte[], Long> {
    @Override
    public Long getKey(byte[] b) {
      return (long) LONG.get(b, 0);
    }
  }

  /** Touches every record's first byte; reports records, their sum and when it finished. */
  public static final class Sink extends RichSinkFunction<byte[]> {
    private long records;
    private long sum;
    private final LongCounter recordsAcc = new LongCounter();
    private final LongCounter sumAcc = new LongCounter();
    private final LongMaximum last = new LongMaximum();

    @Override
    public void open(OpenContext context) {
      getRuntimeContext().addAccumulator("records", recordsAcc);
      getRuntimeContext().addAccumulator("sum", sumAcc);
      getRuntimeContext().addAccumulator("last_receive_ns", last);
    }

    @Override
    public void invoke(byte[] b, Context context) {
      sum += b[0] & 0xff;
      ++records;
    }

    @Override
    public void finish() {
      last.add(System.nanoTime());
      recordsAcc.add(records);
      sumAcc.add(sum);
    }
  }

  /** A shape: its name (as graph_bench's), its copies and how it wires sources to sinks. */
  record Shape(String name, int copies, BiConsumer<StreamExecutionEnvironment, Long> build) {}

  static DataStream<byte[]> sources(StreamExecutionEnvironment env, int copies, long perSource) {
    return env.addSource(new Source(perSource), "source", PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO)
        .setParallelism(copies);
  }

  static Shape chain(int stages) {
    final String name = stages == 2 ? "pair (1+1)" : stages + "-stage chain";
    return new Shape(name, 1, (env, perSource) -> {
      DataStream<byte[]> s = sources(env, 1, perSource);
      for (int i = 1; i < stages - 1; ++i) s = s.map(new Identity()).name("identity " + i).setParallelism(1);
      s.addSink(new Sink()).name("sink").setParallelism(1);
    });
  }

  static Shape copies(int n) {
    return new Shape(n + "+" + n + " copies", n,
        (env, perSource) -> sources(env, n, perSource).rebalance().addSink(new Sink()).name("sink").setParallelism(n));
  }

  static Shape shuffle() {
    return new Shape("keyed shuffle 2 -> 2", 2,
        (env, perSource) -> sources(env, 2, perSource).keyBy(new Sequence()).addSink(new Sink()).name("sink")
            .setParallelism(2));
  }

  /** Sum of (i & 0xff) for i in [0, n): what one source's first bytes add up to. */
  static long firstByteSum(long n) {
    final long full = n / 256 * (255L * 256 / 2);
    final long rest = n % 256;
    return full + rest * (rest - 1) / 2;
  }

  static String run(MiniCluster cluster, Shape shape, long count, int rep) throws Exception {
    final long perSource = count / shape.copies();
    final long records = perSource * shape.copies();
    final long start = System.nanoTime();
    final StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.getConfig().enableObjectReuse();
    env.setParallelism(shape.copies());
    shape.build().accept(env, perSource);
    final StreamGraph graph = env.getStreamGraph();
    graph.setJobName(shape.name());
    final JobGraph job = graph.getJobGraph();
    final JobExecutionResult result = cluster.executeJobBlocking(job);
    final double wall = (System.nanoTime() - start) / 1e9;
    final long got = result.<Long>getAccumulatorResult("records");
    final long sum = result.<Long>getAccumulatorResult("sum");
    final long first = result.<Long>getAccumulatorResult("first_emit_ns");
    final long last = result.<Long>getAccumulatorResult("last_receive_ns");
    if (got != records || sum != firstByteSum(perSource) * shape.copies()) {
      throw new IllegalStateException(String.format("%s: the sinks saw %d records (sum %d); the sources sent %d (sum %d)",
          shape.name(), got, sum, records, firstByteSum(perSource) * shape.copies()));
    }
    final double steady = (last - first) / 1e9;
    final double net = result.getNetRuntime(TimeUnit.MICROSECONDS) / 1e6;
    return String.format(Locale.ROOT, "%d\t%s\t%d\t%.0f\t%.0f\t%.4f\t%.4f\t%.4f", rep, shape.name(), records,
        records / steady, records / wall, wall, steady, net);
  }

  static void usage(String error) {
    System.err.println("FlinkShapes: " + error);
    System.err.println("usage: FlinkShapes [--reps N] [--count N] [--quick] [--only TEXT] [--slots N]");
    System.exit(2);
  }

  public static void main(String[] args) throws Exception {
    int reps = 5;
    long count = -1;
    boolean quick = false;
    String only = "";
    int slots = 4;
    for (int i = 0; i < args.length; ++i) {
      final String a = args[i];
      try {
        switch (a) {
          case "--reps" -> reps = Integer.parseInt(args[++i]);
          case "--count" -> count = Long.parseLong(args[++i]);
          case "--quick" -> quick = true;
          case "--only" -> only = args[++i];
          case "--slots" -> slots = Integer.parseInt(args[++i]);
          default -> usage("unknown option " + a);
        }
      } catch (ArrayIndexOutOfBoundsException | NumberFormatException e) {
        usage(a + " needs a number" + (a.equals("--only") ? " or text" : ""));
      }
    }
    if (reps < 1 || slots < 1 || (count != -1 && count < 4)) usage("--reps and --slots must be >= 1, --count >= 4");
    if (count == -1) count = quick ? 400_000 : 4_000_000;

    final List<Shape> shapes = new ArrayList<>();
    for (Shape s : List.of(chain(2), chain(3), chain(5), copies(2), copies(4), shuffle())) {
      if (s.name().contains(only)) shapes.add(s);
    }
    if (shapes.isEmpty()) usage("no shape's name contains \"" + only + "\"");
    for (Shape s : shapes) {
      if (s.copies() > slots) usage(s.name() + " needs " + s.copies() + " slots; --slots is " + slots);
    }

    final Configuration conf = new Configuration();
    conf.set(RestOptions.BIND_PORT, "0");  // the MiniCluster's REST endpoint: any free port
    conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");  // a failure fails the run
    final long clusterStart = System.nanoTime();
    try (MiniCluster cluster = new MiniCluster(new MiniClusterConfiguration.Builder()
        .setConfiguration(conf).setNumTaskManagers(1).setNumSlotsPerTaskManager(slots).build())) {
      cluster.start();
      System.out.printf(Locale.ROOT, "# Flink %s, JDK %s, MiniCluster (1 TaskManager, %d slots) started in %.3f s%n",
          org.apache.flink.runtime.util.EnvironmentInformation.getVersion(), System.getProperty("java.version"), slots,
          (System.nanoTime() - clusterStart) / 1e9);
      System.out.println("# rep\tshape\trecords\tsteady_records_per_s\tjob_records_per_s\tjob_wall_s\tsteady_s\tnet_runtime_s");
      for (int rep = 0; rep <= reps; ++rep) {  // rep 0: the warm-up round
        for (Shape s : shapes) {
          System.out.println(run(cluster, s, count, rep));
          System.out.flush();
        }
      }
    }
  }
}
