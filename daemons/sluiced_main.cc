// sluiced: the host daemon. One per host, long-lived.
//
//   sluiced --listen ADDR:PORT (--token-file FILE | --cert FILE --key FILE --ca FILE)
//           [--appd PATH] [--ready-file PATH] [--metrics ADDR:PORT [--metrics-public]]
//           [--data-ports LO-HI] [--verbose] [--version]
//
// --data-ports: the ports its app daemons' data planes listen on; sluiced writes the range
// into each launch it passes on (the console's say does not count: the firewall is this
// host's).
//
// --ready-file: once listening, write "ADDR:PORT" (the port it chose when --listen said 0)
// to PATH, atomically (a temporary file beside it, then rename), so that whoever started it
// (the console's Slurm launcher) reads either nothing or the whole address.
//
// Serves consoles over TLS 1.3 (tls/tls.h; the control protocol, control/control.proto,
// inside it). The TLS handshake authenticates both sides, with a key derived
// from the shared token (TLS-PSK) or with certificates signed by one CA, before a console
// can do anything; then it may
// launch one application, for which sluiced starts one sluice-appd in its own process group,
// connected by a socketpair (fd 3 in the child). sluiced relays control messages between the
// console and that app daemon, heartbeats the console, and kills the app daemon's group when
// the console asks (abort), disappears (closed connection or 3 s without a heartbeat) or
// sends garbage, and when the app daemon itself stops heartbeating for 4 s after it
// started (hung). It reports how the app daemon ended (exit status or signal).
//
// The parts: HostDaemon (host_daemon.h) is the server; a ConsoleSession
// (console_session.h) is one console connection; an AppSupervisor (app_supervisor.h) is
// the app daemon it launched. This file reads the command line and the token file.
// (docs/operations.md: how to run it, the threat model, what each refusal means.)
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include "control/auth.h"
#include "tls/tls.h"
#include "daemons/host_daemon.h"
#include "daemons/log.h"
#include "os/replace_file.h"
#include "tls/trusted_file.h"
#include "http/listen_address.h"
#include "sluice/error.h"
#include "sluice/version.h"
#include "text/address.h"
#include "text/cli_options.h"
#include "text/port_range.h"

namespace dlog = sluice::daemon;

namespace {

// The whole file, or "" when it cannot be read.
std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string default_appd_path() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "sluice-appd";
  return (self.parent_path() / "sluice-appd").string();
}

}  // namespace

