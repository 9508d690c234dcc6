#include "console/serve_protocol.h"

namespace sluice::console {

using control::Envelope;

void ServeProtocol::feed(const void* data, std::size_t size) {
  if (state_ == State::kClosed) return;
  decoder_.feed(data, size);
  Envelope message;
  while (state_ != State::kClosed) {
    switch (decoder_.next(&message)) {
      case control::FrameDecoder::Status::kNeedMore:
        return;
      case control::FrameDecoder::Status::kError:
        return close(decoder_.error() + (state_ == State::kHello ? " (before the hello)" : ""));
      case control::FrameDecoder::Status::kMessage:
        handle(message);
        break;
    }
  }
}

std::string ServeProtocol::end_of_input() const {
  if (decoder_.buffered() > 0) {
    return "connection closed in the middle of a frame (" + std::to_string(decoder_.buffered()) + " bytes)";
  }
  switch (state_) {
    case State::kHello: return "connection closed by the client before its hello";
    case State::kOpen: return "connection closed by the client before its request";
    default: return "connection closed by the client";
  }
}

void ServeProtocol::close(const std::string& why, bool after_reply) {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  session_.close(why, after_reply);
}

void ServeProtocol::handle(const Envelope& m) {
  if (state_ == State::kHello) return on_hello(m);
  session_.heard();
  if (m.has_heartbeat()) return;
  if (state_ == State::kRequested) {
    return close(std::string("unexpected ") + control::kind(m) + " after the request; one request per connection");
  }
  on_request(m);
}

void ServeProtocol::on_hello(const Envelope& m) {
  if (!m.has_hello()) return close(std::string("expected hello, got ") + control::kind(m));
  if (m.hello().protocol_version() != control::kProtocolVersion) {
    const std::string ours = std::to_string(control::kProtocolVersion);
    Envelope r;
    r.mutable_auth_result()->set_ok(false);
    r.mutable_auth_result()->set_message("protocol version mismatch: the client speaks version " +
                                         std::to_string(m.hello().protocol_version()) + ", this sluice serve " + ours +
                                         "; run sluice submit and sluice serve of the same sluice version");
    session_.send(r);
    return close("protocol version " + std::to_string(m.hello().protocol_version()) + ", this server speaks " + ours,
                 true);
  }
  state_ = State::kOpen;
  decoder_.set_max_frame(control::kMaxFrame);
  session_.opened(m.hello().client());
}

void ServeProtocol::on_request(const Envelope& m) {
  switch (m.body_case()) {
    case Envelope::kSubmit: {
      state_ = State::kRequested;
      if (auto refusal = session_.submit(m.submit().work())) {
        Envelope e;
        e.mutable_error()->set_message(*refusal);
        session_.send(e);
        return close("refused the unit: " + *refusal, true);
      }
      return;
    }
    case Envelope::kStop:
      state_ = State::kRequested;
      return session_.stop();
    default:
      return close(std::string("unexpected ") + control::kind(m) + " from a client; it may send submit or stop");
  }
}

}  // namespace sluice::console
