#include "net/data_plane.h"

#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <future>
#include <list>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include <boost/asio.hpp>

#include "log/backend.h"
#include "net/connection.h"
#include "net/inbound_link.h"
#include "net/listener.h"
#include "net/outbound_link.h"
#include "net/rate_limited_log.h"
#include "net/receive_side.h"
#include "net/remote_endpoint.h"
#include "net/routes.h"
#include "sync/thread_name.h"
#include "sync/waiter.h"
#include "text/address.h"
#include "tls/tls.h"

namespace sluice {

namespace asio = boost::asio;
using asio::ip::tcp;
using net::InboundLink;
using net::OutboundLink;

namespace {

// Connections that have not authenticated yet: at most this many, and this many per
// source address (a flood from one address cannot starve the real hosts of room).
constexpr std::size_t kMaxUnauthenticated = 64;
constexpr std::size_t kMaxUnauthenticatedPerAddress = 8;
// A connection in its handshake for longer than this may be closed to make room: a host
// completes its own in milliseconds.
constexpr std::uint64_t kStalledHandshakeNs = 100'000'000;
constexpr std::size_t kMaxRejected = 100;
constexpr auto kConnectRetry = std::chrono::milliseconds(100);
constexpr auto kTickPeriod = std::chrono::milliseconds(250);
// The HKDF label that turns the run key into the data connections' TLS key (the control
// connections derive theirs from the token with another label).
constexpr char kDataPskLabel[] = "sluice data psk v1";

// After its last handler the I/O thread keeps looking for a while (a non-blocking epoll,
// then sched_yield so that a runnable thread on this core goes first) before it sleeps in
// epoll_wait: frames from a busy peer come every few microseconds, and a sleep and wake-up
// per batch cost more CPU on a full machine than the looks do. How long adapts, as the
// workers' spin does (sched/scheduler.cc): doubled, up to kIoSpinMaxNs, after a look that
// found work; halved, down to kIoSpinMinNs, after one that ended asleep, so that sparse
// traffic (a frame now and then, heartbeats) is not looked for after every frame.
constexpr std::uint64_t kIoSpinMinNs = 1'000;
constexpr std::uint64_t kIoSpinMaxNs = 20'000;

// io.run(), with that look before each sleep.
void run_io(asio::io_context& io) {
  std::uint64_t budget = kIoSpinMaxNs;
  std::uint64_t idle_since = 0;
  while (!io.stopped()) {
    if (io.poll() != 0) {
      if (idle_since != 0) budget = std::min(kIoSpinMaxNs, budget * 2);
      idle_since = 0;
      continue;
    }
    const std::uint64_t now = Waiter::now_ns();
    if (idle_since == 0) idle_since = now;
    if (now - idle_since < budget) {
      sched_yield();
      continue;
    }
    budget = std::max(kIoSpinMinNs, budget / 2);
    io.run_one();
    idle_since = 0;
  }
}

// A TLS 1.3 PSK context for the data connections, and the same as Asio wants it. The
// TlsContext must outlive the Asio one: its SSL_CTX's callbacks find their key through it.
struct DataTls {
  std::shared_ptr<tls::TlsContext> keys;
  std::unique_ptr<asio::ssl::context> asio;
};

DataPlaneOptions checked(DataPlaneOptions options) {
  if (options.key.size() < 16) {
    throw Error("data plane: the run key is missing or shorter than 16 bytes (the console makes one per run)");
  }
  return options;
}

DataTls data_tls(tls::TlsContext::Role role, const std::string& key) {
  tls::TlsOptions options;
  options.token = key;
  options.psk_label = kDataPskLabel;
  DataTls tls;
  tls.keys = tls::TlsContext::create(role, options);
  SSL_CTX_up_ref(tls.keys->native());  // Asio's context takes its own reference
  tls.asio = std::make_unique<asio::ssl::context>(tls.keys->native());
  return tls;
}

std::string address_part(const std::string& remote) {
  const auto colon = remote.rfind(':');
  return colon == std::string::npos ? remote : remote.substr(0, colon);
}

}  // namespace

// Everything the data plane owns. The I/O thread runs every handler; the members it
// shares with other threads are atomic or under `mu`.
struct DataPlane::Impl final : net::ConnectionEvents {
  Impl(const topo::Topology& t, const std::map<std::string, Placement>& placements, const std::string& self,
       DataPlaneOptions o);

