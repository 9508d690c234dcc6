// sluice: the console. `sluice validate TOPOLOGY`, `sluice run TOPOLOGY [...]`, `sluice serve
// TOPOLOGY [...]`, `sluice submit ADDR:PORT [...]`, `sluice stop ADDR:PORT`, `sluice new`.
#include <signal.h>

#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "console/commands.h"
#include "console/exit_codes.h"
#include "console/launcher.h"
#include "console/remote.h"
#include "console/usage_problem.h"
#include "runtime/process_exit.h"
#include "sluice/version.h"
#include "text/cli_options.h"
#include "topology/size.h"

namespace {

// --token-file, or --cert/--key/--ca (all three), for the commands that reach host daemons.
void add_control_options(CLI::App* command, sluice::console::ControlOptions& control) {
  auto* token = command->add_option("--token-file", control.token_file,
                                    "the shared token (default ~/.config/sluice/token)");
  auto* cert = command->add_option("--cert", control.cert_file,
                                   "this console's certificate (PEM), instead of a token; needs --key and --ca");
  auto* key = command->add_option("--key", control.key_file, "the certificate's private key (PEM)");
  auto* ca = command->add_option("--ca", control.ca_file, "the CA that signed the daemons' certificates (PEM)");
  cert->needs(key)->needs(ca)->excludes(token);
  key->needs(cert);
  ca->needs(cert);
}

// --launcher and its options (docs/slurm.md). `serve`: sluice serve's, where --token-file or
// the certificates stay usable beside a launcher (its clients must pass them) and the
// Application places the run directory and finds sluiced itself (no --run-dir, --sluiced).
void add_launcher_options(CLI::App* command, sluice::console::LauncherOptions& launch, CLI::Option* hosts,
                          bool serve = false) {
  using sluice::console::launcher_name_problem;
  auto* launcher = command->add_option("--launcher", launch.launcher,
                                       "start the host daemons through a resource manager: slurm (docs/slurm.md)")
                       ->check([](const std::string& name) { return launcher_name_problem(name); });
  launcher->excludes(hosts);
  // The launcher makes the run's own token and starts the daemons with it: a token file or
  // certificates given beside it would be silently unused (but by sluice serve's clients).
  for (const char* name : {"--token-file", "--cert", "--key", "--ca"}) {
    if (serve) break;
    if (CLI::Option* control = command->get_option_no_throw(name)) launcher->excludes(control);
  }
  command->add_option("--partition", launch.partition, "slurm: the partition of the allocation it asks for")
      ->needs(launcher);
  command->add_option("--time", launch.time, "slurm: the allocation's time limit (e.g. 30, 1:00:00)")->needs(launcher);
  command->add_option("--account", launch.account, "slurm: the account the allocation is charged to")->needs(launcher);
  sluice::text::add_integer_option(*command, "--nodes", &launch.nodes,
                                   "slurm: nodes to ask for (default: one per logical host)", 1, 100000)
      ->needs(launcher);
  if (serve) return;
  command->add_option("--run-dir", launch.run_dir,
                      "slurm: this run's token, ready files and daemon logs, on a filesystem every node sees "
                      "(default ~/.cache/sluice/runs/ID)")
      ->needs(launcher);
  command->add_option("--sluiced", launch.sluiced, "slurm: the host daemon every node runs (default: next to sluice)")
      ->needs(launcher);
}

// Adds `name` (e.g. "--max-queued-bytes"): a size as topologies write one ("256MiB",
// "65536", topology/size.h) from `min` bytes up, stored in `*target`; its default is what
// `*target` holds, shown in --help as a size.
CLI::Option* add_size_option(CLI::App* command, const std::string& name, std::uint64_t* target,
                             const std::string& description, std::uint64_t min) {
  CLI::Option* option = command->add_option_function<std::string>(
      name,
      [target, name, min](const std::string& value) {
        std::string why;
        const std::optional<std::size_t> bytes = sluice::topo::parse_size(value, &why);
        if (!bytes) throw CLI::ValidationError(name + ": " + why);
        if (*bytes < min) {
          throw CLI::ValidationError(name + " '" + value + "' is below " + sluice::topo::format_size(min));
        }
        *target = *bytes;
      },
      description + " (default: " + sluice::topo::format_size(*target) + ")");
  return option->type_name("SIZE");
}

// --ui, --ui-public, --ui-linger; `what` is "run" or "application" in the help.
void add_ui_options(CLI::App* command, sluice::console::UiOptions& ui, const std::string& what) {
  CLI::Option* address = command->add_option("--ui", ui.address,
                      "serve a live view of the " + what + " at ADDR:PORT (or PORT, on 127.0.0.1; 0 picks a free port): "
                      "the page at /, its JSON at /api/status, Prometheus metrics at /metrics");
  command->add_flag("--ui-public", ui.allow_public,
                    "let --ui listen on an address that is not loopback (anyone who reaches it sees the " + what + ")");
  command->add_option("--ui-linger", ui.linger,
                      "after the " + what + " ended, keep serving its final state for SECONDS (Ctrl-C ends it sooner)")
      ->check(sluice::text::seconds_check(true))
      ->needs(address);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sluice::console;
  // The console owns its process: once a JVM ran, it ends without running libjvm's static
  // destructors under the JVM's threads (runtime/process_exit.h).
  sluice::process::end_before_jvm_statics_at_exit();
  // A closed pipe on stdout or stderr (`sluice run ... 2>&1 | head`) makes a write fail
  // (EPIPE), not kill the console before it has ended its steps and released its allocation.
  // Children get SIGPIPE back (subprocess.cc).
  ::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"sluice: run filter-stream applications written in C++ and Java"};
  app.set_version_flag("--version", std::string("sluice ") + SLUICE_VERSION);
  app.require_subcommand(1);