int main(int argc, char** argv) {
  dlog::set_name("sluiced");
  std::string listen = "127.0.0.1:7700";
  std::string token_file;
  sluice::tls::TlsOptions tls;
  std::string appd = default_appd_path();
  std::string ready_file;
  std::string metrics;
  bool metrics_public = false;
  bool verbose = false;

  CLI::App app{"sluiced: the sluice host daemon (docs/operations.md)"};
  app.set_version_flag("--version", std::string("sluiced ") + SLUICE_VERSION);
  sluice::text::AddressRules listen_rules;
  listen_rules.any_port = true;
  app.add_option("--listen", listen, "where consoles connect; port 0: any free port")
      ->type_name("ADDR:PORT")
      ->capture_default_str()
      ->check(sluice::text::address_check(listen_rules));
  app.add_option("--token-file", token_file, "the shared token consoles must prove they know")->type_name("FILE");
  app.add_option("--cert", tls.cert_file, "this daemon's certificate (PEM), with --key and --ca")->type_name("FILE");
  app.add_option("--key", tls.key_file, "the certificate's private key (PEM)")->type_name("FILE");
  app.add_option("--ca", tls.ca_file, "the CA that signs the consoles' certificates (PEM)")->type_name("FILE");
  app.add_option("--appd", appd, "the app daemon; default: sluice-appd next to sluiced")->type_name("PATH");
  app.add_option("--ready-file", ready_file, "once listening, write ADDR:PORT here (atomically)")->type_name("PATH");
  sluice::text::AddressRules metrics_rules = listen_rules;  // as http/listen_address.h reads it
  metrics_rules.bare_port_host = "127.0.0.1";
  metrics_rules.example = "127.0.0.1:9770";
  app.add_option("--metrics", metrics, "serve /metrics (Prometheus) here; loopback unless --metrics-public")
      ->type_name("ADDR:PORT")
      ->check(sluice::text::address_check(metrics_rules));
  app.add_flag("--metrics-public", metrics_public, "allow --metrics on an address that is not loopback");
  std::string data_ports;
  app.add_option("--data-ports", data_ports,
                 "the ports app daemons listen on for other hosts' data (a firewall's opening); default: any free port")
      ->type_name("LO-HI")
      ->check(sluice::text::port_range_check());
  app.add_flag("-v,--verbose", verbose, "debug lines too (every control message but heartbeats), its app daemons' too");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (verbose) dlog::set_level(dlog::Level::kDebug);
  const bool certificates = !tls.cert_file.empty() || !tls.key_file.empty() || !tls.ca_file.empty();
  auto usage = [](const std::string& problem) {
    std::cerr << "sluiced: " << problem << "\nRun with --help for more information.\n";
    return 2;
  };
  if (certificates && (tls.cert_file.empty() || tls.key_file.empty() || tls.ca_file.empty())) {
    return usage("--cert, --key and --ca go together (this daemon's certificate, its key, the CA of the consoles)");
  }
  if (certificates && !token_file.empty()) {
    return usage("give --token-file (a shared token) or --cert/--key/--ca (certificates), not both");
  }
  if (!certificates && token_file.empty()) {
    return usage("--token-file is required (the shared secret consoles must prove they know), or --cert, --key and --ca");
  }
  sluice::text::PortRange data_range;
  if (!data_ports.empty()) data_range = *sluice::text::parse_port_range(data_ports, nullptr);
  // A range that holds the daemon's own port could never give that port to an app daemon,
  // and the failures would blame other runs.
  struct OwnPort {
    const char* option;
    const std::string& address;
    const sluice::text::AddressRules& rules;
  };
  for (const OwnPort& own : {OwnPort{"--listen", listen, listen_rules}, OwnPort{"--metrics", metrics, metrics_rules}}) {
    const auto at = own.address.empty() ? std::nullopt : sluice::text::parse_host_port(own.address, own.rules, nullptr);
    if (at && data_range.contains(at->port)) {
      return usage("--data-ports " + data_range.text() + " holds " + own.option + "'s port " + std::to_string(at->port) +
                   ": an app daemon could never listen there; give the data ports a range of their own");
    }
  }
  if (!metrics.empty()) {
    // A --metrics address it may not use is a bad command line (2), as the console's --ui.
    try {
      sluice::http::parse_listen_address(metrics, "--metrics", metrics_public, "--metrics-public");
    } catch (const std::exception& e) {
      return usage(e.what());
    }
  }
  ::signal(SIGPIPE, SIG_IGN);
  // A log reader that stops reading (a paused `| less`) must not stop the daemon: lines wait
  // (1 MiB), then are dropped and counted.
  sluice::logging::write_in_background();
  try {
    sluice::sluiced::Config config;
    config.tls = tls;
    if (!certificates) config.tls.token = sluice::control::read_token_file(token_file);
    config.appd_path = appd;
    config.metrics_listen = metrics;
    config.metrics_public = metrics_public;
    config.data_ports = data_range;
    if (::access(appd.c_str(), X_OK) != 0) {
      throw sluice::Error("app daemon '" + appd + "' is not executable; install sluice-appd next to sluiced or pass --appd PATH");
    }
    sluice::sluiced::HostDaemon daemon(listen, std::move(config));
    const std::string ready_line = daemon.bound_address() + "\n";
    if (!ready_file.empty()) {
      try {
        sluice::tls::check_output_path(ready_file, "ready file");
        sluice::os::replace_file(ready_file, ready_line, 0644);
      } catch (const std::exception& e) {
        throw sluice::Error(std::string("--ready-file: ") + e.what());
      }
    }
    daemon.run();
    // Stopped: the file no longer names a daemon that listens. Left alone when it names
    // another one now (a daemon started since with the same --ready-file).
    if (!ready_file.empty() && read_file(ready_file) == ready_line) ::unlink(ready_file.c_str());
  } catch (const std::exception& e) {
    dlog::error(e.what());
    return 1;
  }
  return 0;
}
