// sluiced: the host daemon. One per host, long-lived.
//
//   sluiced --listen ADDR:PORT (--token-file FILE | --cert FILE --key FILE --ca FILE)
//           [--appd PATH] [--verbose]
//
// Serves consoles over TLS 1.3 (control/tls.h; the control protocol, core-cpp/proto/
// control.proto, inside it). The TLS handshake authenticates both sides, with a key derived
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
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "control/auth.h"
#include "control/tls.h"
#include "daemons/host_daemon.h"
#include "daemons/log.h"
#include "sluice/error.h"
#include "sluice/version.h"

namespace dlog = sluice::daemon;

namespace {

std::string default_appd_path() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "sluice-appd";
  return (self.parent_path() / "sluice-appd").string();
}

int usage(const std::string& problem) {
  std::cerr << "sluiced: " << problem << "\n"
            << "usage: sluiced --listen ADDR:PORT (--token-file FILE | --cert FILE --key FILE --ca FILE)\n"
            << "               [--appd PATH] [--verbose]\n"
            << "       sluiced --version\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  dlog::log_name() = "sluiced";
  std::string listen = "127.0.0.1:7700";
  std::string token_file;
  sluice::control::TlsOptions tls;
  std::string appd = default_appd_path();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= argc) return std::nullopt;
      return std::string(argv[++i]);
    };
    if (arg == "--listen") {
      auto v = value();
      if (!v) return usage("--listen needs ADDR:PORT");
      listen = *v;
    } else if (arg == "--token-file") {
      auto v = value();
      if (!v) return usage("--token-file needs a file");
      token_file = *v;
    } else if (arg == "--cert" || arg == "--key" || arg == "--ca") {
      auto v = value();
      if (!v) return usage(arg + " needs a PEM file");
      (arg == "--cert" ? tls.cert_file : arg == "--key" ? tls.key_file : tls.ca_file) = *v;
    } else if (arg == "--appd") {
      auto v = value();
      if (!v) return usage("--appd needs a path");
      appd = *v;
    } else if (arg == "--verbose" || arg == "-v") {
      dlog::min_level() = dlog::Level::kDebug;
    } else if (arg == "--version") {
      std::cout << "sluiced " << SLUICE_VERSION << "\n";
      return 0;
    } else if (arg == "--help" || arg == "-h") {
      usage("the sluice host daemon");
      return 0;
    } else {
      return usage("unknown argument '" + arg + "'");
    }
  }
  const bool certificates = !tls.cert_file.empty() || !tls.key_file.empty() || !tls.ca_file.empty();
  if (certificates && (tls.cert_file.empty() || tls.key_file.empty() || tls.ca_file.empty())) {
    return usage("--cert, --key and --ca go together (this daemon's certificate, its key, the CA of the consoles)");
  }
  if (certificates && !token_file.empty()) {
    return usage("give --token-file (a shared token) or --cert/--key/--ca (certificates), not both");
  }
  if (!certificates && token_file.empty()) {
    return usage("--token-file is required (the shared secret consoles must prove they know), or --cert, --key and --ca");
  }
  ::signal(SIGPIPE, SIG_IGN);
  try {
    sluice::sluiced::Config config;
    config.tls = tls;
    if (!certificates) config.tls.token = sluice::control::read_token_file(token_file);
    config.appd_path = appd;
    if (::access(appd.c_str(), X_OK) != 0) {
      throw sluice::Error("app daemon '" + appd + "' is not executable; install sluice-appd next to sluiced or pass --appd PATH");
    }
    sluice::sluiced::HostDaemon daemon(listen, std::move(config));
    daemon.run();
  } catch (const std::exception& e) {
    dlog::error(e.what());
    return 1;
  }
  return 0;
}