  // ConnectionEvents (I/O thread).
  void link_failed(const std::string& message) override { fail(message); }
  void stranger_refused(const std::string& message) override;
  void connect_problem(int host, const std::string& why) override {
    std::lock_guard<std::mutex> lock(mu);
    out_error[static_cast<std::size_t>(host)] = why;
  }
  bool stopping() const override { return stopping_flag.load(); }

  void fail(const std::string& message);
  void mark_up(bool outbound_side, int host);
  void on_accept(tcp::socket socket, const std::string& remote);
  bool admit(const std::shared_ptr<InboundLink>& link, std::string* why);
  void forget_unauthenticated();
  void start_outbound(int host, const std::string& address);
  std::shared_ptr<OutboundLink> new_outbound(int host) {
    return std::make_shared<OutboundLink>(env, host, endpoints, [this](int up) { mark_up(true, up); });
  }
  void retry_refused_handshakes();
  void tick();
  template <typename F>
  void for_each_link(F&& f) {
    for (auto& link : outbound) {
      if (link != nullptr) f(*link);
    }
    for (auto& link : receive.links()) {
      if (link != nullptr) f(*link);
    }
  }

  const topo::Topology& topology;
  const DataPlaneOptions options;
  const net::Routes routes;
  DataTls tls_client;  // when a connection of this host runs TLS
  DataTls tls_server;
  const net::DataFrameDecoder decoder;
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work;
  net::RateLimitedLog log;
  net::ConnectionEnv env;
  net::Listener listener;
  net::ReceiveSide receive;
  asio::steady_timer ticker;
  std::thread thread;
  std::atomic<bool> stopping_flag{false};

  // Set up before the I/O thread uses them; then changed only by the I/O thread.
  std::vector<std::shared_ptr<OutboundLink>> outbound;  // [host]
  std::vector<std::string> peer_addresses;              // [host]: given to connect()
  std::vector<std::vector<std::unique_ptr<net::RemoteEndpoint>>> endpoints;  // [stream][copy]
  std::list<std::shared_ptr<InboundLink>> unauthenticated;  // oldest first
  std::map<std::string, std::size_t> unauthenticated_from;  // source address -> count
  bool give_up_connecting = false;

  mutable std::mutex mu;  // guards everything below
  std::condition_variable changed;
  std::optional<std::string> failure;
  std::function<void(const std::string&)> callback;
  std::vector<std::string> rejected;
  std::vector<bool> out_up;            // [host]: our connection to it authenticated
  std::vector<bool> in_up;             // [host]: its connection to us authenticated
  std::vector<std::string> out_error;  // [host]: why our connection is not up yet
  bool stopped = false;
};

DataPlane::Impl::Impl(const topo::Topology& t, const std::map<std::string, Placement>& placements,
                      const std::string& self, DataPlaneOptions o)
    : topology(t),
      options(checked(std::move(o))),
      routes(t, placements, self, options.encrypt_all),
      tls_client(routes.any_encrypted() ? data_tls(tls::TlsContext::Role::kClient, options.key) : DataTls{}),
      tls_server(routes.any_encrypted() ? data_tls(tls::TlsContext::Role::kServer, options.key) : DataTls{}),
      decoder(routes.limits()),
      work(asio::make_work_guard(io)),
      log("sluice data plane (" + self + "): "),
      env{io,
          routes,
          decoder,
          options.key,
          *this,
          options.silence_limit,
          options.heartbeat_interval,
          tls_client.asio.get(),
          tls_server.asio.get()},
      listener(io, options.listen, log, options.ports),
      receive(io, routes),
      ticker(io) {
  const std::size_t nhosts = routes.hosts().size();
  out_up.assign(nhosts, false);
  in_up.assign(nhosts, false);
  out_error.assign(nhosts, "no answer yet");
  outbound.resize(nhosts);
  peer_addresses.resize(nhosts);
  endpoints.resize(routes.stream_count());
  for (std::size_t s = 0; s < routes.stream_count(); ++s) endpoints[s].resize(routes.consumer_copies(s));
  for (std::size_t h = 0; h < nhosts; ++h) {
    if (!routes.sends_to(static_cast<int>(h))) continue;
    outbound[h] = new_outbound(static_cast<int>(h));
  }
  listener.start([this](tcp::socket socket, const std::string& remote) { on_accept(std::move(socket), remote); });
  tick();
  // The one I/O thread: every landing's pushes come from it (and from consumers under the
  // landing's lock), which is what lets a channel fed only from other hosts use the ring's
  // one-producer protocol (runtime/graph.cc, net/landing.cc). Keep it one.
  thread = std::thread([this] {
    name_this_thread("sluice-net-io");
    for (;;) {
      try {
        run_io(io);
        return;
      } catch (const std::exception& e) {  // a handler threw: a bug; fail the run, keep serving
        fail(std::string("data plane internal error: ") + e.what());
      }
    }
  });
}

void DataPlane::Impl::fail(const std::string& message) {
  std::function<void(const std::string&)> cb;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (failure || stopped) return;
    failure = message;
    cb = callback;
  }
  logging::process_line(options.failure_level, "sluice data plane (" + routes.self_name() + "): " + message);
  changed.notify_all();
  if (cb) cb(message);
}

