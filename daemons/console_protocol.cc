#include "daemons/console_protocol.h"

namespace sluice::sluiced {

using control::Envelope;

const ConsoleProtocol::Wording ConsoleProtocol::kWording = {
    "console", "this daemon", "this daemon", "run a console and a sluiced of the same sluice version"};

void ConsoleProtocol::on_message(const Envelope& m) {
  switch (m.body_case()) {
    case Envelope::kHeartbeat:
      return;
    case Envelope::kLaunch:
      if (!launched_.empty()) {
        return send_error("this connection already launched application '" + launched_ + "'");
      }
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
