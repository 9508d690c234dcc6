// The console's side of a host daemon connection: connect, TLS 1.3 and the hello
// (open_control below, over control/client_opening.h: the token's PSK or certificates),
// then exchange control messages (control.proto) with a reader thread that turns
// everything the daemon says into events on a queue shared by all hosts.
//
// Thread safety: connect/start_reader/close from the console's main thread; send from any
// thread; last_heard is atomic.
#ifndef SLUICE_CONSOLE_HOST_CLIENT_H_
#define SLUICE_CONSOLE_HOST_CLIENT_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "control/client_opening.h"
#include "control/codec.h"
#include "control/tls_channel.h"

namespace sluice::console {

struct HostEvent {
  enum class Kind { kMessage, kClosed, kError };
  int host = 0;  // index into the console's host list
  Kind kind = Kind::kMessage;
  control::Envelope message;
  std::string error;
  // `error` is a whole sentence about the connection (a TLS failure: a record altered on
  // the way...), not just the cause of a lost connection.
  bool explained = false;
};

// How the console proves who it is (control/client_opening.h).
using Credentials = control::Credentials;

class EventQueue {
 public:
  void push(HostEvent event);
  // The next event, or nullopt after `timeout`.
  std::optional<HostEvent> pop(std::chrono::milliseconds timeout);

 private:
  std::mutex mu_;  // guards events_
  std::condition_variable ready_;
  std::deque<HostEvent> events_;
};

class HostClient {
 public:
  HostClient(std::string name, std::string address) : name_(std::move(name)), address_(std::move(address)) {}
  ~HostClient();
  HostClient(const HostClient&) = delete;
  HostClient& operator=(const HostClient&) = delete;

  // Connects, runs the TLS handshake and says hello, within `timeout`. Returns why it
  // failed ("cannot connect: Connection refused", "refused the connection: the TLS
  // handshake failed because the tokens differ; ..."), or nullopt when both sides proved
  // who they are and the daemon opened the session.
  std::optional<std::string> connect(const Credentials& credentials, std::chrono::milliseconds timeout);
  // Starts the reader thread: every message (and the end of the connection) becomes an
  // event tagged `index` on `queue`.
  void start_reader(int index, EventQueue& queue);
  bool send(const control::Envelope& message);
  // Closes the connection (the daemon then kills what this console launched there) and
  // joins the reader.
  void close();

  const std::string& name() const { return name_; }
  const std::string& address() const { return address_; }
  std::string label() const { return "host " + name_ + " (" + address_ + ")"; }
  std::chrono::steady_clock::time_point last_heard() const { return last_heard_.load(); }
  const std::string& daemon_hostname() const { return daemon_hostname_; }
  // The IP address the connection reached ("10.0.0.5", "::1"), known after connect().
  const std::string& peer_ip() const { return peer_ip_; }
  // This end's IP on that connection: where the host can reach this machine.
  const std::string& local_ip() const { return local_ip_; }

 private:
  std::string name_;
  std::string address_;
  std::string daemon_hostname_;
  std::string peer_ip_;
  std::string local_ip_;
  Credentials credentials_;
  std::unique_ptr<control::TlsChannel> channel_;
  std::thread reader_;
  std::atomic<std::chrono::steady_clock::time_point> last_heard_{std::chrono::steady_clock::now()};
};

// A TCP socket connected to `address` ("host:port") within `deadline`: non-blocking, with
// TCP_NODELAY; the caller owns it. -1 with `*error` set ("cannot connect: Connection
// refused") when it cannot be had.
int connect_tcp(const std::string& address, std::chrono::steady_clock::time_point deadline, std::string* error);

// Opens a control connection to `address` ("host:port") before `deadline`: TCP
// (connect_tcp), then TLS and the hello as `client` (control/client_opening.h). A server
// that closes the connection without a word before it answered the hello (its caps on
// connections authenticating at once are full: control/tls_server.h) is tried again until
// `deadline`, with jittered pauses. Returns why it failed, or nullopt with `*channel` the
// open channel and `*answer` (unless null) the server's auth_result.
std::optional<std::string> open_control(const std::string& address, const Credentials& credentials,
                                        const std::string& client, const control::ServerNames& names,
                                        std::chrono::steady_clock::time_point deadline,
                                        std::unique_ptr<control::TlsChannel>* channel, control::AuthResult* answer);

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_HOST_CLIENT_H_
