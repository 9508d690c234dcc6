// `sluice serve`: the Application (sluice/application.h) deployed once, driven by the units
// clients submit over the network (console/serve_server.h).
#include <pthread.h>
#include <signal.h>

#include <iostream>
#include <optional>

#include "application/core.h"
#include "console/commands.h"
#include "console/exit_codes.h"
#include "console/remote.h"
#include "console/serve_server.h"
#include "console/serve_ui.h"
#include "console/subprocess.h"
#include "control/auth.h"
#include "daemons/log.h"
#include "http/listen_address.h"
#include "runtime/backends.h"
#include "runtime/crash_report.h"
#include "runtime/graph.h"
#include "sluice/application.h"

namespace sluice::console {

namespace {

ApplicationOptions application_options(const ServeOptions& o) {
  ApplicationOptions a;
  a.hosts = o.hosts;
  if (o.launch.launcher.empty()) {  // a launcher makes the run's own token: these are the clients'
    a.token_file = o.control.token_file;
    a.cert_file = o.control.cert_file;
    a.key_file = o.control.key_file;
    a.ca_file = o.control.ca_file;
  }
  a.encrypt = o.encrypt;
  a.data_ports = o.data_ports;
  a.launcher = o.launch.launcher;
  a.partition = o.launch.partition;
  a.time = o.launch.time;
  a.account = o.launch.account;
  a.nodes = o.launch.nodes;
  return a;
}

// --listen: loopback unless --listen-public (as --ui and --ui-public).
std::optional<boost::asio::ip::tcp::endpoint> listen_endpoint(const ServeOptions& o) {
  boost::asio::ip::tcp::endpoint at;
  try {
    at = http::parse_listen_address(o.listen, "--listen", true, "--listen-public");
  } catch (const std::exception& e) {
    std::cerr << "sluice: " << e.what() << "\n";
    return std::nullopt;
  }
  if (!at.address().is_loopback() && !o.listen_public) {
    std::cerr << "sluice: --listen '" << o.listen << "' is not a loopback address: sluice serve would take units "
              << "from other machines (each must still hold the token or a certificate); listen on 127.0.0.1 (e.g. "
              << "--listen 127.0.0.1:7800), or add --listen-public if clients on other machines should reach "
              << at.address().to_string() << "\n";
    return std::nullopt;
  }
  return at;
}

// The TLS that clients must pass: the token (the daemons', read as a daemon reads it), or
// the certificates. Null after printing why they cannot be used.
std::shared_ptr<tls::TlsContext> client_tls(const ControlOptions& control) {
  tls::TlsOptions tls;
  tls.cert_file = control.cert_file;
  tls.key_file = control.key_file;
  tls.ca_file = control.ca_file;
  if (!tls.certificates()) {
    try {
      tls.token = control::read_token_file(token_path(control.token_file), control::TokenReader::kDaemon);
    } catch (const std::exception& e) {
      std::cerr << "sluice: " << e.what() << " (--token-file)\n";
      return nullptr;
    }
  }
  try {
    return tls::TlsContext::create(tls::TlsContext::Role::kServer, tls);
  } catch (const std::exception& e) {
    std::cerr << "sluice: " << e.what() << "\n";
    return nullptr;
  }
}

// Blocks or unblocks SIGINT and SIGTERM in this thread (and in the threads it starts).
void block_signals(bool block) {
  sigset_t set;
  sigemptyset(&set);
  add_stop_signals(&set);
  pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, nullptr);
}


}  // namespace

int serve_command(const ServeOptions& options) {
  // A crash names the filter copy it happened in before the process dies (as sluice run).
  crash::install_handlers();
  // Blocked in every thread until the application has started (the runner thread, born in
  // open(), keeps them so): a launcher waiting for its allocation takes them itself
  // (take_interrupt), withdraws the request and start() fails. Before, the server's handler
  // took them and nothing ran it until the start was over: Ctrl-C did nothing while Slurm
  // kept the allocation pending, and the granted allocation was then torn down half-way.
  block_signals(true);
  const std::optional<boost::asio::ip::tcp::endpoint> listen = listen_endpoint(options);
  if (!listen) return kExitUsage;
  // Everything sluice run checks before it starts anything, with its exit status.
  topo::Topology topology;  // as the Application deploys it (--ui draws it)
  try {
    topology = topo::parse_topology_file(options.topology_path);
    if (!options.hosts.empty()) apply_hosts_option(topology, options.hosts);
    check_loadable(topology);
    if (topology.hosts.empty() && options.launch.launcher.empty()) Graph::check_embedded_memory(topology);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return kExitBadTopology;
  }
  std::shared_ptr<tls::TlsContext> tls = client_tls(options.control);
  if (!tls) return kExitHostUnavailable;

  std::optional<Application> app;
  try {
    app.emplace(Application::open(options.topology_path, application_options(options)));
  } catch (const std::exception& e) {
    std::cerr << "sluice: " << e.what() << "\n";
    return kExitBadTopology;
  }
  std::unique_ptr<ServeServer> server;
  try {
    server = std::make_unique<ServeServer>(*app, *listen, std::move(tls),
                                           options.limits);
  } catch (const std::exception& e) {
    std::cerr << "sluice: " << e.what() << " (--listen)\n";
    return kExitUsage;
  }
  // SIGINT and SIGTERM stay blocked in the --ui's threads: the server takes them (Asio),
  // then the linger after it (sigtimedwait).
  std::unique_ptr<ServeUi> ui;
  try {
    ui = ServeUi::start(options, topology, *app);
  } catch (const std::exception& e) {
    std::cerr << "sluice: " << e.what() << "\n";
    return kExitUsage;
  }
  try {
    app->start();
  } catch (const std::exception& e) {
    std::cerr << "sluice: " << e.what() << "\n";
    // As sluice run: a host daemon that cannot be reached (or refuses the handshake) is 4.
    const std::shared_ptr<AppCore> core = core_of(*app);
    const std::optional<Failure> why = core ? core->start_failure() : std::nullopt;
    if (why && why->stage == "interrupted") return kExitInterrupted;
    return why && why->stage == "connect" ? kExitHostUnavailable : kExitRunFailed;
  }
  // From here the server takes them (Asio), in this thread; the others keep them blocked.
  block_signals(false);
  if (ui) ui->started();
  // What serve does not use, said once, before the line that says it serves: a newcomer's
  // topology usually came from sluice run. (The Application has said that work: is not run.)
  if (topology.client_stream() == nullptr) {
    daemon::info("no stream goes to: client, so units return no results to their submitters (only their "
                 "summary); add a stream {from: FILTER.PORT, to: client} to get them");
  }
  const std::string at = server->bound_address();
  daemon::info("serving '" + app->name() + "' at " + at + " (" + server->security() + ", " +
               (app->remote() ? "across hosts" : "embedded") + "): sluice submit " + at +
               " --work PAYLOAD appends a unit; sluice stop " + at + " or Ctrl-C ends it");
  const int status = server->run();
  block_signals(true);  // before the server stops taking them: a late Ctrl-C ends the linger
  server.reset();
  app.reset();
  daemon::info(status == kExitOk                ? "stopped"
               : status == kExitHostUnavailable ? "stopped (the host daemons are gone)"
                                                : "stopped (interrupted)");
  if (ui) ui->finish_and_linger(status, options.ui.linger);
  return status;
}

}  // namespace sluice::console
