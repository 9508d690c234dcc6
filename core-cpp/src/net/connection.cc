#include "net/silent_connection.h"
#include "net/connection.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "sync/waiter.h"
#include "text/shortened.h"

namespace sluice::net {

namespace {

// Bytes read at once into a connection's staging buffer: many small frames per read.
constexpr std::size_t kStagingSize = 64 * 1024;
// Payloads at least this big are read straight into their destination (after whatever
// part already sits in the staging buffer); after such a frame, the next header is read
// on its own so that the next big payload is not copied at all.
constexpr std::uint32_t kDirectReadMin = 4096;
// How long an accepted connection may take to authenticate.
constexpr auto kHandshakeTimeout = std::chrono::seconds(5);
// A connection is idle (send() writes inline) when nothing was written or sent inline on it
// for this long.
constexpr std::uint64_t kIdleNs = 10'000;

std::string seconds(std::uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(ns) / 1e9);
  return text;
}

}  // namespace

Connection::Connection(ConnectionEnv& env, Side side, int host)
    : env_(env),
      side_(side),
      host_(host),
      socket_(env.io),
      hello_timer_(env.io),
      staging_(kStagingSize) {}

bool Connection::send(const Frame& frame, detail::Slot* slot) {
  std::array<std::byte, kFrameHeaderSize> header;
  encode_frame(frame, header.data());
  return enqueue(header, slot != nullptr ? slot->data : nullptr, payload_size(frame), slot, true);
}

bool Connection::enqueue(const std::array<std::byte, kFrameHeaderSize>& header, const std::byte* payload,
                         std::uint32_t size, detail::Slot* slot, bool may_write_inline) {
  // Inline only on an idle connection (a ping-pong); a stream of frames goes through the
  // queue, where the I/O thread writes many frames per system call. A frame that finds a
  // write under way joins it without reading the clock (a clock read per frame was ~4 % of
  // a busy graph's CPU here); the I/O thread notes the time of each batch it writes.
  std::unique_lock<AdaptiveMutex> lock(mu_);
  if (closed_) return false;
  const int fd = fd_.load(std::memory_order_acquire);
  bool idle = false;
  if (!writing_ && fd >= 0 && may_write_inline) {
    const std::uint64_t now = Waiter::now_ns();
    idle = now - last_send_ns_.exchange(now, std::memory_order_relaxed) > kIdleNs;
  }
  if (!idle) {
    detail::Slot* copied = nullptr;
    try {
      copied = queued_.append(header.data(), payload, size, slot);
    } catch (...) {  // out of memory: the queue is as it was, and the block must not be lost
      lock.unlock();
      if (slot != nullptr) detail::release_slot(slot);
      throw;
    }
    const bool post = !writing_;
    writing_ = true;
    lock.unlock();
    if (copied != nullptr) detail::release_slot(copied);
    if (post) asio::post(env_.io, [self = shared_from_this()] { self->do_write(); });
    return true;
  }
  writing_ = true;
  inline_writing_ = true;
  lock.unlock();

  iovec iov[2];
  iov[0].iov_base = const_cast<std::byte*>(header.data());
  iov[0].iov_len = kFrameHeaderSize;
  iov[1].iov_base = const_cast<std::byte*>(payload);
  iov[1].iov_len = size;
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = size > 0 ? 2 : 1;
  const ssize_t n = ::sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  const std::size_t done = n > 0 ? static_cast<std::size_t>(n) : 0;
  detail::Slot* to_release = slot;  // unless the queue keeps it (the rest of a big payload)

  lock.lock();
  inline_writing_ = false;
  if (done < kFrameHeaderSize + size) {
    to_release = queued_.prepend_rest(header.data(), payload, size, slot, done);
  }
  const bool more = !queued_.empty() && !closed_;
  if (!more) writing_ = false;
  // Only close() waits for an inline write, and it sets closed_ (under mu_) before waiting.
  const bool closing = closed_;
  lock.unlock();
  if (closing) inline_done_.notify_all();
  if (to_release != nullptr) detail::release_slot(to_release);
  // The rest (and anything queued meanwhile) goes through the I/O thread, which also
  // notices a broken connection.
  if (more) asio::post(env_.io, [self = shared_from_this()] { self->do_write(); });
  return true;
}

