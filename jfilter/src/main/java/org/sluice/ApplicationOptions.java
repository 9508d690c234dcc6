package org.sluice;

import java.util.Objects;

/**
 * How {@link Application#open} deploys a topology: the Java face of the C++
 * {@code sluice::ApplicationOptions}. Every setter returns this object, so options chain:
 *
 * <pre>{@code
 * ApplicationOptions options = new ApplicationOptions()
 *     .hosts("a=10.0.0.1:7700,b=10.0.0.2:7700")
 *     .tokenFile("/etc/sluice/token");
 * }</pre>
 *
 * <p>With no hosts (none in the topology's {@code hosts:}, none here) and no launcher, the
 * application runs embedded: every copy in this process, Java filters in this JVM.
 *
 * <p>Not thread-safe; {@link Application#open} copies what it needs, so later changes do not
 * affect an application already open.
 */
public final class ApplicationOptions {
  private String hosts = "";
  private String tokenFile = "";
  private String certFile = "";
  private String keyFile = "";
  private String caFile = "";
  private boolean encrypt;
  private String clientListen = "";
  private String dataPorts = "";
  private String launcher = "";
  private String partition = "";
  private String time = "";
  private String account = "";
  private int nodes;
  private boolean logToStderr = true;

  /** Options with every default. */
  public ApplicationOptions() {}

  /**
   * Hosts that override or add to the topology's {@code hosts:}, as {@code sluice run --hosts}
   * takes them. Default: "" (the topology's own).
   *
   * @param hosts {@code "a=ADDR:PORT,b=ADDR:PORT"}
   * @return this
   */
  public ApplicationOptions hosts(String hosts) {
    this.hosts = Objects.requireNonNull(hosts, "hosts");
    return this;
  }

  /** @return the hosts, {@code ""} for the topology's own */
  public String hosts() {
    return hosts;
  }

  /**
   * The token file the host daemons were started with. Default: "" ({@code ~/.config/sluice/token}).
   *
   * @param path the file
   * @return this
   */
  public ApplicationOptions tokenFile(String path) {
    this.tokenFile = Objects.requireNonNull(path, "path");
    return this;
  }

  /** @return the token file, {@code ""} for the default */
  public String tokenFile() {
    return tokenFile;
  }

  /**
   * Certificates instead of a token, as {@code sluice run --cert/--key/--ca}: give all three
   * or none. Default: none.
   *
   * @param cert this client's certificate (PEM)
   * @param key its private key (PEM)
   * @param ca the authority that signed the daemons' certificates (PEM)
   * @return this
   */
  public ApplicationOptions certificates(String cert, String key, String ca) {
    this.certFile = Objects.requireNonNull(cert, "cert");
    this.keyFile = Objects.requireNonNull(key, "key");
    this.caFile = Objects.requireNonNull(ca, "ca");
    return this;
  }

  /** @return the certificate file, {@code ""} when none */
  public String certFile() {
    return certFile;
  }

  /** @return the private key file, {@code ""} when none */
  public String keyFile() {
    return keyFile;
  }

  /** @return the authority's certificate file, {@code ""} when none */
  public String caFile() {
    return caFile;
  }

  /**
   * Every stream's data over TLS across hosts ({@code sluice run --encrypt}). Default: false.
   *
   * @param encrypt whether to encrypt data streams
   * @return this
   */
  public ApplicationOptions encrypt(boolean encrypt) {
    this.encrypt = encrypt;
    return this;
  }

  /** @return whether data streams are encrypted across hosts */
  public boolean encrypt() {
    return encrypt;
  }

  /**
   * Across hosts: where this process listens for the {@code to: client} stream's data.
   * Default: "" (the address this machine reaches the first host daemon from, on a free port).
   *
   * @param address {@code "ADDR:0"} or {@code "ADDR:PORT"}
   * @return this
   */
  public ApplicationOptions clientListen(String address) {
    this.clientListen = Objects.requireNonNull(address, "address");
    return this;
  }

  /** @return the client's listen address, {@code ""} for the default */
  public String clientListen() {
    return clientListen;
  }

