#include "net/link.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "buffer/buffer_pool.h"
#include "net/plane_state.h"
#include "stream/waiter.h"

namespace sluice::net {

namespace {

// Bytes read at once into a connection's staging buffer: many small frames per read.
constexpr std::size_t kStagingSize = 64 * 1024;
// Payloads at least this big are read straight into the pooled buffer (after whatever
// part already sits in the staging buffer); after such a frame, the next header is read
// on its own so that the next big payload is not copied at all.
constexpr std::uint32_t kDirectReadMin = 4096;
// Payloads up to this size are copied into the write batch; bigger ones are written
// straight from the pooled buffer (scatter/gather).
constexpr std::uint32_t kCoalesceMax = 2048;
// How long an inbound connection may take to say HELLO.
constexpr auto kHelloTimeout = std::chrono::seconds(5);
// When the stream's pool has no free buffer for a landing payload (buffers forwarded
// elsewhere), the connection pauses and looks again after this long.
constexpr auto kPoolRetry = std::chrono::microseconds(200);
// A link is idle (send() writes inline) when its previous frame was queued this long ago.
constexpr std::uint64_t kIdleNs = 10'000;

}  // namespace

Link::Link(DataPlaneState& plane, Role role, int host)
    : socket(plane.io), plane_(plane), role_(role), host_(host), timer_(plane.io), staging_(kStagingSize) {}

bool Link::send(const FrameHeader& h, detail::Slot* slot) {
  // Inline only on an idle link (a ping-pong); a stream of frames goes through the
  // queue, where the I/O thread writes many frames per syscall.
  const std::uint64_t now = Waiter::now_ns();
  const bool idle = now - last_send_ns_.exchange(now, std::memory_order_relaxed) > kIdleNs;
  std::unique_lock<std::mutex> lock(mu_);
  if (closed_) return false;
  const int fd = fd_.load(std::memory_order_acquire);
  if (writing_ || fd < 0 || !idle) {
    queue_.push_back(OutFrame{h, slot, 0});
    if (writing_) return true;
    writing_ = true;
    lock.unlock();
    asio::post(plane_.io, [self = shared_from_this()] { self->do_write(); });
    return true;
  }
  writing_ = true;
  inline_writing_ = true;
  lock.unlock();

  std::byte head[net::kHeaderSize];
  net::encode_header(h, head);
  iovec iov[2];
  iov[0].iov_base = head;
  iov[0].iov_len = net::kHeaderSize;
  iov[1].iov_base = const_cast<std::byte*>(payload_of(h, slot));
  iov[1].iov_len = h.size;
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = h.size > 0 ? 2 : 1;
  const ssize_t n = ::sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  const std::size_t done = n > 0 ? static_cast<std::size_t>(n) : 0;
  const bool whole = done == net::kHeaderSize + h.size;

  lock.lock();
  inline_writing_ = false;
  if (!whole) queue_.insert(queue_.begin(), OutFrame{h, slot, static_cast<std::uint32_t>(done)});
  const bool more = !queue_.empty() && !closed_;
  if (!more) writing_ = false;
  lock.unlock();
  inline_done_.notify_all();
  if (whole && slot != nullptr) detail::release_slot(slot);
  // The rest (and anything queued meanwhile) goes through the I/O thread, which also
  // notices a broken connection.
  if (more) asio::post(plane_.io, [self = shared_from_this()] { self->do_write(); });
  return true;
}

void Link::start_inbound() {
  fd_.store(socket.native_handle(), std::memory_order_release);
  peer_ = "connection from " + remote_;
  timer_.expires_after(kHelloTimeout);
  timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->hello_done_ || self->is_closed()) return;
    self->plane_.reject(self->remote_ + ": no HELLO within 5 s; closing the connection");
    self->close();
  });
  do_read();
}

void Link::start_outbound() {
  fd_.store(socket.native_handle(), std::memory_order_release);
  peer_ = "data connection to " + plane_.host_label(host_) + " (" + remote_ + ")";
  send_hello();
  do_read();
}

void Link::send_hello() {
  FrameHeader h;
  h.flags = net::kHello;
  h.key = plane_.fingerprint;
  h.size = static_cast<std::uint32_t>(plane_.hosts[static_cast<std::size_t>(plane_.self)].size());
  send(h, nullptr);
}