template <typename Buffers, typename Handler>
void Connection::write_all(const Buffers& buffers, Handler&& handler) {
  if (tls_) {
    asio::async_write(*tls_, buffers, std::forward<Handler>(handler));
  } else {
    asio::async_write(socket_, buffers, std::forward<Handler>(handler));
  }
}

template <typename Buffer, typename Handler>
void Connection::read_some(const Buffer& buffer, Handler&& handler) {
  if (tls_) {
    tls_->async_read_some(buffer, std::forward<Handler>(handler));
  } else {
    socket_.async_read_some(buffer, std::forward<Handler>(handler));
  }
}

template <typename Buffer, typename Handler>
void Connection::read_exactly(const Buffer& buffer, Handler&& handler) {
  if (tls_) {
    asio::async_read(*tls_, buffer, std::forward<Handler>(handler));
  } else {
    asio::async_read(socket_, buffer, std::forward<Handler>(handler));
  }
}

void Connection::start(std::string remote) {
  remote_ = std::move(remote);
  last_heard_ns_ = started_ns_ = Waiter::now_ns();
  if (side_ == Side::kConnector) {
    peer_ = "data connection to " + env_.routes.host_label(host_) + " (" + remote_ + ")";
    if (env_.routes.encrypted(env_.routes.self(), host_)) {
      start_tls(asio::ssl::stream_base::client);
    } else {
      begin();
    }
    return;
  }
  peer_ = "connection from " + remote_;
  hello_timer_.expires_after(kHandshakeTimeout);
  hello_timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->authenticated_ || self->is_closed()) return;
    self->protocol_error("did not authenticate within 5 s");
  });
  if (env_.tls_server != nullptr) {
    sniff();
  } else {
    begin();
  }
}

void Connection::sniff() {
  socket_.async_receive(asio::buffer(&sniffed_, 1), tcp::socket::message_peek,
                        [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
                          if (self->is_closed()) return;
                          if (ec || n == 0) {
                            self->connection_lost(ec ? ec : asio::error::eof);
                            return;
                          }
                          if (self->sniffed_ == 0x16) {  // TLS handshake record
                            self->start_tls(asio::ssl::stream_base::server);
                          } else {
                            self->begin();
                          }
                        });
}

void Connection::start_tls(asio::ssl::stream_base::handshake_type side) {
  asio::ssl::context* context = side == asio::ssl::stream_base::client ? env_.tls_client : env_.tls_server;
  tls_ = std::make_unique<TlsStream>(socket_, *context);
  tls_->async_handshake(side, [self = shared_from_this()](const boost::system::error_code& ec) {
    if (self->is_closed()) return;
    if (ec) {
      self->protocol_error("the TLS handshake failed (" + ec.message() +
                           "): the peer does not hold this run's key, or does not encrypt this connection");
      return;
    }
    self->begin();
  });
}

void Connection::begin() {
  // Only a plain connection is written inline by other threads; TLS is the I/O thread's.
  if (!tls_) fd_.store(socket_.native_handle(), std::memory_order_release);
  if (side_ == Side::kConnector) {
    facts_.fingerprint = env_.routes.fingerprint();
    facts_.connector = env_.routes.self_name();
    facts_.connector_nonce = fresh_nonce();
    send_hello();
  }
  do_read();
}

void Connection::send_hello() {
  const std::string& name = env_.routes.self_name();
  const Nonce& nonce = side_ == Side::kConnector ? facts_.connector_nonce : facts_.acceptor_nonce;
  const HelloFrame hello{env_.routes.fingerprint(), static_cast<std::uint32_t>(name.size())};
  std::array<std::byte, kFrameHeaderSize> header;
  encode_frame(hello, header.data());
  std::string payload(reinterpret_cast<const char*>(nonce.data()), nonce.size());
  payload += name;
  enqueue(header, reinterpret_cast<const std::byte*>(payload.data()), hello.payload_size(), nullptr, false);
}

