// ServeClient: the connection of `sluice submit` and `sluice stop` to `sluice serve`: TCP,
// TLS 1.3 and the hello as a console's connection to sluiced (host_client.h's
// open_control: the token's PSK, or certificates); then control messages both ways
// (docs/protocol.md, "Serving units of work"), with a thread of its own that sends a
// heartbeat every 500 ms, so serve knows the client is still there while it waits.
//
// Thread safety: connect() and receive() from one thread; send() and shutdown() from any.
#ifndef SLUICE_CONSOLE_SERVE_CLIENT_H_
#define SLUICE_CONSOLE_SERVE_CLIENT_H_

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "console/host_client.h"
#include "control/codec.h"
#include "control/tls_channel.h"

namespace sluice::console {

class ServeClient {
 public:
  explicit ServeClient(std::string address) : address_(std::move(address)) {}
  // Stops the heartbeats and closes the connection.
  ~ServeClient();
  ServeClient(const ServeClient&) = delete;
  ServeClient& operator=(const ServeClient&) = delete;

  // Connects, runs the TLS handshake and says hello, within `timeout`. Returns why it
  // failed ("cannot connect: Connection refused", "refused the connection: the TLS
  // handshake failed because the tokens differ; ..."), or nullopt when serve opened the
  // session. Then starts the heartbeats.
  std::optional<std::string> connect(const Credentials& credentials, std::chrono::milliseconds timeout);

  enum class Status { kMessage, kClosed, kError, kSilent };
  // The next message that is not a heartbeat. kClosed: serve closed the connection (or
  // shutdown() was called); kError: error() says what broke; kSilent: nothing from serve
  // (not even a heartbeat) for 3 s.
  Status receive(control::Envelope* out);
  // Sends one message. Returns false when the connection is gone.
  bool send(const control::Envelope& message);
  // A blocked receive() returns kClosed; serve sees the connection close.
  void shutdown();
  // The last receive side error, as a sentence (TLS failures explained).
  std::string error() const;

  const std::string& address() const { return address_; }

 private:
  void beat();  // the heartbeat thread

  const std::string address_;
  Credentials credentials_;
  std::unique_ptr<control::TlsChannel> channel_;
  std::thread heartbeats_;
  std::mutex mu_;  // guards stop_
  std::condition_variable wake_;
  bool stop_ = false;
};

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_SERVE_CLIENT_H_
