// Application: a topology deployed once, driven from your own program one unit of work at a
// time (DESIGN.md, "Applications that stay deployed").
//
//   sluice::ApplicationOptions options;                       // embedded unless hosts: / hosts
//   sluice::Application app = sluice::Application::open("query.yaml", options);
//   app.start();                                              // every copy created, once
//   sluice::Unit unit = app.submit("x=10 y=20 w=256 h=256");  // appends a unit of work
//   while (auto buf = unit.results().read()) consume(*buf);   // the topology's `to: client` stream
//   sluice::UnitReport report = unit.wait();                  // finished, or the failure
//   app.stop();
//
// Units run one at a time, in submission order, on the copies start() created: filter
// objects live across units. A unit that fails (a filter throws, a host is lost, or a filter
// crashes its app daemon) is reported to its own Unit only; before the next unit the
// application is deployed again (every copy is created anew, because a failed copy's state
// is whatever the failure left), and the units after it run as usual. When deploying again
// fails (a host daemon is gone), that unit reports it, and so does each later one until
// deploying succeeds again (the host daemon is back): the application goes on. Embedded, filters run in this process: one that
// crashes it (SIGSEGV, abort, exit) ends this program, after a line naming it; run across
// hosts (a sluiced on this machine will do) to keep crashes out of it.
//
// Results: the buffers producer copies write to the stream `to: client` during a unit, in
// order per producer copy. Embedded, they are the producers' own pool blocks (nothing is
// copied); across hosts they arrive over the data plane, with the same credit-based flow
// control as any stream: a client that does not read holds its producers back, never the
// other streams. Read them until results().read() returns empty, then wait().
//
// Linking: find_package(Sluice) and target_link_libraries(app PRIVATE Sluice::application).
//
// Thread safety: Application's methods may be called from any thread, and submit() from
// several at once (units queue in the order the calls took effect). A Unit belongs to one
// thread at a time for results() and wait(); cancel() is safe from any thread (a reader
// blocked in results().read() then returns empty).
#ifndef SLUICE_APPLICATION_H_
#define SLUICE_APPLICATION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sluice/buffer.h"
#include "sluice/error.h"
#include "sluice/stream.h"

namespace sluice {

struct ApplicationOptions {
  // "a=ADDR:PORT,b=ADDR:PORT": overrides or adds hosts of the topology's hosts: (like
  // `sluice run --hosts`). With no hosts at all the application runs embedded, in this process.
  std::string hosts;
  // The token the host daemons were started with; "" = ~/.config/sluice/token.
  std::string token_file;
  // Certificates instead of a token (all three, or none), as `sluice run --cert/--key/--ca`.
  std::string cert_file;
  std::string key_file;
  std::string ca_file;
  // Every stream's data over TLS across hosts (`sluice run --encrypt`).
  bool encrypt = false;
  // Across hosts: where this process listens for the `to: client` stream's data ("ADDR:0"),
  // "" = the address this machine reaches the first host daemon from, on a free port.
  std::string client_listen;
  // "LO-HI" (or one port): the ports that listen address may take when its port is 0 (a
  // firewall's opening, as `sluice serve --data-ports`), and with a launcher the ports of the
  // host daemons it starts (`sluiced --data-ports`); "" = any free port.
  std::string data_ports;
  // "slurm": start a host daemon per logical host as Slurm job steps (docs/slurm.md), with
  // these; "" = daemons already running at the hosts' addresses.
  std::string launcher;
  std::string partition;
  std::string time;
  std::string account;
  int nodes = 0;
  // Where the filters' log lines and the application's own messages go: stderr when true.
  // false: nowhere, from open() until the Application and its Units are gone; and since the
  // log is the process's, nothing sluice logs in this process reaches stderr meanwhile (other
  // Applications' lines included). How each unit ended still comes back in its UnitReport,
  // and what fails to start in the exceptions. What filters print to stdout is not a log line.
  bool log_to_stderr = true;
};

// What a stream carried during one unit of work (summed over every host).
struct UnitStreamCount {
  std::string stream;  // "read.out -> count.in"
  std::uint64_t buffers = 0;
  std::uint64_t bytes = 0;
};

// How a unit of work ended.
struct UnitReport {
  std::uint64_t index = 0;  // 0, 1, 2 ... in submission order over the application's life
  std::string work;         // the payload
  bool finished = false;    // true: every copy ran init, process and finalize for it
  double seconds = 0;       // from the moment it started running (a failed deployment: deploying) to its end
  // When !finished: who failed, and where. filter is "" when it was not a filter's fault
  // (cancelled, a host lost, the application stopped before the unit ran).
  std::string filter;
  int copy = -1;
  std::string host;
  // Where it failed. A filter's own: create, init, process, finalize, end of work (filter and
  // copy set); also when the copy crashed its app daemon, the message then saying how
  // ("filter 'x' copy 1 on host b crashed with SIGSEGV in process ..."). crash: a crash no
  // copy can be named for ("crashed with SIGSEGV outside any filter"). The unit's: cancelled.
  // Reaching and placing: connect (a host daemon unreachable or refusing), load, launch.
  // Hosts: app daemon, host daemon (died, hung, refused), network (a data connection lost or
  // silent), link (a control connection), timeout, stall. run: anything else.
  std::string stage;
  std::string message;  // the exception's message (for Java, with the stack trace)
  // Across hosts, when the unit failed because a process that ran its copies ended: how.
  // A signal's name ("SIGSEGV", "SIGBUS", "SIGFPE", "SIGABRT"; "SIGKILL" for an app daemon
  // killed from outside, by the OOM killer say), "exit(7)" or "System.exit(3)" when a filter
  // ended its process, "JVM ended (status 3)" when the JVM ended outside any copy. "" for
  // everything else (an exception, a lost host or link, cancelled). A program can retry an
  // exception and set a crashing payload aside without reading `message`.
  std::string crash;
  std::vector<UnitStreamCount> streams;  // what each stream carried in this unit
  // When !finished, across hosts: the hosts whose final counts never came, each as "b, which
  // never reported" or "b, last reported 0.4 s before the end" (a host lost, an app daemon
  // that crashed). `streams` then counts at least what was carried. Empty otherwise.
  std::vector<std::string> partial_counts;
  // "unit 3 [payload] finished in 0.012 s", or the failure named as `sluice run` names it.
  // The payload is cut to its first 200 bytes and its size ("... (N bytes)"), with control
  // characters escaped; `work` has all of it.
  std::string str() const;
};

class Application;
class AppCore;
class UnitResults;

// One submitted unit of work. Move-only; a handle to state the Application shares.
// Destroying a Unit never waits: the unit runs to its end all the same (cancel() first to
// stop it), and the results it had not read are read and dropped by the application, as they
// come (the next unit cannot start before). wait() first to know how it ended.
class Unit {
 public:
  Unit(Unit&&) noexcept;
  Unit& operator=(Unit&&) noexcept;
  ~Unit();