void Connection::send_auth() {
  const Proof proof = make_proof(env_.key, side_, facts_);
  std::array<std::byte, kFrameHeaderSize> header;
  encode_frame(AuthFrame{}, header.data());
  enqueue(header, reinterpret_cast<const std::byte*>(proof.data()), static_cast<std::uint32_t>(proof.size()), nullptr,
          false);
}

void Connection::close() {
  SendQueue dropped;
  {
    std::unique_lock<AdaptiveMutex> lock(mu_);
    if (closed_) return;
    closed_ = true;
    closed_flag_.store(true, std::memory_order_release);
    fd_.store(-1, std::memory_order_release);
    // A thread writing inline uses the descriptor: let it finish (it does not block).
    inline_done_.wait(lock, [&] { return !inline_writing_; });
    dropped.swap(queued_);
  }
  dropped.clear();
  boost::system::error_code ignored;
  hello_timer_.cancel();
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  on_close();
}

void Connection::say_bye() {
  if (authenticated_) send(ByeFrame{});
}

bool Connection::write_idle() {
  std::lock_guard<AdaptiveMutex> lock(mu_);
  return closed_ || (!writing_ && queued_.empty());
}

Connection::SendState Connection::send_state() {
  std::lock_guard<AdaptiveMutex> lock(mu_);
  return SendState{queued_.frames(), writing_, closed_};
}

void Connection::tick(std::uint64_t now_ns) {
  if (!authenticated_ || is_closed() || bye_seen_) return;
  const auto limit = static_cast<std::uint64_t>(std::chrono::nanoseconds(env_.silence_limit).count());
  const auto interval = static_cast<std::uint64_t>(std::chrono::nanoseconds(env_.ping_interval).count());
  if (now_ns - last_heard_ns_ >= limit) {
    const std::string other = env_.routes.host_label(host_);
    const std::string self = env_.routes.host_label(env_.routes.self());
    lost(std::string(kNothingArrived) + other + " on this data connection for " +
         seconds(now_ns - last_heard_ns_) + ", although both ends send a heartbeat every " + seconds(interval) +
         ": the network between " + self + " and " + other +
         " drops the data connection (a firewall rule on the data ports, a broken route, or heavy packet loss, at which "
         "TCP waits seconds between retries), or the app daemon of " +
         other + " is frozen (stopped or hung: its host daemon then names it within 4 s)");
    return;
  }
  if (now_ns - last_send_ns_.load(std::memory_order_relaxed) >= interval) {
    // Stamped here too: a ping that joins a write under way does not stamp it, and a write
    // stuck for longer than the interval must not get a ping every tick.
    last_send_ns_.store(now_ns, std::memory_order_relaxed);
    send(PingFrame{});
  }
}

// ---- writing (I/O thread) ----

void Connection::do_write() {
  {
    std::lock_guard<AdaptiveMutex> lock(mu_);
    if (closed_ || queued_.empty()) {
      writing_ = false;
      return;
    }
    batch_.swap(queued_);  // batch_ is empty: on_write cleared it
  }
  last_send_ns_.store(Waiter::now_ns(), std::memory_order_relaxed);
  batch_.gather(&buffers_);
  write_all(buffers_, [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
    self->on_write(ec);
  });
}

void Connection::on_write(const boost::system::error_code& ec) {
  batch_.clear();
  if (ec) {
    {
      std::lock_guard<AdaptiveMutex> lock(mu_);
      writing_ = false;
    }
    if (ec != asio::error::operation_aborted) connection_lost(ec);
    return;
  }
  do_write();
}

// ---- reading (I/O thread) ----