void Link::close() {
  std::vector<OutFrame> dropped;
  {
    std::unique_lock<std::mutex> lock(mu_);
    closed_ = true;
    closed_flag_.store(true, std::memory_order_release);
    fd_.store(-1, std::memory_order_release);
    // A thread writing inline uses the descriptor: let it finish (it does not block).
    inline_done_.wait(lock, [&] { return !inline_writing_; });
    dropped.swap(queue_);
  }
  for (const OutFrame& f : dropped) {
    if (f.slot != nullptr) detail::release_slot(f.slot);
  }
  boost::system::error_code ignored;
  timer_.cancel();
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
  if (cur_slot_ != nullptr) {
    detail::release_slot(cur_slot_);
    cur_slot_ = nullptr;
  }
  if (role_ == Role::kInbound && !hello_done_) {
    plane_.unidentified.erase(shared_from_this());
  }
}

void Link::say_bye() {
  FrameHeader h;
  h.flags = net::kBye;
  send(h, nullptr);
}

bool Link::write_idle() {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_ || (!writing_ && queue_.empty());
}

const std::byte* Link::payload_of(const FrameHeader& h, detail::Slot* slot) const {
  if (slot != nullptr) return slot->data;
  if (h.flags == net::kHello) {
    return reinterpret_cast<const std::byte*>(plane_.hosts[static_cast<std::size_t>(plane_.self)].data());
  }
  return nullptr;
}

void Link::do_write() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed_ || queue_.empty()) {
      writing_ = false;
      return;
    }
    batch_.swap(queue_);
  }
  std::size_t small = 0;
  for (const OutFrame& f : batch_) {
    if (f.h.flags == net::kHello || (f.slot != nullptr && f.h.size <= kCoalesceMax)) small += f.h.size;
  }
  const std::size_t need = batch_.size() * net::kHeaderSize + small;
  if (packed_.size() < need) packed_.resize(std::max(need, packed_.size() * 2));
  buffers_.clear();
  std::byte* base = packed_.data();
  std::size_t pos = 0;
  std::size_t run = 0;  // where the current contiguous run in packed_ starts
  for (OutFrame& f : batch_) {
    net::encode_header(f.h, base + pos);
    pos += net::kHeaderSize;
    if (f.h.flags == net::kHello) {
      const std::string& name = plane_.hosts[static_cast<std::size_t>(plane_.self)];
      std::memcpy(base + pos, name.data(), name.size());
      pos += name.size();
    } else if (f.slot != nullptr && f.h.size <= kCoalesceMax) {
      std::memcpy(base + pos, f.slot->data, f.h.size);
      pos += f.h.size;
      detail::release_slot(f.slot);  // copied: the buffer can go home now
      f.slot = nullptr;
    } else if (f.slot != nullptr) {
      buffers_.emplace_back(base + run, pos - run);
      buffers_.emplace_back(f.slot->data, f.h.size);
      run = pos;
    }
  }
  if (pos > run) buffers_.emplace_back(base + run, pos - run);
  // An inline send may have written the start of the first frame.
  for (std::size_t skip = batch_.front().skip; skip > 0;) {
    if (buffers_.front().size() <= skip) {
      skip -= buffers_.front().size();
      buffers_.erase(buffers_.begin());
    } else {
      buffers_.front() += skip;
      skip = 0;
    }
  }
  asio::async_write(socket, buffers_,
                    [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                      self->on_write(ec);
                    });
}

void Link::on_write(const boost::system::error_code& ec) {
  for (const OutFrame& f : batch_) {
    if (f.slot != nullptr) detail::release_slot(f.slot);
  }
  batch_.clear();
  if (ec) {
    if (ec != asio::error::operation_aborted) connection_lost(ec);
    std::lock_guard<std::mutex> lock(mu_);
    writing_ = false;
    return;
  }
  do_write();
}

