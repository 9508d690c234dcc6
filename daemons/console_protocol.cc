#include "daemons/console_protocol.h"

#include <algorithm>
#include <optional>
#include <string>

namespace sluice::sluiced {

using control::Envelope;

const ConsoleProtocol::Wording ConsoleProtocol::kWording = {
    "console", "this daemon", "this daemon", "run a console and a sluiced of the same sluice version"};

namespace {
// The host name a launch gives becomes part of every log line of the app daemon
// ("sluice-appd(b)[pid]"): a newline in it started a forged line in the daemon's log.
std::optional<std::string> host_name_problem(const std::string& host) {
  const bool control_char =
      std::any_of(host.begin(), host.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
  if (!control_char && host.size() <= 255) return std::nullopt;
  return "launch refused: its host name (" + std::to_string(host.size()) + " bytes) has control characters or is "
         "over 255 bytes; a console names hosts as the topology's hosts: does";
}
}  // namespace

void ConsoleProtocol::on_message(const Envelope& m) {
  switch (m.body_case()) {
    case Envelope::kHeartbeat:
      return;
    case Envelope::kLaunch:
      if (!launched_.empty()) {
        return send_error("this connection already launched application '" + launched_ + "'");
      }
      if (auto problem = host_name_problem(m.launch().host())) return send_error(*problem);
      if (auto problem = handler_.launch(m)) return send_error(*problem);
      launched_ = m.launch().application_id().empty() ? "(unnamed)" : m.launch().application_id();
      return;
    case Envelope::kAbort:
      if (handler_.app_running()) handler_.abort(m.abort().reason());
      return;
    case Envelope::kShutdown:
      if (handler_.app_running()) handler_.shutdown(m);
      return;
    case Envelope::kWiring:
    case Envelope::kStartUnit:
      if (!handler_.app_running()) {
        return send_error(std::string(control::kind(m)) + " but no application is running here");
      }
      return handler_.relay(m);
    default:
      return close(std::string("unexpected ") + control::kind(m) + " from a console");
  }
}

}  // namespace sluice::sluiced