void DataPlane::Impl::stranger_refused(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (rejected.size() == kMaxRejected) rejected.erase(rejected.begin());
    rejected.push_back(message);
  }
  log.line("refused " + message);
}

void DataPlane::Impl::mark_up(bool outbound_side, int host) {
  {
    std::lock_guard<std::mutex> lock(mu);
    (outbound_side ? out_up : in_up)[static_cast<std::size_t>(host)] = true;
  }
  changed.notify_all();
}

void DataPlane::Impl::forget_unauthenticated() {
  for (auto it = unauthenticated.begin(); it != unauthenticated.end();) {
    if ((*it)->is_closed() || (*it)->authenticated()) {
      auto from = unauthenticated_from.find(address_part((*it)->remote()));
      if (from != unauthenticated_from.end() && --from->second == 0) unauthenticated_from.erase(from);
      it = unauthenticated.erase(it);
    } else {
      ++it;
    }
  }
}

void DataPlane::Impl::on_accept(tcp::socket socket, const std::string& remote) {
  boost::system::error_code ignored;
  if (stopping_flag.load()) {
    socket.close(ignored);
    return;
  }
  forget_unauthenticated();
  const std::string address = address_part(remote);
  // Full: room is made by closing the oldest connection that has sent no HELLO yet (from
  // this address, when its share is what is full), else the oldest that has been in its
  // handshake for over kStalledHandshakeNs (100 ms): a host completes its own in milliseconds,
  // so such a one is a stranger stalling. Refusing the newest let a few idle sockets, or 64
  // HELLOs renewed as the 5 s to authenticate ran out, keep the real host out of every run
  // (it tries again every 250 ms). When every one is younger, the newest is refused, so
  // holding a host out takes a flood of more than 640 HELLOs a second (80 from its own
  // address), the denial of service docs/operations.md accepts on the control port.
  std::string full;
  bool from_address = false;
  if (unauthenticated_from.count(address) != 0 && unauthenticated_from[address] >= kMaxUnauthenticatedPerAddress) {
    full = "already " + std::to_string(kMaxUnauthenticatedPerAddress) +
           " connections from that address that have not authenticated";
    from_address = true;
  } else if (unauthenticated.size() >= kMaxUnauthenticated) {
    full = "already " + std::to_string(kMaxUnauthenticated) + " connections that have not authenticated";
  }
  if (!full.empty()) {
    const std::uint64_t now = Waiter::now_ns();
    auto candidate = [&](const std::shared_ptr<InboundLink>& l) {
      return !l->is_closed() && (!from_address || address_part(l->remote()) == address);
    };
    auto victim = std::find_if(unauthenticated.begin(), unauthenticated.end(),
                               [&](const std::shared_ptr<InboundLink>& l) { return candidate(l) && !l->greeted(); });
    std::string why = "it had sent nothing";
    if (victim == unauthenticated.end()) {
      victim = std::find_if(unauthenticated.begin(), unauthenticated.end(), [&](const std::shared_ptr<InboundLink>& l) {
        return candidate(l) && now - l->started_ns() > kStalledHandshakeNs;
      });
      if (victim != unauthenticated.end()) {
        why = "it had been in its handshake for " + std::to_string((now - (*victim)->started_ns()) / 1'000'000) +
              " ms, which takes a host milliseconds";
      }
    }
    if (victim == unauthenticated.end()) {
      socket.close(ignored);
      stranger_refused("connection from " + remote + ": " + full +
                       ", each in its handshake for less than 1 s; closed at once");
      return;
    }
    stranger_refused("connection from " + (*victim)->remote() + ": closed to make room for a newer one from " + remote +
                     " (" + full + "; " + why + ")");
    (*victim)->close();
    forget_unauthenticated();
  }
  socket.set_option(tcp::no_delay(true), ignored);
  auto link = std::make_shared<InboundLink>(env, receive, [this](const std::shared_ptr<InboundLink>& l, std::string* why) {
    return admit(l, why);
  });
  link->socket() = std::move(socket);
  unauthenticated.push_back(link);
  ++unauthenticated_from[address];
  link->start(remote);
}