void Link::do_read() {
  if (is_closed()) return;
  if (begin_ > 0) {
    std::memmove(staging_.data(), staging_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  auto handler = [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
    self->on_read(ec, n);
  };
  if (exact_header_ && state_ == State::kHeader && end_ < net::kHeaderSize) {
    // After a big payload: read just the next header, so its payload lands directly.
    asio::async_read(socket, asio::buffer(staging_.data() + end_, net::kHeaderSize - end_), handler);
  } else {
    socket.async_read_some(asio::buffer(staging_.data() + end_, staging_.size() - end_), handler);
  }
}

void Link::on_read(const boost::system::error_code& ec, std::size_t n) {
  if (ec) {
    if (ec != asio::error::operation_aborted) connection_lost(ec);
    return;
  }
  end_ += n;
  process();
}

void Link::on_payload(const boost::system::error_code& ec) {
  if (ec) {
    if (ec != asio::error::operation_aborted) connection_lost(ec);
    return;
  }
  got_ = cur_.size;
  if (!finish_payload()) return;
  state_ = State::kHeader;
  process();
}

void Link::process() {
  for (;;) {
    if (is_closed()) return;
    if (state_ == State::kPaused) return;
    if (state_ == State::kHeader) {
      if (end_ - begin_ < net::kHeaderSize) break;
      FrameHeader h;
      std::string error;
      if (!plane_.decoder.decode(staging_.data() + begin_, &h, &error)) {
        protocol_error(error);
        return;
      }
      begin_ += net::kHeaderSize;
      if (!on_header(h)) return;
      continue;
    }
    // kPayload
    std::byte* dest = payload_dest();
    const std::size_t take = std::min<std::size_t>(end_ - begin_, cur_.size - got_);
    std::memcpy(dest + got_, staging_.data() + begin_, take);
    begin_ += take;
    got_ += static_cast<std::uint32_t>(take);
    if (got_ == cur_.size) {
      if (!finish_payload()) return;
      state_ = State::kHeader;
      continue;
    }
    begin_ = end_ = 0;
    const std::uint32_t rest = cur_.size - got_;
    if (rest >= kDirectReadMin) {
      asio::async_read(socket, asio::buffer(dest + got_, rest),
                       [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                         self->on_payload(ec);
                       });
      return;
    }
    break;
  }
  do_read();
}

std::byte* Link::payload_dest() {
  return cur_.flags == net::kHello ? hello_name_ : cur_slot_->data;
}

bool Link::on_header(const FrameHeader& h) {
  if (!hello_done_) {
    if (h.flags != net::kHello) return protocol_error("expected HELLO as the first frame");
    return begin_payload(h);
  }
  switch (h.flags) {
    case net::kHello:
      return protocol_error("a second HELLO");
    case net::kBye:
      bye_seen_ = true;
      return true;
    case net::kCredit:
      return on_credit(h);
    default:
      return on_data(h);
  }
}

bool Link::begin_payload(const FrameHeader& h) {
  cur_ = h;
  got_ = 0;
  state_ = State::kPayload;
  if (h.size == 0) {
    if (!finish_payload()) return false;
    state_ = State::kHeader;
  }
  return true;
}

bool Link::on_credit(const FrameHeader& h) {
  if (role_ != Role::kOutbound) return protocol_error("CREDIT on a connection that carries data to this host");
  if (h.stream >= plane_.endpoints.size() || h.consumer >= plane_.endpoints[h.stream].size() ||
      plane_.endpoints[h.stream][h.consumer] == nullptr ||
      plane_.consumer_host[h.stream][h.consumer] != host_) {
    return protocol_error("CREDIT for stream " + std::to_string(h.stream) + " consumer copy " +
                          std::to_string(h.consumer) + ", which this host does not send to on that host");
  }
  RemoteEndpoint& endpoint = *plane_.endpoints[h.stream][h.consumer];
  if (!endpoint.grant(static_cast<std::int64_t>(h.key))) {
    return protocol_error("CREDIT beyond the window of " + std::to_string(endpoint.window()) +
                          " on stream " + std::to_string(h.stream));
  }
  return true;
}

bool Link::on_data(const FrameHeader& h) {
  if (role_ != Role::kInbound) return protocol_error("DATA or END_OF_WORK on a connection that carries credit");
  if (!plane_.graph_ready_io) return protocol_error("frame before this host granted any credit");
  auto where = [&] {
    return "stream " + std::to_string(h.stream) + " (" + plane_.topology.streams[h.stream].from.str() + " -> " +
           plane_.topology.streams[h.stream].to.str() + ")";
  };
  if (plane_.producer_host[h.stream][h.producer] != host_) {
    return protocol_error("frame from producer copy " + std::to_string(h.producer) + " of " + where() +
                          ", which does not run on that host");
  }
  Landing* landing = plane_.landing(h.stream, h.consumer);
  if (landing == nullptr) {
    return protocol_error("frame for consumer copy " + std::to_string(h.consumer) + " of " + where() +
                          ", which does not run on this host");
  }
  std::atomic<std::uint32_t>& unused = landing->unused[static_cast<std::size_t>(host_)];
  if (unused.load(std::memory_order_acquire) == 0) return protocol_error("frame without credit on " + where());
  unused.fetch_sub(1, std::memory_order_acq_rel);
  if (h.flags == net::kEndOfWork) {
    landing->land(Item::end_of_work(h.producer));
    return true;
  }
  cur_ = h;
  return acquire_and_begin();
}

bool Link::acquire_and_begin() {
  BufferPool& pool = *plane_.graph->streams()[cur_.stream]->pool;
  std::optional<Buffer> buffer = pool.try_acquire();
  if (!buffer) {
    state_ = State::kPaused;
    timer_.expires_after(kPoolRetry);
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->is_closed()) return;
      self->state_ = State::kHeader;
      if (self->acquire_and_begin()) self->process();
    });
    return false;
  }
  cur_slot_ = detail::BufferAccess::unwrap(*buffer);
  return begin_payload(cur_);
}

