// The console's commands. Each returns the process exit status (exit_codes.h).
#ifndef SLUICE_CONSOLE_COMMANDS_H_
#define SLUICE_CONSOLE_COMMANDS_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "text/port_range.h"
#include "topology/topology.h"

namespace sluice::console {

// How the console proves who it is to the host daemons (docs/operations.md, "Tokens" and
// "Certificates"): the shared token (TLS-PSK), or a certificate, its key and the CA.
struct ControlOptions {
  std::string token_file;  // --token-file; "" = ~/.config/sluice/token
  std::string cert_file;   // --cert: certificate mode when set (with key_file and ca_file)
  std::string key_file;    // --key
  std::string ca_file;     // --ca
};

// --launcher and its options (console/launcher.h, docs/slurm.md).
struct LauncherOptions {
  std::string launcher;   // "" = hand-started daemons (hosts:, --hosts); "slurm"
  std::string partition;  // --partition: for an allocation the console asks for
  std::string time;       // --time: its time limit, in Slurm's format (e.g. 30, 1:00:00)
  std::string account;    // --account: the account it is charged to
  int nodes = 0;          // --nodes: machines to ask for; 0 = one per logical host (1 without hosts:)
  std::string run_dir;    // --run-dir: token, ready files, daemon logs; "" = ~/.cache/sluice/runs/ID
  std::string sluiced;    // --sluiced: the host daemon on the nodes; "" = next to the console
  std::string data_ports;  // --data-ports LO-HI: passed on to every sluiced it starts; "" = none
};

// --ui ADDR:PORT: serve the run's page, /api/status and /metrics there ("" = no);
// --ui-public: allow an address that is not loopback; --ui-linger: seconds to keep serving
// the final state after the run (sluice run and sluice serve alike).
struct UiOptions {
  std::string address;
  bool allow_public = false;
  double linger = 0;
};

struct RunOptions {
  std::string topology_path;
  std::vector<std::string> work;  // replaces the topology's work: when not empty
  std::string metrics_path;       // "" = no metrics file
  bool progress = true;           // the live line, when stderr is a terminal
  std::string hosts;              // --hosts a=ADDR:PORT,...: overrides/adds to hosts:
  ControlOptions control;         // --token-file, or --cert/--key/--ca
  // When no buffer has moved for this long, print what every copy waits on; with
  // stall_fails (--stall-timeout given), fail the run with that report instead.
  std::chrono::milliseconds stall_after{10000};
  bool stall_fails = false;
  // --encrypt: across hosts, every stream's data over TLS (as if each had encrypt: true).
  bool encrypt = false;
  // --data-ports LO-HI: the ports the console's own data port (a `to: client` stream's) may
  // take; empty: any free port.
  text::PortRange data_ports;
  LauncherOptions launch;  // --launcher ...
  UiOptions ui;
};

// `sluice serve` (docs/console.md): deploys the topology once and runs the units clients
// submit, until `sluice stop` or SIGINT/SIGTERM.
// What `sluice serve` holds for its clients at most: units accepted that have not ended (the
// running one included), and their payloads' bytes. A submit beyond either is turned down.
struct ServeLimits {
  std::uint64_t max_queued = 1000;                        // --max-queued UNITS
  std::uint64_t max_queued_bytes = 256ull * 1024 * 1024;  // --max-queued-bytes SIZE
  // --client-read-timeout SECONDS: a client that takes none of its results for this long is
  // dropped and its unit cancelled (it holds back the units behind it); 0: never.
  double client_read_timeout = 60;
};

struct ServeOptions {
  std::string topology_path;
  std::string listen = "127.0.0.1:7800";  // --listen ADDR:PORT (or PORT, on 127.0.0.1)
  bool listen_public = false;             // --listen-public: allow an address that is not loopback
  std::string hosts;                      // --hosts a=ADDR:PORT,...: overrides/adds to hosts:
  ControlOptions control;                 // clients and host daemons alike
  bool encrypt = false;                   // --encrypt
  std::string data_ports;                 // --data-ports LO-HI: the client data port's range
  LauncherOptions launch;                 // --launcher slurm and its options (not run_dir, sluiced)
  UiOptions ui;                           // --ui, --ui-public, --ui-linger
  ServeLimits limits;                     // --max-queued, --max-queued-bytes
};

// `sluice submit ADDR:PORT --work PAYLOAD [--results FILE]`.
struct SubmitOptions {
  std::string address;
  std::string work;
  std::string work_file;  // --work-file: read `work` from it ("-" = stdin) instead
  std::string results_path;  // "" = count the results only; "-" = stdout
  ControlOptions control;
};

// Parses, checks every library and class, prints the plan. Exit 0 or kExitBadTopology.
// With hosts: (or `hosts`), also checks that every host daemon answers and authenticates
// (kExitHostUnavailable when one does not).
// With a launcher, prints where each logical host would run instead (starting nothing).
int validate_command(const std::string& topology_path, const std::string& hosts = "",
                     const ControlOptions& control = {}, const LauncherOptions& launch = {});

// Runs the topology (embedded when it has no hosts:) and prints the summary.
int run_command(const RunOptions& options);

// Opens and starts the application, then serves clients until stopped. Exit 0 after
// `sluice stop`, kExitInterrupted after SIGINT/SIGTERM, kExitBadTopology, kExitRunFailed
// when the application did not start, kExitHostUnavailable when the token or certificates
// cannot be used, kExitUsage when --listen is refused or cannot be bound.
int serve_command(const ServeOptions& options);

// Appends one unit to a serving application, writes its results, prints its summary.
// Exit 0 when it finished, kExitRunFailed when it failed (or the connection was lost before
// it ended), kExitHostUnavailable when serve could not be reached, did not authenticate or
// turned the unit down, kExitInterrupted on SIGINT/SIGTERM (serve cancels the unit).
int submit_command(const SubmitOptions& options);

// Asks a serving application to stop once the units it accepted ended, and waits until it
// has. Exit 0 then; kExitHostUnavailable when it could not be reached; kExitRunFailed when
// the connection was lost first.
int stop_command(const std::string& address, const ControlOptions& control);

// `sluice new KIND NAME` (KIND: cpp, java, or topology: both in cpp/ and java/ and a topology
// that mixes them): writes a project that builds against the installed package into the new
// directory NAME; refuses when NAME exists.
int new_command(const std::string& kind, const std::string& name);

// The plan: filters with their copies and code, streams with policy and memory, units.
std::string describe_plan(const topo::Topology& topology);

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_COMMANDS_H_
