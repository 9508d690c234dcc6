#include "net/outbound_link.h"

#include <string>

namespace sluice::net {

bool OutboundLink::on_frame(const Frame& frame) {
  const auto* credit = std::get_if<CreditFrame>(&frame);
  if (credit == nullptr) {
    return protocol_error(std::string(frame_kind_name(kind_of(frame))) +
                          " on a connection that carries data away from this host");
  }
  if (credit->stream >= endpoints_.size() || credit->consumer >= endpoints_[credit->stream].size() ||
      endpoints_[credit->stream][credit->consumer] == nullptr ||
      env_.routes.consumer_host(credit->stream, credit->consumer) != host()) {
    return protocol_error("CREDIT for stream " + std::to_string(credit->stream) + " consumer copy " +
                          std::to_string(credit->consumer) + ", which this host does not send to on that host");
  }
  RemoteEndpoint& endpoint = *endpoints_[credit->stream][credit->consumer];
  if (!endpoint.grant(credit->credits)) {
    return protocol_error("CREDIT beyond the window of " + std::to_string(endpoint.window()) + " on stream " +
                          std::to_string(credit->stream));
  }
  return true;
}

}  // namespace sluice::net
