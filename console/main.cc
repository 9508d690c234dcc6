// sluice: the console. `sluice validate TOPOLOGY`, `sluice run TOPOLOGY [...]`.
#include <iostream>

#include <CLI/CLI.hpp>

#include "console/commands.h"
#include "console/exit_codes.h"
#include "console/remote.h"
#include "sluice/version.h"

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

}  // namespace

int main(int argc, char** argv) {
  using namespace sluice::console;
  CLI::App app{"sluice: run filter-stream applications written in C++ and Java"};
  app.set_version_flag("--version", std::string("sluice ") + SLUICE_VERSION);
  app.require_subcommand(1);

  std::string validate_path;
  CLI::App* validate = app.add_subcommand("validate", "check a topology, load its code, print the plan");
  validate->add_option("TOPOLOGY", validate_path, "the topology file (YAML)")->required();
  std::string validate_hosts;
  ControlOptions validate_control;
  validate->add_option("--hosts", validate_hosts, "host daemons NAME=ADDR:PORT,...; override or add to hosts:")
      ->check(hosts_option_problem);
  add_control_options(validate, validate_control);

  RunOptions run;
  CLI::App* run_cmd = app.add_subcommand("run", "run a topology and print a summary");
  run_cmd->add_option("TOPOLOGY", run.topology_path, "the topology file (YAML)")->required();
  run_cmd->add_option("--work", run.work,
                      "a unit of work's payload; repeat for several (replaces the topology's work:)");
  run_cmd->add_option("--metrics", run.metrics_path, "write the run's metrics as JSON to FILE");
  run_cmd->add_option("--hosts", run.hosts, "host daemons NAME=ADDR:PORT,...; override or add to hosts:")
      ->check(hosts_option_problem);
  add_control_options(run_cmd, run.control);
  bool no_progress = false;
  run_cmd->add_flag("--no-progress", no_progress, "no live progress line, even on a terminal");
  run_cmd->add_flag("--encrypt", run.encrypt,
                    "across hosts, send every stream's data over TLS (keyed by this run's key), as if each "
                    "stream said encrypt: true");
  double stall_timeout = 0;
  CLI::Option* stall = run_cmd->add_option(
      "--stall-timeout", stall_timeout,
      "fail the run when no buffer has moved for SECONDS, saying what each copy waits on (without it, that "
      "report is printed after 10 s and the run goes on waiting)");
  stall->check(CLI::PositiveNumber);

  std::string new_kind;
  std::string new_name;
  CLI::App* new_cmd = app.add_subcommand("new", "write a new project: C++ filters (cmake), Java filters (maven), "
                                                "or a topology mixing both, each with a test and a topology");
  new_cmd->add_option("KIND", new_kind, "cpp, java or topology (cpp/ and java/ and a topology that mixes them)")
      ->required()
      ->check(CLI::IsMember({"cpp", "java", "topology"}));
  new_cmd->add_option("NAME", new_name, "the project's name, and its new directory")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int status = app.exit(e);
    return status == 0 ? kExitOk : kExitUsage;
  }
  if (new_cmd->parsed()) return new_command(new_kind, new_name);
  if (validate->parsed()) return validate_command(validate_path, validate_hosts, validate_control);
  run.progress = !no_progress;
  if (stall->count() > 0) {
    run.stall_after = std::chrono::milliseconds(static_cast<long long>(stall_timeout * 1000));
    run.stall_fails = true;
  }
  return run_command(run);
}