void Connection::do_read() {
  if (is_closed()) return;
  if (begin_ > 0) {
    std::memmove(staging_.data(), staging_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  auto handler = [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
    self->on_read(ec, n);
  };
  if (exact_header_ && state_ == State::kHeader && end_ < kFrameHeaderSize) {
    // After a big payload: read just the next header, so that its payload lands directly.
    read_exactly(asio::buffer(staging_.data() + end_, kFrameHeaderSize - end_), handler);
  } else {
    read_some(asio::buffer(staging_.data() + end_, staging_.size() - end_), handler);
  }
}

void Connection::on_read(const boost::system::error_code& ec, std::size_t n) {
  if (ec) {
    if (ec != asio::error::operation_aborted) connection_lost(ec);
    return;
  }
  last_heard_ns_ = Waiter::now_ns();
  end_ += n;
  process();
}

void Connection::read_direct() {
  read_some(asio::buffer(payload_dest_ + got_, payload_size_ - got_),
            [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
              self->on_direct_payload(ec, n);
            });
}

void Connection::on_direct_payload(const boost::system::error_code& ec, std::size_t n) {
  if (ec) {
    if (ec != asio::error::operation_aborted) connection_lost(ec);
    return;
  }
  // Each piece counts as heard: a large payload on a slow link may take longer than the
  // silence limit, and no ping can pass it on the wire.
  last_heard_ns_ = Waiter::now_ns();
  got_ += static_cast<std::uint32_t>(n);
  if (got_ < payload_size_) return read_direct();
  if (!finish_payload()) return;
  process();
}

void Connection::process() {
  for (;;) {
    if (is_closed()) return;
    if (state_ == State::kHeader) {
      if (end_ - begin_ < kFrameHeaderSize) break;
      Frame frame;
      std::string error;
      if (!env_.decoder.decode(staging_.data() + begin_, &frame, &error)) {
        protocol_error(error);
        return;
      }
      begin_ += kFrameHeaderSize;
      if (!on_header(frame)) return;
      continue;
    }
    // kPayload
    const std::size_t take = std::min<std::size_t>(end_ - begin_, payload_size_ - got_);
    std::memcpy(payload_dest_ + got_, staging_.data() + begin_, take);
    begin_ += take;
    got_ += static_cast<std::uint32_t>(take);
    if (got_ == payload_size_) {
      if (!finish_payload()) return;
      continue;
    }
    begin_ = end_ = 0;
    const std::uint32_t rest = payload_size_ - got_;
    if (rest >= kDirectReadMin) return read_direct();
    break;
  }
  do_read();
}

void Connection::expect_payload(std::byte* dest, std::uint32_t size) {
  payload_dest_ = dest;
  payload_size_ = size;
  got_ = 0;
  state_ = State::kPayload;
}

bool Connection::finish_payload() {
  state_ = State::kHeader;
  exact_header_ = payload_size_ >= kDirectReadMin;
  if (handshake_ == Handshake::kDone) return on_payload();
  return handshake_ == Handshake::kAwaitHello ? on_hello() : on_auth();
}

bool Connection::on_header(const Frame& frame) {
  const FrameKind kind = kind_of(frame);
  if (handshake_ != Handshake::kDone) {
    const FrameKind want = handshake_ == Handshake::kAwaitHello ? FrameKind::kHello : FrameKind::kAuth;
    if (kind != want) {
      return protocol_error(std::string("expected ") + frame_kind_name(want) + ", got " + frame_kind_name(kind));
    }
    current_ = frame;
    expect_payload(handshake_payload_.data(), payload_size(frame));
    return true;
  }
  if (bye_seen_) return protocol_error(std::string(frame_kind_name(kind)) + " after BYE");
  switch (kind) {
    case FrameKind::kHello:
    case FrameKind::kAuth:
      return protocol_error(std::string("a second ") + frame_kind_name(kind));
    case FrameKind::kPing:
      return true;
    case FrameKind::kBye:
      bye_seen_ = true;
      return true;
    default:
      return on_frame(frame);
  }
}

bool Connection::on_hello() {
  const auto& hello = std::get<HelloFrame>(current_);
  const std::string name(reinterpret_cast<const char*>(handshake_payload_.data()) + kNonceSize, hello.name_size);
  Nonce nonce;
  std::memcpy(nonce.data(), handshake_payload_.data(), kNonceSize);
  if (hello.fingerprint != env_.routes.fingerprint()) {
    return protocol_error("HELLO from '" + name + "' for a different application or placement (topology "
                          "fingerprint differs); every host must run the same topology, and the same sluice version (which "
                          "fills in what the topology leaves out, such as a stream's depth)");
  }
  if (side_ == Side::kConnector) {
    if (env_.routes.host_index(name) != host_) {
      return protocol_error("answered as host '" + name + "'; check the address given for " +
                            env_.routes.host_label(host_));
    }
    facts_.acceptor = name;
    facts_.acceptor_nonce = nonce;
    handshake_ = Handshake::kAwaitAuth;
    return true;
  }
  const int host = env_.routes.host_index(name);
  if (host < 0) return protocol_error("HELLO from unknown host '" + text::shortened(name, 64) + "'");  // a stranger's bytes: one line
  if (host == env_.routes.self() || !env_.routes.hears_from(host)) {
    return protocol_error("HELLO from host '" + name + "', which sends no stream to this host");
  }
  if (env_.routes.encrypted(host, env_.routes.self()) != (tls_ != nullptr)) {
    return protocol_error(tls_ ? "HELLO over TLS from host '" + name + "', whose streams to this host are not encrypted"
                               : "HELLO in clear from host '" + name +
                                     "', whose streams to this host must be encrypted (encrypt: true or --encrypt)");
  }
  host_ = host;
  peer_ = "connection from " + remote_ + " claiming to be " + env_.routes.host_label(host);
  facts_.fingerprint = hello.fingerprint;
  facts_.connector = name;
  facts_.connector_nonce = nonce;
  facts_.acceptor = env_.routes.self_name();
  facts_.acceptor_nonce = fresh_nonce();
  send_hello();
  send_auth();
  handshake_ = Handshake::kAwaitAuth;
  return true;
}

bool Connection::on_auth() {
  const Side peer_side = side_ == Side::kConnector ? Side::kAcceptor : Side::kConnector;
  if (!check_proof(env_.key, peer_side, facts_, handshake_payload_.data())) {
    if (side_ == Side::kConnector) {
      return protocol_error(env_.routes.host_label(host_) + " at " + remote_ +
                            " could not prove that it knows this run's key: it is not the app daemon "
                            "the console launched there");
    }
    return protocol_error("failed to prove that it knows this run's key (a stranger, or a host of another run)");
  }
  if (side_ == Side::kConnector) send_auth();
  handshake_ = Handshake::kDone;
  authenticated_ = true;
  hello_timer_.cancel();
  peer_ = side_ == Side::kConnector ? "data connection to " + env_.routes.host_label(host_) + " (" + remote_ + ")"
                                    : "data connection from " + env_.routes.host_label(host_) + " (" + remote_ + ")";
  return on_authenticated();
}

bool Connection::protocol_error(const std::string& what) {
  if (is_closed()) return false;
  if (authenticated_) {
    env_.events.link_failed(peer_ + ": protocol violation: " + what + "; connection closed");
  } else if (side_ == Side::kConnector) {
    env_.events.connect_problem(host_, what);
  } else {
    env_.events.stranger_refused(peer_ + ": " + what + "; connection closed");
  }
  close();
  return false;
}

void Connection::lost(const std::string& why) {
  if (is_closed()) return;
  env_.events.link_failed(peer_ + ": " + why + "; connection closed");
  close();
}

void Connection::connection_lost(const boost::system::error_code& ec) {
  if (is_closed()) return;
  if (env_.events.stopping() || bye_seen_) {
    close();
    return;
  }
  const bool eof = ec == asio::error::eof;
  if (!authenticated_) {
    if (side_ == Side::kConnector) {
      env_.events.connect_problem(host_, "closed during the handshake (" + ec.message() +
                                             "): the peer refused this host's proof of the run key, or had "
                                             "no room for this connection among others that do not authenticate "
                                             "(a flood of them; tried again every 250 ms); its log says which");
    } else {
      env_.events.stranger_refused(peer_ + ": closed before authenticating (" + ec.message() + ")");
    }
  } else {
    env_.events.link_failed(peer_ + " lost: " +
                            (eof ? std::string("the peer closed it (its process ended or was killed)") : ec.message()));
  }
  close();
}

}  // namespace sluice::net
