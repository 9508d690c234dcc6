#include "console/serve_protocol.h"

namespace sluice::console {

using control::Envelope;

const ServeProtocol::Wording ServeProtocol::kWording = {
    "client", "this sluice serve", "this server", "run sluice submit and sluice serve of the same sluice version"};

void ServeProtocol::on_message(const Envelope& m) {
  if (m.has_heartbeat()) return;
  if (requested_) {
    return close(std::string("unexpected ") + control::kind(m) + " after the request; one request per connection");
  }
  switch (m.body_case()) {
    case Envelope::kSubmit:
      requested_ = true;
      if (auto refusal = handler_.submit(m.submit().work())) {
        send_error(*refusal);
        return close("refused the unit: " + *refusal, true);
      }
      return;
    case Envelope::kStop:
      requested_ = true;
      return handler_.stop();
    default:
      return close(std::string("unexpected ") + control::kind(m) + " from a client; it may send submit or stop");
  }
}

}  // namespace sluice::console