bool DataPlane::Impl::admit(const std::shared_ptr<InboundLink>& link, std::string* why) {
  forget_unauthenticated();  // this one included: it has authenticated
  if (!receive.claim(link->host(), link)) {
    *why = "a second data connection from " + routes.host_label(link->host()) + ", which is connected already";
    return false;
  }
  mark_up(false, link->host());
  return true;
}

void DataPlane::Impl::start_outbound(int host, const std::string& peer_address) {
  std::shared_ptr<OutboundLink> link = outbound[static_cast<std::size_t>(host)];
  if (give_up_connecting || stopping_flag.load() || link->is_closed()) return;
  peer_addresses[static_cast<std::size_t>(host)] = peer_address;
  std::string problem;
  const std::optional<text::HostPort> where = text::parse_host_port(peer_address, text::AddressRules{}, &problem);
  if (!where) {
    connect_problem(host, "peer address: " + problem);
    return;
  }
  auto resolver = std::make_shared<tcp::resolver>(io);
  resolver->async_resolve(
      where->host, std::to_string(where->port),
      [this, host, peer_address, link, resolver](const boost::system::error_code& ec, tcp::resolver::results_type results) {
        auto retry = [this, host, peer_address](const std::string& why) {
          connect_problem(host, why);
          auto timer = std::make_shared<asio::steady_timer>(io, kConnectRetry);
          timer->async_wait([this, host, peer_address, timer](const boost::system::error_code& e) {
            if (!e) start_outbound(host, peer_address);
          });
        };
        if (ec) return retry("cannot resolve " + peer_address + ": " + ec.message());
        asio::async_connect(link->socket(), results,
                            [this, link, peer_address, retry](const boost::system::error_code& e, const tcp::endpoint& ep) {
                              if (e) {
                                boost::system::error_code ignored;
                                link->socket().close(ignored);
                                return retry("cannot connect to " + peer_address + ": " + e.message());
                              }
                              if (give_up_connecting || stopping_flag.load()) return;
                              boost::system::error_code ignored;
                              link->socket().set_option(tcp::no_delay(true), ignored);
                              link->start(net::format_endpoint(ep));
                            });
      });
}

// A handshake that failed (the peer closed it, or answered wrongly) is tried again on a new
// link until connect() gives up: the peer may have refused it only because its room for
// connections in their handshake was full of strangers' (on_accept), which is over within
// the 5 s they have to authenticate. A closed link cannot be reopened, so the new one takes
// its place, in the endpoints too (no copy sends before connect() returns).
void DataPlane::Impl::retry_refused_handshakes() {
  if (give_up_connecting) return;
  for (std::size_t h = 0; h < outbound.size(); ++h) {
    const std::shared_ptr<OutboundLink>& old = outbound[h];
    if (old == nullptr || !old->is_closed() || old->authenticated() || peer_addresses[h].empty()) continue;
    const int host = static_cast<int>(h);
    outbound[h] = new_outbound(host);
    for (std::size_t s = 0; s < endpoints.size(); ++s) {
      for (std::size_t c = 0; c < endpoints[s].size(); ++c) {
        if (endpoints[s][c] != nullptr && routes.consumer_host(s, static_cast<std::uint32_t>(c)) == host) {
          endpoints[s][c]->relink(outbound[h]);
        }
      }
    }
    start_outbound(host, peer_addresses[h]);
  }
}

void DataPlane::Impl::tick() {
  if (stopping_flag.load()) return;
  forget_unauthenticated();
  retry_refused_handshakes();
  log.flush();  // a flood of refusals that stopped: its count, not lost
  const std::uint64_t now = Waiter::now_ns();
  for_each_link([now](net::Connection& link) { link.tick(now); });
  ticker.expires_after(kTickPeriod);
  ticker.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) tick();
  });
}

// ---- DataPlane ----