bool Link::finish_payload() {
  if (cur_.flags == net::kHello) return on_hello(std::string(reinterpret_cast<char*>(hello_name_), cur_.size));
  Item item{cur_slot_, cur_.size, cur_.producer, cur_.key};
  cur_slot_ = nullptr;
  exact_header_ = cur_.size >= kDirectReadMin;
  plane_.landing(cur_.stream, cur_.consumer)->land(item);
  return true;
}

bool Link::on_hello(const std::string& name) {
  if (cur_.key != plane_.fingerprint) {
    return protocol_error("HELLO from '" + name + "' for a different application or placement "
                          "(topology fingerprint differs); every host must run the same topology");
  }
  const int host = plane_.host_index(name);
  if (role_ == Role::kOutbound) {
    if (host != host_) {
      return protocol_error("answered as host '" + name + "'; check the address given for " +
                            plane_.host_label(host_));
    }
    hello_done_ = true;
    plane_.mark_up(true, host_);
    return true;
  }
  if (host < 0) return protocol_error("HELLO from unknown host '" + name + "'");
  if (!plane_.sends_to_me[static_cast<std::size_t>(host)]) {
    return protocol_error("HELLO from host '" + name + "', which sends no stream to this host");
  }
  if (plane_.inbound[static_cast<std::size_t>(host)] != nullptr) {
    return protocol_error("HELLO from host '" + name + "', which is already connected");
  }
  hello_done_ = true;
  host_ = host;
  peer_ = "data connection from " + plane_.host_label(host) + " (" + remote_ + ")";
  timer_.cancel();
  auto self = shared_from_this();
  plane_.unidentified.erase(self);
  plane_.inbound[static_cast<std::size_t>(host)] = self;
  plane_.inbound_raw[static_cast<std::size_t>(host)].store(this, std::memory_order_release);
  send_hello();
  plane_.mark_up(false, host);
  if (plane_.graph_ready_io) plane_.grant_initial(host);
  return true;
}

bool Link::protocol_error(const std::string& what) {
  if (hello_done_ || role_ == Role::kOutbound) {
    if (role_ == Role::kOutbound && !hello_done_) {
      std::lock_guard<std::mutex> lock(plane_.mu);
      plane_.out_error[static_cast<std::size_t>(host_)] = what;
    } else {
      plane_.fail(peer_ + ": protocol violation: " + what + "; connection closed");
    }
  } else {
    plane_.reject(remote_ + ": " + what + "; connection closed");
  }
  close();
  return false;
}

void Link::connection_lost(const boost::system::error_code& ec) {
  if (is_closed()) return;
  const bool eof = ec == asio::error::eof;
  if (plane_.stopping.load() || bye_seen_) {
    close();
    return;
  }
  if (!hello_done_) {
    if (role_ == Role::kOutbound) {
      std::lock_guard<std::mutex> lock(plane_.mu);
      plane_.out_error[static_cast<std::size_t>(host_)] = "closed before answering HELLO: " + ec.message();
    } else {
      plane_.reject(remote_ + ": closed before HELLO (" + ec.message() + ")");
    }
  } else {
    plane_.fail(peer_ + " lost: " +
                (eof ? std::string("the peer closed it (its process ended or was killed)") : ec.message()));
  }
  close();
}

}  // namespace sluice::net
