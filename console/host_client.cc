#include "console/host_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <thread>

#include "text/address.h"
#include "text/shortened.h"


namespace sluice::console {

using Clock = std::chrono::steady_clock;

namespace {
constexpr control::ServerNames kDaemon = {"the daemon", "a sluiced", ""};
}  // namespace

void EventQueue::push(HostEvent event) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(std::move(event));
  }
  ready_.notify_one();
}

std::optional<HostEvent> EventQueue::pop(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!ready_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return std::nullopt;
  HostEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

int connect_tcp(const std::string& address, Clock::time_point deadline, std::string* error) {
  std::string problem;
  const std::optional<text::HostPort> where = text::parse_host_port(address, text::AddressRules{}, &problem);
  if (!where) {
    *error = problem;
    return -1;
  }
  const std::string host = where->host;
  const std::string port = std::to_string(where->port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    *error = std::string("cannot resolve: ") + gai_strerror(rc);
    return -1;
  }
  int fd = -1;
  *error = "no address";
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) continue;
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      pollfd pfd{fd, POLLOUT, 0};
      do {
        left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        rc = ::poll(&pfd, 1, left > 0 ? static_cast<int>(left) : 0);
      } while (rc < 0 && errno == EINTR);
      if (rc < 0) {
        *error = std::string("cannot connect: poll: ") + std::strerror(errno);
        ::close(fd);
        fd = -1;
        continue;
      }
      if (rc == 0) {
        *error = "cannot connect: no answer within the timeout";
        ::close(fd);
        fd = -1;
        continue;
      }
      int so_error = 0;
      socklen_t len = sizeof so_error;
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
      errno = so_error;
      rc = so_error == 0 ? 0 : -1;
    }
    if (rc == 0) break;
    *error = std::string("cannot connect: ") + std::strerror(errno);
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(res);
  if (fd < 0) return -1;
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

HostClient::~HostClient() { close(); }

std::optional<std::string> open_control(const std::string& address, const Credentials& credentials,
                                        const std::string& client, const control::ServerNames& names,
                                        Clock::time_point deadline, std::unique_ptr<control::TlsChannel>* channel,
                                        control::AuthResult* answer) {
  // A server whose caps on connections authenticating at once are full (a burst of
  // clients from this address, say) closes a new connection in its TLS handshake, or one
  // it took before the hello, with no word: tried again until `deadline`, after 50 ms
  // doubling to 400 ms, each pause drawn between half and all of that so that a burst of
  // clients refused together does not come back together (an outside review: 50 `sluice
  // submit` at once lost one in a hundred after 2 s of tries in step).
  control::AuthResult ignored;
  std::minstd_rand jitter(static_cast<unsigned>(std::random_device{}()));
  for (auto pause = std::chrono::milliseconds(50);; pause = std::min(pause * 2, std::chrono::milliseconds(400))) {
    std::string why;
    const int fd = connect_tcp(address, deadline, &why);
    if (fd < 0) return why + (why.find("refused") != std::string::npos ? names.not_listening : "");
    auto opening = std::make_unique<control::TlsChannel>(fd, credentials.tls);
    const std::string host = text::parse_host_port(address, text::AddressRules{}, nullptr)->host;  // connect_tcp parsed it
    bool busy = false;
    std::optional<std::string> failed = control::open_client(*opening, host, client, credentials, names, deadline,
                                                             answer != nullptr ? answer : &ignored, &busy);
    if (!failed) {
      *channel = std::move(opening);
      return std::nullopt;
    }
    const auto wait = std::chrono::milliseconds(pause.count() / 2 + static_cast<long>(jitter() % (pause.count() / 2 + 1)));
    if (!busy || Clock::now() + wait >= deadline) return failed;
    std::this_thread::sleep_for(wait);
  }
}

std::optional<std::string> HostClient::connect(const Credentials& credentials, std::chrono::milliseconds timeout) {
  credentials_ = credentials;
  control::AuthResult answer;
  if (auto why = open_control(address_, credentials, "sluice console pid " + std::to_string(::getpid()), kDaemon,
                              Clock::now() + timeout, &channel_, &answer)) {
    return why;
  }
  // A sluice serve answers the same opening (same TLS, same token) and names itself so;
  // launching there would fail later, as a lost connection.
  if (answer.host() == control::kServeAuthHost) {
    channel_.reset();
    return "this address is a sluice serve (where units are submitted), not a host daemon: point it at the "
           "address sluiced was started with (--listen)";
  }
  auto ip_of = [](const sockaddr_storage& a) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a.ss_family == AF_INET) {
      ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&a)->sin_addr, text, sizeof text);
    } else if (a.ss_family == AF_INET6) {
      ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&a)->sin6_addr, text, sizeof text);
    }
    return std::string(text);
  };
  sockaddr_storage peer{};
  socklen_t peer_len = sizeof peer;
  if (::getpeername(channel_->fd(), reinterpret_cast<sockaddr*>(&peer), &peer_len) == 0) peer_ip_ = ip_of(peer);
  sockaddr_storage local{};
  socklen_t local_len = sizeof local;
  if (::getsockname(channel_->fd(), reinterpret_cast<sockaddr*>(&local), &local_len) == 0) local_ip_ = ip_of(local);
  daemon_hostname_ = text::shortened(answer.host(), 255);  // the daemon's choice: no control characters
  last_heard_ = Clock::now();
  return std::nullopt;
}

void HostClient::start_reader(int index, EventQueue& queue) {
  reader_ = std::thread([this, index, &queue] {
    for (;;) {
      HostEvent e;
      e.host = index;
      auto status = channel_->receive(&e.message, std::chrono::milliseconds(-1));
      last_heard_ = Clock::now();
      if (status == control::TlsChannel::Status::kMessage) {
        if (e.message.has_heartbeat()) continue;
        queue.push(std::move(e));
        continue;
      }
      if (status == control::TlsChannel::Status::kTimeout) continue;
      e.kind = status == control::TlsChannel::Status::kClosed ? HostEvent::Kind::kClosed : HostEvent::Kind::kError;
      e.error = status == control::TlsChannel::Status::kClosed ? "the connection was closed" : control::channel_error(*channel_, credentials_, &e.explained);
      queue.push(std::move(e));
      return;
    }
  });
}

bool HostClient::send(const control::Envelope& message) { return channel_ && channel_->send(message); }

void HostClient::close() {
  if (channel_) channel_->shutdown();
  if (reader_.joinable()) reader_.join();
  channel_.reset();
}

}  // namespace sluice::console