DataPlane::DataPlane(const topo::Topology& topology, std::map<std::string, Placement> placements, std::string self,
                     DataPlaneOptions options)
    : impl_(std::make_unique<Impl>(topology, placements, self, std::move(options))) {}

DataPlane::~DataPlane() { stop(); }

std::string DataPlane::listen_address() const { return impl_->listener.address(); }

Endpoint* DataPlane::remote_consumer(StreamRuntime& stream, int copy) {
  Impl& p = *impl_;
  const auto s = static_cast<std::size_t>(stream.index);
  if (s >= p.routes.stream_count() || copy < 0 || static_cast<std::size_t>(copy) >= p.routes.consumer_copies(s)) {
    throw Error("data plane: no consumer copy " + std::to_string(copy) + " on stream " + stream.label);
  }
  const auto c = static_cast<std::uint32_t>(copy);
  const int host = p.routes.consumer_host(s, c);
  if (host == p.routes.self() || p.outbound[static_cast<std::size_t>(host)] == nullptr) {
    throw Error("data plane: consumer copy " + std::to_string(copy) + " of " + stream.label +
                " is not placed on another host");
  }
  auto& endpoint = p.endpoints[s][c];
  if (endpoint == nullptr) {
    endpoint = std::make_unique<net::RemoteEndpoint>(static_cast<std::uint32_t>(s), c,
                                                     p.outbound[static_cast<std::size_t>(host)], stream.room.get(),
                                                     p.routes.window(s, p.routes.self()));
  }
  return endpoint.get();
}

std::size_t DataPlane::landing_room(int stream) const {
  const auto s = static_cast<std::size_t>(stream);
  return s < impl_->routes.stream_count() ? impl_->routes.landing_room(s) : 0;
}

void DataPlane::graph_ready(Graph& graph) {
  Impl& p = *impl_;
  p.receive.attach(graph);
  // Publish to the I/O thread (the post orders these writes before its reads).
  asio::post(p.io, [&p] { p.receive.mark_attached(); });
}

void DataPlane::graph_gone() noexcept {
  try {
    stop();
  } catch (...) {  // out of memory part-way: nothing more can be done from here
  }
}

void DataPlane::connect(const std::map<std::string, std::string>& peers, std::chrono::milliseconds timeout,
                        const std::function<bool()>& between) {
  Impl& p = *impl_;
  const std::size_t nhosts = p.routes.hosts().size();
  for (std::size_t h = 0; h < nhosts; ++h) {
    if (!p.routes.sends_to(static_cast<int>(h))) continue;
    auto found = peers.find(p.routes.hosts()[h]);
    if (found == peers.end()) {
      throw Error("data plane: no address for host '" + p.routes.hosts()[h] + "', which this host sends to");
    }
    asio::post(p.io, [&p, h, address = found->second] { p.start_outbound(static_cast<int>(h), address); });
  }
  std::unique_lock<std::mutex> lock(p.mu);
  auto all_up = [&] {
    for (std::size_t h = 0; h < nhosts; ++h) {
      if (p.routes.sends_to(static_cast<int>(h)) && !p.out_up[h]) return false;
      if (p.routes.hears_from(static_cast<int>(h)) && !p.in_up[h]) return false;
    }
    return true;
  };
  const auto done = [&] { return all_up() || p.failure.has_value(); };
  // In slices of 50 ms when there is something to do between them.
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + timeout;
  const Clock::duration slice = between ? Clock::duration(std::chrono::milliseconds(50)) : Clock::duration(timeout);
  while (!p.changed.wait_for(lock, std::min<Clock::duration>(slice, deadline - Clock::now()), done) &&
         Clock::now() < deadline && between) {
    lock.unlock();
    const bool go_on = between();
    lock.lock();
    if (!go_on && !done()) {
      lock.unlock();
      asio::post(p.io, [&p] { p.give_up_connecting = true; });
      throw Error("data plane of host '" + p.routes.self_name() + "' stopped connecting: the launch failed meanwhile");
    }
  }
  if (p.failure) throw Error("data plane: " + *p.failure);
  if (all_up()) return;
  std::string message = "data plane of host '" + p.routes.self_name() + "' could not connect within " +
                        std::to_string(timeout.count()) + " ms:";
  for (std::size_t h = 0; h < nhosts; ++h) {
    const std::string& name = p.routes.hosts()[h];
    if (p.routes.sends_to(static_cast<int>(h)) && !p.out_up[h]) {
      message += " host '" + name + "' at " + peers.at(name) + " did not answer (" + p.out_error[h] + ");";
    }
    if (p.routes.hears_from(static_cast<int>(h)) && !p.in_up[h]) {
      message += " host '" + name + "' did not connect to " + p.listener.address() + ";";
    }
  }
  message.pop_back();
  lock.unlock();
  asio::post(p.io, [&p] { p.give_up_connecting = true; });
  throw Error(message);
}

