// InboundLink: a connection another host opened to send this host buffers for local
// consumer copies. It lands DATA and END_OF_WORK frames (net/landing.h) — payloads read
// straight into a buffer from the stream's pool, or parked (net/parking_lot.h) when the
// pool has none free, so that the connection never stops reading — and carries the
// CREDIT the landings return.
//
// Thread safety: as Connection (send from any thread; the rest on the I/O thread).
#ifndef SLUICE_NET_INBOUND_LINK_H_
#define SLUICE_NET_INBOUND_LINK_H_

#include <functional>
#include <memory>

#include "net/connection.h"
#include "net/receive_side.h"

namespace sluice::net {

class InboundLink final : public Connection {
 public:
  // `authenticated` is called (I/O thread) once the peer proved it knows the run key; it
  // registers the link with the plane and returns false (with a reason in *why) when the
  // plane refuses it (e.g. that host is connected already).
  using Admit = std::function<bool(const std::shared_ptr<InboundLink>& link, std::string* why)>;
  InboundLink(ConnectionEnv& env, ReceiveSide& side, Admit admit)
      : Connection(env, Side::kAcceptor, -1), side_(side), admit_(std::move(admit)) {}

 private:
  bool on_frame(const Frame& frame) override;
  bool on_payload() override;
  bool on_authenticated() override;
  void on_close() override;

  // The landing for a DATA or END_OF_WORK frame that passed every check, or null after a
  // protocol error (the connection is closed then).
  Landing* admit_frame(std::uint32_t stream, std::uint32_t producer, std::uint32_t consumer, FrameKind kind);

  ReceiveSide& side_;
  const Admit admit_;
  DataFrame data_;                 // the DATA frame whose payload is being read
  detail::Slot* slot_ = nullptr;   // its pooled buffer, unless it is parked
  std::uint64_t ticket_ = 0;       // when it is parked: its ticket in the stream's lot
};

}  // namespace sluice::net

#endif  // SLUICE_NET_INBOUND_LINK_H_