  std::string validate_path;
  CLI::App* validate = app.add_subcommand("validate", "check a topology, load its code, print the plan");
  validate->add_option("TOPOLOGY", validate_path, "the topology file (YAML)")->required();
  std::string validate_hosts;
  ControlOptions validate_control;
  auto* validate_hosts_option =
      validate->add_option("--hosts", validate_hosts, "host daemons NAME=ADDR:PORT,...; override or add to hosts:")
          ->check(hosts_option_problem);
  add_control_options(validate, validate_control);
  LauncherOptions validate_launch;
  add_launcher_options(validate, validate_launch, validate_hosts_option);

  RunOptions run;
  CLI::App* run_cmd = app.add_subcommand("run", "run a topology and print a summary");
  run_cmd->add_option("TOPOLOGY", run.topology_path, "the topology file (YAML)")->required();
  run_cmd->add_option("--work", run.work,
                      "a unit of work's payload; repeat for several (replaces the topology's work:)");
  run_cmd->add_option("--metrics", run.metrics_path, "write the run's metrics as JSON to FILE");
  auto* run_hosts_option =
      run_cmd->add_option("--hosts", run.hosts, "host daemons NAME=ADDR:PORT,...; override or add to hosts:")
          ->check(hosts_option_problem);
  add_control_options(run_cmd, run.control);
  add_launcher_options(run_cmd, run.launch, run_hosts_option);
  bool no_progress = false;
  run_cmd->add_flag("--no-progress", no_progress, "no live progress line, even on a terminal");
  run_cmd->add_flag("--encrypt", run.encrypt,
                    "across hosts, send every stream's data over TLS (keyed by this run's key), as if each "
                    "stream said encrypt: true");
  std::string run_data_ports;
  run_cmd->add_option("--data-ports", run_data_ports,
                      "across hosts, the ports this console may listen on for a to: client stream's data, and "
                      "with --launcher slurm the daemons it starts (a firewall's opening); default: any free port")
      ->type_name("LO-HI")
      ->check(sluice::text::port_range_check());
  double stall_timeout = 0;
  CLI::Option* stall = run_cmd->add_option(
      "--stall-timeout", stall_timeout,
      "fail the run when no buffer has moved for SECONDS, saying what each copy waits on (without it, that "
      "report is printed after 10 s and the run goes on waiting)");
  stall->check(sluice::text::seconds_check(false));
  add_ui_options(run_cmd, run.ui, "run");

  ServeOptions serve;
  CLI::App* serve_cmd = app.add_subcommand("serve", "deploy a topology once and run the units of work clients "
                                                    "submit (sluice submit), until sluice stop or Ctrl-C");
  serve_cmd->add_option("TOPOLOGY", serve.topology_path, "the topology file (YAML)")->required();
  serve_cmd->add_option("--listen", serve.listen,
                        "where clients connect: ADDR:PORT (or PORT, on 127.0.0.1; 0 picks a free port)")
      ->capture_default_str();
  serve_cmd->add_flag("--listen-public", serve.listen_public,
                      "let --listen use an address that is not loopback (clients must still hold the token)");
  auto* serve_hosts_option =
      serve_cmd->add_option("--hosts", serve.hosts, "host daemons NAME=ADDR:PORT,...; override or add to hosts:")
          ->check(hosts_option_problem);
  add_control_options(serve_cmd, serve.control);
  add_launcher_options(serve_cmd, serve.launch, serve_hosts_option, true);
  add_ui_options(serve_cmd, serve.ui, "application");
  serve_cmd->add_flag("--encrypt", serve.encrypt,
                      "across hosts, send every stream's data over TLS, as if each stream said encrypt: true");
  serve_cmd->add_option("--data-ports", serve.data_ports,
                        "across hosts, the ports serve may listen on for the to: client stream's data, and with "
                        "--launcher slurm the daemons it starts (a firewall's opening); default: any free port")
      ->type_name("LO-HI")
      ->check(sluice::text::port_range_check());
  sluice::text::add_integer_option<std::uint64_t>(
      *serve_cmd, "--max-queued", &serve.limits.max_queued,
      "turn a submit down while this many units were accepted and have not ended (the running one included)", 1,
      1000000);
  serve_cmd
      ->add_option("--client-read-timeout", serve.limits.client_read_timeout,
                   "drop a client that takes none of its unit's results for SECONDS, cancelling its unit (it "
                   "holds back the units behind it); 0: never")
      ->check(sluice::text::seconds_check(true))
      ->capture_default_str();
  add_size_option(serve_cmd, "--max-queued-bytes", &serve.limits.max_queued_bytes,
                                "turn a submit down when its payload would take the payloads of the units "
                                "accepted that have not ended past SIZE (e.g. 1GiB)",
                                1);