  /**
   * Across hosts: the ports the client's listen address may take when its port is 0 (a
   * firewall's opening, as {@code sluice serve --data-ports}), and with a launcher those of the
   * host daemons it starts ({@code sluiced --data-ports}). Checked when the application opens.
   * Default: "" (any free port).
   *
   * @param range {@code "LO-HI"}, e.g. {@code "7801-7810"}, or one port
   * @return this
   */
  public ApplicationOptions dataPorts(String range) {
    this.dataPorts = Objects.requireNonNull(range, "range");
    return this;
  }

  /** @return the client's data port range, {@code ""} for any free port */
  public String dataPorts() {
    return dataPorts;
  }

  /**
   * {@code "slurm"}: start a host daemon per logical host as Slurm job steps (docs/slurm.md).
   * Default: "" (daemons already run at the hosts' addresses).
   *
   * @param launcher {@code "slurm"} or {@code ""}
   * @return this
   */
  public ApplicationOptions launcher(String launcher) {
    this.launcher = Objects.requireNonNull(launcher, "launcher");
    return this;
  }

  /** @return the launcher, {@code ""} for none */
  public String launcher() {
    return launcher;
  }

  /**
   * The Slurm partition, as {@code --partition}. Default: "" (Slurm's default).
   *
   * @param partition the partition
   * @return this
   */
  public ApplicationOptions partition(String partition) {
    this.partition = Objects.requireNonNull(partition, "partition");
    return this;
  }

  /** @return the Slurm partition, {@code ""} for Slurm's default */
  public String partition() {
    return partition;
  }

  /**
   * The Slurm time limit, as {@code --time}. Default: "" (Slurm's default).
   *
   * @param time e.g. {@code "00:30:00"}
   * @return this
   */
  public ApplicationOptions time(String time) {
    this.time = Objects.requireNonNull(time, "time");
    return this;
  }

  /** @return the Slurm time limit, {@code ""} for Slurm's default */
  public String time() {
    return time;
  }

  /**
   * The Slurm account, as {@code --account}. Default: "" (Slurm's default).
   *
   * @param account the account
   * @return this
   */
  public ApplicationOptions account(String account) {
    this.account = Objects.requireNonNull(account, "account");
    return this;
  }

  /** @return the Slurm account, {@code ""} for Slurm's default */
  public String account() {
    return account;
  }

  /**
   * The number of Slurm nodes to ask for. Default: 0 (one per logical host).
   *
   * @param nodes 0 or more
   * @return this
   * @throws IllegalArgumentException when {@code nodes} is negative
   */
  public ApplicationOptions nodes(int nodes) {
    if (nodes < 0) throw new IllegalArgumentException("nodes(" + nodes + "): give 0 (one per logical host) or more");
    this.nodes = nodes;
    return this;
  }

  /** @return the number of Slurm nodes, 0 for one per logical host */
  public int nodes() {
    return nodes;
  }

  /**
   * Whether the filters' log lines and the application's own messages go to standard error.
   * Default: true. False: nowhere, from open until the Application and its Units are closed;
   * since the log is the process's, nothing sluice logs in this process reaches standard error
   * meanwhile (other Applications' lines included). How each unit ended still comes back in its
   * UnitReport, and what fails to start in the exceptions.
   *
   * @param logToStderr true to log to standard error
   * @return this
   */
  public ApplicationOptions logToStderr(boolean logToStderr) {
    this.logToStderr = logToStderr;
    return this;
  }

  /** @return whether log lines go to standard error */
  public boolean logToStderr() {
    return logToStderr;
  }

  // The string options in the order the native side reads them (app_natives.cc, to_options).
  String[] strings() {
    return new String[] {hosts, tokenFile, certFile, keyFile, caFile, clientListen, launcher, partition, time, account,
        dataPorts};
  }

  @Override
  public String toString() {
    return "ApplicationOptions(hosts=" + hosts + ", tokenFile=" + tokenFile + ", certFile=" + certFile
        + ", keyFile=" + keyFile + ", caFile=" + caFile + ", encrypt=" + encrypt + ", clientListen=" + clientListen
        + ", dataPorts=" + dataPorts + ", launcher=" + launcher + ", partition=" + partition + ", time=" + time
        + ", account=" + account + ", nodes=" + nodes + ", logToStderr=" + logToStderr + ")";
  }
}
