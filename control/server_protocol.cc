#include "control/server_protocol.h"

namespace sluice::control {

void ServerProtocol::feed(const void* data, std::size_t size) {
  if (state_ == State::kClosed) return;
  decoder_.feed(data, size);
  Envelope message;
  while (state_ != State::kClosed) {
    switch (decoder_.next(&message)) {
      case FrameDecoder::Status::kNeedMore:
        return;
      case FrameDecoder::Status::kError:
        if (decoder_.busy()) {  // nothing wrong with the peer: it hears why, and may retry
          send_error(decoder_.error());
          return close(decoder_.error(), true);
        }
        return close(decoder_.error() + (state_ == State::kHello ? " (before the hello)" : ""));
      case FrameDecoder::Status::kMessage:
        if (state_ == State::kHello) {
          on_hello(message);
        } else {
          session_.heard();
          on_message(message);
        }
        break;
    }
  }
}

std::string ServerProtocol::end_of_input() const {
  if (decoder_.buffered() > 0) {
    return "connection closed in the middle of a frame (" + std::to_string(decoder_.buffered()) + " bytes)";
  }
  const std::string closed = std::string("connection closed by the ") + wording_.peer;
  if (state_ == State::kHello) return closed + " before its hello";
  return state_ == State::kOpen ? closed + owed() : closed;
}

void ServerProtocol::close(const std::string& why, bool after_reply) {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  session_.close(why, after_reply);
}

void ServerProtocol::send_error(const std::string& message) {
  Envelope e;
  e.mutable_error()->set_message(message);
  session_.send(e);
}

void ServerProtocol::on_hello(const Envelope& m) {
  if (!m.has_hello()) return close(std::string("expected hello, got ") + kind(m));
  if (m.hello().protocol_version() != kProtocolVersion) {
    const std::string theirs = std::to_string(m.hello().protocol_version());
    const std::string ours = std::to_string(kProtocolVersion);
    Envelope r;
    r.mutable_auth_result()->set_ok(false);
    r.mutable_auth_result()->set_message(std::string("protocol version mismatch: the ") + wording_.peer +
                                         " speaks version " + theirs + ", " + wording_.server + " " + ours + "; " +
                                         wording_.advice);
    session_.send(r);
    return close("protocol version " + theirs + ", " + wording_.speaker + " speaks " + ours, true);
  }
  state_ = State::kOpen;
  decoder_.set_max_frame(kMaxFrame);
  decoder_.share_large_frame_budget();
  session_.opened(m.hello().client());
}

}  // namespace sluice::control