  SubmitOptions submit;
  CLI::App* submit_cmd = app.add_subcommand("submit", "append a unit of work to a sluice serve, write its results, "
                                                      "print its summary");
  submit_cmd->add_option("ADDRESS", submit.address, "where sluice serve listens, ADDR:PORT")->required();
  CLI::Option* work_text = submit_cmd->add_option("--work", submit.work, "the unit of work's payload");
  CLI::Option* work_file =
      submit_cmd->add_option("--work-file", submit.work_file,
                             "read the payload from FILE (- for stdin), for one past the 128 KiB an argument may have");
  work_text->excludes(work_file);
  submit_cmd->require_option(0);  // options checked below: one of --work and --work-file
  submit_cmd->callback([&] {
    if (work_text->count() + work_file->count() != 1) {
      throw CLI::RequiredError("one of --work PAYLOAD and --work-file FILE");
    }
    if (work_file->count() > 0 && submit.work_file.empty()) {
      throw CLI::ValidationError("--work-file", "names no file (give a path, or - for stdin)");
    }
  });
  submit_cmd->add_option("--results", submit.results_path,
                         "write the bytes of the to: client stream's buffers to FILE (- for stdout), in order per "
                         "producer copy");
  add_control_options(submit_cmd, submit.control);

  std::string stop_address;
  ControlOptions stop_control;
  CLI::App* stop_cmd = app.add_subcommand("stop", "stop a sluice serve once the units it accepted ended");
  stop_cmd->add_option("ADDRESS", stop_address, "where sluice serve listens, ADDR:PORT")->required();
  add_control_options(stop_cmd, stop_control);

  std::string new_kind;
  std::string new_name;
  CLI::App* new_cmd = app.add_subcommand("new", "write a new project: C++ filters (cmake), Java filters (maven), "
                                                "or a topology mixing both, each with a test and a topology");
  new_cmd->add_option("KIND", new_kind, "cpp, java or topology (cpp/ and java/ and a topology that mixes them)")
      ->required()
      ->check(CLI::IsMember({"cpp", "java", "topology"}));
  new_cmd->add_option("NAME", new_name, "the project's name, and its new directory")->required();

  if (argc > 1) {
    const std::string first = argv[1];
    const std::string problem = first[0] == '-' ? option_before_command_problem(app, first)
                                                : unknown_command_problem(app, first);
    if (!problem.empty()) {
      std::cerr << problem;
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ExtrasError& e) {
    const std::string problem = unexpected_arguments_problem(app);
    if (problem.empty()) return app.exit(e) == 0 ? kExitOk : kExitUsage;
    std::cerr << problem;
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    int status = app.exit(e);
    return status == 0 ? kExitOk : kExitUsage;
  }
  const int status = [&] {
    if (new_cmd->parsed()) return new_command(new_kind, new_name);
    if (serve_cmd->parsed()) return serve_command(serve);
    if (submit_cmd->parsed()) return submit_command(submit);
    if (stop_cmd->parsed()) return stop_command(stop_address, stop_control);
    if (validate->parsed()) return validate_command(validate_path, validate_hosts, validate_control, validate_launch);
    run.progress = !no_progress;
    if (!run_data_ports.empty()) run.data_ports = *sluice::text::parse_port_range(run_data_ports, nullptr);
    run.launch.data_ports = run_data_ports;  // the daemons a launcher starts take the same range
    if (stall->count() > 0) {
      run.stall_after = std::chrono::milliseconds(static_cast<long long>(stall_timeout * 1000));
      run.stall_fails = true;
    }
    return run_command(run);
  }();
  sluice::process::finish(status);  // a JVM ran: end here, before libjvm's static destructors
  return status;
}
