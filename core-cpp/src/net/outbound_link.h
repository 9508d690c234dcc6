// OutboundLink: this host's connection to one host that runs consumer copies of streams
// this host produces. Producer copies send DATA and END_OF_WORK frames on it (through
// their RemoteEndpoints); it reads the CREDIT frames the receiving host returns and
// hands them to the endpoint they are for.
//
// Thread safety: as Connection (send from any thread; the rest on the I/O thread).
#ifndef SLUICE_NET_OUTBOUND_LINK_H_
#define SLUICE_NET_OUTBOUND_LINK_H_

#include <functional>
#include <memory>
#include <vector>

#include "net/connection.h"
#include "net/remote_endpoint.h"

namespace sluice::net {

class OutboundLink final : public Connection {
 public:
  // `endpoints`: [stream][consumer copy], the plane's; the entries for copies on `host`
  // exist before the link is authenticated. `up` is called (I/O thread) once the
  // handshake succeeded.
  OutboundLink(ConnectionEnv& env, int host,
               const std::vector<std::vector<std::unique_ptr<RemoteEndpoint>>>& endpoints,
               std::function<void(int host)> up)
      : Connection(env, Side::kConnector, host), endpoints_(endpoints), up_(std::move(up)) {}

 private:
  bool on_frame(const Frame& frame) override;
  bool on_payload() override { return true; }  // CREDIT frames carry none
  bool on_authenticated() override {
    up_(host());
    return true;
  }

  const std::vector<std::vector<std::unique_ptr<RemoteEndpoint>>>& endpoints_;
  const std::function<void(int host)> up_;
};

}  // namespace sluice::net

#endif  // SLUICE_NET_OUTBOUND_LINK_H_