  // The buffers the topology's `to: client` stream carried in this unit. read() blocks
  // until the unit runs and a buffer arrives, and returns empty once every producer copy
  // ended the unit (or the unit failed: wait() says how). Throws sluice::Error once stop()
  // discarded what was not read. The caller owns each buffer: it stays valid after stop(),
  // until the Application and its Units are destroyed; release (destroy) it before that (a
  // buffer held longer keeps its pool's memory until the process ends, with a warning).
  // A topology without `to: client`: read() returns empty at once.
  InputStream& results();

  // Reads and discards what is left of the results, waits until the unit ended, and says
  // how. May be called more than once (the same report).
  UnitReport wait();

  // Fails this unit with stage "cancelled" (queued: it will not run, and ends at once;
  // running: it is aborted, and ends once its copies have stopped; the application is
  // deployed again before the next unit). No-op once ended.
  void cancel();

  // Its place in submission order (0, 1, 2 ...). Throws sluice::Error on a moved-from Unit,
  // as wait() and results() do.
  std::uint64_t index() const;

 private:
  friend class Application;
  friend class AppCore;      // the implementation (application/core.h)
  friend class UnitResults;
  struct State;
  explicit Unit(std::shared_ptr<State> state);
  // Hands the unit's unread results to the application to drop (AppCore::orphan).
  void let_go() noexcept;
  std::shared_ptr<State> state_;
};

class Application {
 public:
  // Parses and checks the topology and the options; throws sluice::Error (for the topology,
  // one that lists every mistake, as file:line:column). Starts nothing.
  static Application open(const std::string& topology_path, ApplicationOptions options = {});
  // The same from YAML text; `name` stands for the file in messages and relative paths
  // resolve against `base_dir`.
  static Application from_text(std::string_view yaml, const std::string& name, const std::string& base_dir,
                               ApplicationOptions options = {});

  Application(Application&&) noexcept;
  Application& operator=(Application&&) noexcept;
  // abort(): units still queued or running are cancelled (call stop() first to finish them).
  ~Application();

  // Loads every library and class, places and creates every copy (across hosts: through
  // the host daemons), and waits until all are ready. Throws sluice::Error naming what
  // failed (filter, copy, host). Called once; submit() calls it when it was not.
  void start();

  // Appends a unit of work with `payload` (what Context::work() returns in every copy).
  // Returns at once. Throws sluice::Error once the application is stopped, and across hosts
  // for a payload over 16 MiB less 64 bytes (it crosses in one control message: pass a
  // file's path or a key instead).
  Unit submit(std::string payload);

  // Finishes the units already submitted, then stops every copy (across hosts: the app
  // daemons end; the host daemons keep running). Units submitted afterwards are refused.
  // Results that no thread has read by now are discarded (as Java's stop()): a thread still
  // reading a unit gets sluice::Error from its next read(); buffers already read stay valid.
  // So read what you need, or wait() on it, before calling stop(). Every unit's wait()
  // answers afterwards. Idempotent.
  void stop();

  // Fails the running unit and every queued one with stage "cancelled", then stops.
  void abort();

  // The topology's name, and whether it runs across hosts. These and units_ended() throw
  // sluice::Error on a moved-from Application, as submit() does.
  const std::string& name() const;
  bool remote() const;
  // Units that have ended so far.
  std::uint64_t units_ended() const;

 private:
  struct State;
  explicit Application(std::unique_ptr<State> state);
  // The implementation behind it, for sluice serve's live view (application/core.h).
  friend std::shared_ptr<AppCore> core_of(const Application& app);
  std::unique_ptr<State> state_;
};

}  // namespace sluice

#endif  // SLUICE_APPLICATION_H_
