#include "daemons/console_protocol.h"

namespace sluice::sluiced {

using control::Envelope;

void ConsoleProtocol::feed(const void* data, std::size_t size) {
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

std::string ConsoleProtocol::end_of_input() const {
  if (decoder_.buffered() > 0) {
    return "connection closed in the middle of a frame (" + std::to_string(decoder_.buffered()) + " bytes)";
  }
  return state_ == State::kHello ? "connection closed by the console before its hello"
                                 : "connection closed by the console";
}

void ConsoleProtocol::close(const std::string& why, bool after_reply) {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  session_.close(why, after_reply);
}

void ConsoleProtocol::send_error(const std::string& message) {
  Envelope e;
  e.mutable_error()->set_message(message);
  session_.send(e);
}

void ConsoleProtocol::handle(const Envelope& m) {
  if (state_ == State::kHello) return on_hello(m);
  session_.heard();
  on_command(m);
}

void ConsoleProtocol::on_hello(const Envelope& m) {
  if (!m.has_hello()) return close(std::string("expected hello, got ") + control::kind(m));
  if (m.hello().protocol_version() != control::kProtocolVersion) {
    const std::string daemon = std::to_string(control::kProtocolVersion);
    Envelope r;
    r.mutable_auth_result()->set_ok(false);
    r.mutable_auth_result()->set_message("protocol version mismatch: the console speaks version " +
                                         std::to_string(m.hello().protocol_version()) + ", this daemon " + daemon +
                                         "; run a console and a sluiced of the same sluice version");
    session_.send(r);
    return close("protocol version " + std::to_string(m.hello().protocol_version()) + ", this daemon speaks " + daemon,
                 true);
  }
  state_ = State::kOpen;
  decoder_.set_max_frame(control::kMaxFrame);
  session_.opened(m.hello().client());
}

void ConsoleProtocol::on_command(const Envelope& m) {
  switch (m.body_case()) {
    case Envelope::kHeartbeat:
      return;
    case Envelope::kLaunch:
      if (!launched_.empty()) {
        return send_error("this connection already launched application '" + launched_ + "'");
      }
      if (auto problem = session_.launch(m)) return send_error(*problem);
      launched_ = m.launch().application_id().empty() ? "(unnamed)" : m.launch().application_id();
      return;
    case Envelope::kAbort:
      if (session_.app_running()) session_.abort(m.abort().reason());
      return;
    case Envelope::kShutdown:
      if (session_.app_running()) session_.shutdown(m);
      return;
    case Envelope::kWiring:
    case Envelope::kStartUnit:
      if (!session_.app_running()) {
        return send_error(std::string(control::kind(m)) + " but no application is running here");
      }
      return session_.relay(m);
    default:
      return close(std::string("unexpected ") + control::kind(m) + " from a console");
  }
}

}  // namespace sluice::sluiced