std::optional<std::string> DataPlane::failure() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->failure;
}

std::vector<std::string> DataPlane::rejected() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->rejected;
}

std::string DataPlane::in_flight() const {
  Impl& p = *impl_;
  auto answer = std::make_shared<std::promise<std::string>>();
  asio::post(p.io, [&p, answer] {
    std::string out;
    auto sending = [](net::Connection& link) {
      const net::Connection::SendState state = link.send_state();
      if (state.closed) return std::string("closed");
      return std::to_string(state.queued) + " frames queued" + (state.writing ? ", writing" : "");
    };
    for (std::size_t h = 0; h < p.outbound.size(); ++h) {
      if (p.outbound[h] == nullptr) continue;
      out += "  to " + p.routes.host_label(static_cast<int>(h)) + ": " + sending(*p.outbound[h]) + ";";
      for (std::size_t s = 0; s < p.endpoints.size(); ++s) {
        for (std::size_t c = 0; c < p.endpoints[s].size(); ++c) {
          const net::RemoteEndpoint* endpoint = p.endpoints[s][c].get();
          if (endpoint == nullptr || p.routes.consumer_host(s, static_cast<std::uint32_t>(c)) != static_cast<int>(h)) {
            continue;
          }
          out += " " + p.topology.streams[s].label() + " copy " + std::to_string(c) + " credit " +
                 std::to_string(endpoint->credit()) + "/" + std::to_string(endpoint->window()) + ";";
        }
      }
      out += "\n";
    }
    for (const auto& link : p.receive.links()) {
      if (link != nullptr) out += "  from " + p.routes.host_label(link->host()) + ": " + sending(*link) + "\n";
    }
    out += p.receive.in_flight();
    answer->set_value(std::move(out));
  });
  auto reply = answer->get_future();
  if (reply.wait_for(std::chrono::seconds(1)) != std::future_status::ready) {
    return "  (the data plane's I/O thread did not answer within 1 s)\n";
  }
  return reply.get();
}

void DataPlane::set_failure_callback(std::function<void(const std::string&)> cb) {
  std::optional<std::string> already;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->callback = cb;
    already = impl_->failure;
  }
  if (already && cb) cb(*already);
}

void DataPlane::stop() {
  Impl& p = *impl_;
  {
    std::lock_guard<std::mutex> lock(p.mu);
    if (p.stopped) return;
  }
  if (p.thread.joinable()) {
    // Say BYE on every authenticated connection, give the writes a moment, then cancel
    // everything. (The promises are shared: a handler that runs after we stopped waiting
    // must not touch a dead one.)
    auto said = std::make_shared<std::promise<void>>();
    asio::post(p.io, [&p, said] {
      p.for_each_link([](net::Connection& link) { link.say_bye(); });
      said->set_value();
    });
    said->get_future().wait_for(std::chrono::seconds(1));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    while (std::chrono::steady_clock::now() < deadline) {
      auto idle = std::make_shared<std::promise<bool>>();
      asio::post(p.io, [&p, idle] {
        bool all = true;
        p.for_each_link([&all](net::Connection& link) { all = all && link.write_idle(); });
        idle->set_value(all);
      });
      auto f = idle->get_future();
      if (f.wait_for(std::chrono::seconds(1)) != std::future_status::ready || f.get()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    p.stopping_flag.store(true);
    {
      std::lock_guard<std::mutex> lock(p.mu);
      p.stopped = true;  // from here on, failures are ours: not reported
    }
    asio::post(p.io, [&p] {
      p.listener.close();
      boost::system::error_code ignored;
      p.ticker.cancel();
      p.for_each_link([](net::Connection& link) { link.close(); });
      for (auto& link : p.unauthenticated) link->close();
      p.unauthenticated.clear();
      p.work.reset();
    });
    p.thread.join();
  }
  p.stopping_flag.store(true);
  {
    std::lock_guard<std::mutex> lock(p.mu);
    p.stopped = true;
  }
  p.receive.release_held();
  p.log.flush(/*at_end=*/true);
}

}  // namespace sluice
