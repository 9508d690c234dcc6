#include "net/data_plane.h"

#include <algorithm>
#include <future>
#include <iostream>
#include <utility>

#include "net/link.h"
#include "net/plane_state.h"

namespace sluice {
namespace net {

namespace {

// Connections that have not said HELLO yet: at most this many.
constexpr std::size_t kMaxUnidentified = 64;
constexpr auto kConnectRetry = std::chrono::milliseconds(100);
constexpr std::size_t kMaxRejected = 100;

std::pair<std::string, std::uint16_t> split_host_port(const std::string& address) {
  const auto colon = address.rfind(':');
  auto bad = [&] {
    return Error("bad address '" + address + "'; expected ADDR:PORT, e.g. 127.0.0.1:7700");
  };
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) throw bad();
  std::string host = address.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  unsigned long port = 0;
  for (std::size_t i = colon + 1; i < address.size(); ++i) {
    if (address[i] < '0' || address[i] > '9') throw bad();
    port = port * 10 + static_cast<unsigned long>(address[i] - '0');
    if (port > 65535) throw bad();
  }
  return {host, static_cast<std::uint16_t>(port)};
}

std::string format_endpoint(const tcp::endpoint& ep) {
  const auto address = ep.address();
  return (address.is_v6() ? "[" + address.to_string() + "]" : address.to_string()) + ":" +
         std::to_string(ep.port());
}

void fnv(std::uint64_t& h, const std::string& s) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  h = (h ^ 0xff) * 0x100000001b3ULL;
}

}  // namespace

bool RemoteEndpoint::try_push(const Item& item) noexcept {
  std::int64_t c = credits_.load(std::memory_order_acquire);
  do {
    if (c <= 0) return false;
  } while (!credits_.compare_exchange_weak(c, c - 1, std::memory_order_acq_rel));
  FrameHeader h;
  h.flags = item.is_end_of_work() ? net::kEndOfWork : net::kData;
  h.stream = stream_;
  h.producer = item.producer;
  h.consumer = copy_;
  h.key = item.is_end_of_work() ? 0 : item.key;
  h.size = item.is_end_of_work() ? 0 : item.size;
  bool sent = false;
  try {
    sent = link_->send(h, item.slot);
  } catch (...) {  // out of memory queueing: treat as no room
  }
  if (!sent) credits_.fetch_add(1, std::memory_order_acq_rel);
  return sent;
}

void Landing::popped(InputChannel&, const Item& item) noexcept {
  if (held_count.load(std::memory_order_acquire) != 0) {
    std::lock_guard<std::mutex> lock(mu);
    flush_held_locked();
  }
  const int host = plane.producer_host[static_cast<std::size_t>(stream)][item.producer];
  if (host == plane.self || host < 0) return;
  // Return credit in batches, straight from this thread (Link::send writes inline when
  // the socket is free).
  std::uint32_t& due = to_return[static_cast<std::size_t>(host)];
  if (++due < batch) return;
  Link* link = plane.inbound_raw[static_cast<std::size_t>(host)].load(std::memory_order_acquire);
  if (link == nullptr) return;
  unused[static_cast<std::size_t>(host)].fetch_add(due, std::memory_order_acq_rel);
  FrameHeader h;
  h.flags = net::kCredit;
  h.stream = static_cast<std::uint32_t>(stream);
  h.consumer = static_cast<std::uint32_t>(copy);
  h.key = due;
  due = 0;
  try {
    link->send(h, nullptr);
  } catch (...) {  // out of memory: the run is failing anyway
  }
}

void Landing::land(const Item& item) {
  if (held_count.load(std::memory_order_acquire) == 0 && channel->try_push(item)) return;
  std::lock_guard<std::mutex> lock(mu);
  held.push_back(item);
  held_count.fetch_add(1, std::memory_order_release);
  // The consumer may have popped everything between our try and the lock: look again.
  flush_held_locked();
}

DataPlaneState::DataPlaneState(const topo::Topology& t, std::map<std::string, Placement> p, std::string self_name,
                      DataPlaneOptions o)
    : topology(t), placements(std::move(p)), work(asio::make_work_guard(io)), acceptor(io) {
  for (const auto& [name, placement] : placements) hosts.push_back(name);
  self = host_index(self_name);
  if (self < 0) throw Error("data plane: this host '" + self_name + "' has no placement");
  const std::size_t nhosts = hosts.size();

  // Who runs which copy; the topology's fingerprint covers that too.
  fingerprint = 0xcbf29ce484222325ULL;
  std::vector<net::StreamLimits> limits;
  for (const topo::StreamSpec& spec : topology.streams) {
    const topo::FilterSpec* from = topology.find_filter(spec.from.filter);
    const topo::FilterSpec* to = topology.find_filter(spec.to.filter);
    if (from == nullptr || to == nullptr) throw Error("data plane: stream " + spec.from.str() + " has no filter");
    auto locate = [&](const std::string& filter, int copies) {
      std::vector<int> where(static_cast<std::size_t>(copies), -1);
      for (std::size_t h = 0; h < nhosts; ++h) {
        for (int c = 0; c < copies; ++c) {
          if (placements.at(hosts[h]).runs_here(filter, c)) where[static_cast<std::size_t>(c)] = static_cast<int>(h);
        }
      }
      for (int c = 0; c < copies; ++c) {
        if (where[static_cast<std::size_t>(c)] < 0) {
          throw Error("data plane: copy " + std::to_string(c) + " of '" + filter + "' is placed on no host");
        }
      }
      return where;
    };
    producer_host.push_back(locate(spec.from.filter, from->copies));
    consumer_host.push_back(locate(spec.to.filter, to->copies));
    std::vector<bool> produces(nhosts, false);
    for (int h : producer_host.back()) produces[static_cast<std::size_t>(h)] = true;
    host_produces.push_back(produces);
    // The hosts that send into a consumer copy are the producing hosts but its own. They
    // share the pool's landing room there (depth per consumer copy) evenly.
    const auto depth = static_cast<std::uint32_t>(spec.depth);
    std::vector<std::uint32_t> windows;
    for (int ch : consumer_host.back()) {
      std::uint32_t senders = 0;
      for (std::size_t h = 0; h < nhosts; ++h) senders += produces[h] && static_cast<int>(h) != ch ? 1 : 0;
      windows.push_back(std::max<std::uint32_t>(1, depth / std::max<std::uint32_t>(1, senders)));
    }
    window.push_back(windows);
    limits.push_back(net::StreamLimits{static_cast<std::uint32_t>(from->copies),
                                       static_cast<std::uint32_t>(to->copies),
                                       static_cast<std::uint32_t>(spec.buffer_size), depth});
    fnv(fingerprint, spec.from.str());
    fnv(fingerprint, spec.to.str());
    fnv(fingerprint, std::to_string(spec.buffer_size) + "/" + std::to_string(spec.depth) + "/" +
                         std::to_string(from->copies) + "/" + std::to_string(to->copies) + "/" +
                         topo::to_string(spec.policy));
  }
  for (std::size_t h = 0; h < nhosts; ++h) {
    fnv(fingerprint, hosts[h]);
    for (const auto& [filter, copies] : placements.at(hosts[h]).local) {
      fnv(fingerprint, filter);
      for (int c : copies) fnv(fingerprint, std::to_string(c));
    }
  }
  decoder = net::FrameDecoder(std::move(limits));

  sends_to_me.assign(nhosts, false);
  receives_from_me.assign(nhosts, false);
  for (std::size_t s = 0; s < topology.streams.size(); ++s) {
    for (int ph : producer_host[s]) {
      for (int ch : consumer_host[s]) {
        if (ph == ch) continue;
        if (ch == self) sends_to_me[static_cast<std::size_t>(ph)] = true;
        if (ph == self) receives_from_me[static_cast<std::size_t>(ch)] = true;
      }
    }
  }
  outbound.resize(nhosts);
  inbound.resize(nhosts);
  granted.assign(nhosts, false);
  inbound_raw = std::make_unique<std::atomic<Link*>[]>(nhosts);
  out_up.assign(nhosts, false);
  in_up.assign(nhosts, false);
  out_error.assign(nhosts, "no answer yet");
  endpoints.resize(topology.streams.size());
  landings.resize(topology.streams.size());
  for (std::size_t s = 0; s < topology.streams.size(); ++s) {
    endpoints[s].resize(consumer_host[s].size());
    landings[s].resize(consumer_host[s].size());
  }
  for (std::size_t h = 0; h < nhosts; ++h) {
    if (receives_from_me[h]) outbound[h] = std::make_shared<Link>(*this, Link::Role::kOutbound, static_cast<int>(h));
  }

  // Listen.
  auto [listen_host, listen_port] = split_host_port(o.listen);
  boost::system::error_code ec;
  const auto listen_ip = asio::ip::make_address(listen_host, ec);
  if (ec) throw Error("data plane: listen address '" + o.listen + "' is not an IP address: " + ec.message());
  const tcp::endpoint listen_ep(listen_ip, listen_port);
  acceptor.open(listen_ep.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(listen_ep, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw Error("data plane: cannot listen on " + o.listen + ": " + ec.message() + "; pick a free port");
  address = format_endpoint(acceptor.local_endpoint());
  do_accept();
  thread = std::thread([this] {
    for (;;) {
      try {
        io.run();
        return;
      } catch (const std::exception& e) {  // a handler threw: a bug; fail the run, keep serving
        fail(std::string("data plane internal error: ") + e.what());
      }
    }
  });
}

void DataPlaneState::fail(const std::string& message) {
  std::function<void(const std::string&)> cb;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (failure || stopped) return;
    failure = message;
    cb = callback;
  }
  std::cerr << "sluice data plane (" << hosts[static_cast<std::size_t>(self)] << "): " << message << std::endl;
  changed.notify_all();
  if (cb) cb(message);
}

void DataPlaneState::reject(const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mu);
    if (rejected.size() == kMaxRejected) rejected.erase(rejected.begin());
    rejected.push_back(message);
  }
  std::cerr << "sluice data plane (" << hosts[static_cast<std::size_t>(self)] << "): rejected " << message
            << std::endl;
}

void DataPlaneState::mark_up(bool outbound_side, int host) {
  {
    std::lock_guard<std::mutex> lock(mu);
    (outbound_side ? out_up : in_up)[static_cast<std::size_t>(host)] = true;
  }
  changed.notify_all();
}

void DataPlaneState::do_accept() {
  acceptor.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || stopping.load()) return;
    if (!ec) {
      boost::system::error_code ignored;
      const tcp::endpoint remote = socket.remote_endpoint(ignored);
      if (unidentified.size() >= kMaxUnidentified) {
        reject(format_endpoint(remote) + ": too many connections that have not said HELLO; closed");
        socket.close(ignored);
      } else {
        socket.set_option(tcp::no_delay(true), ignored);
        auto link = std::make_shared<Link>(*this, Link::Role::kInbound, -1);
        link->socket = std::move(socket);
        link->set_remote(format_endpoint(remote));
        unidentified.insert(link);
        link->start_inbound();
      }
    }
    do_accept();
  });
}

void DataPlaneState::start_outbound(int host, const std::string& peer_address) {
  std::shared_ptr<Link> link = outbound[static_cast<std::size_t>(host)];
  if (give_up_connecting || stopping.load()) return;
  std::string ip;
  std::uint16_t port = 0;
  try {
    std::tie(ip, port) = split_host_port(peer_address);
  } catch (const Error& e) {
    std::lock_guard<std::mutex> lock(mu);
    out_error[static_cast<std::size_t>(host)] = e.what();
    return;
  }
  auto resolver = std::make_shared<tcp::resolver>(io);
  resolver->async_resolve(
      ip, std::to_string(port),
      [this, host, peer_address, link, resolver](const boost::system::error_code& ec,
                                                  tcp::resolver::results_type results) {
        auto retry = [this, host, peer_address](const std::string& why) {
          {
            std::lock_guard<std::mutex> lock(mu);
            out_error[static_cast<std::size_t>(host)] = why;
          }
          auto timer = std::make_shared<asio::steady_timer>(io, kConnectRetry);
          timer->async_wait([this, host, peer_address, timer](const boost::system::error_code& e) {
            if (!e) start_outbound(host, peer_address);
          });
        };
        if (ec) return retry("cannot resolve " + peer_address + ": " + ec.message());
        asio::async_connect(link->socket, results,
                            [this, link, peer_address, retry](const boost::system::error_code& e,
                                                              const tcp::endpoint& ep) {
                              if (e) {
                                boost::system::error_code ignored;
                                link->socket.close(ignored);
                                return retry("cannot connect to " + peer_address + ": " + e.message());
                              }
                              if (give_up_connecting || stopping.load()) return;
                              boost::system::error_code ignored;
                              link->socket.set_option(tcp::no_delay(true), ignored);
                              link->set_remote(format_endpoint(ep));
                              link->start_outbound();
                            });
      });
}

void DataPlaneState::grant_initial(int host) {
  auto& link = inbound[static_cast<std::size_t>(host)];
  if (link == nullptr || granted[static_cast<std::size_t>(host)]) return;
  granted[static_cast<std::size_t>(host)] = true;
  for (std::size_t s = 0; s < landings.size(); ++s) {
    if (!host_produces[s][static_cast<std::size_t>(host)]) continue;
    for (std::size_t c = 0; c < landings[s].size(); ++c) {
      Landing* l = landings[s][c].get();
      if (l == nullptr) continue;
      l->unused[static_cast<std::size_t>(host)].store(window[s][c], std::memory_order_release);
      FrameHeader h;
      h.flags = net::kCredit;
      h.stream = static_cast<std::uint32_t>(s);
      h.consumer = static_cast<std::uint32_t>(c);
      h.key = window[s][c];
      link->send(h, nullptr);
    }
  }
}

}  // namespace net

using net::DataPlaneState;
using net::Landing;
using net::Link;
using net::RemoteEndpoint;
namespace asio = boost::asio;

// ---- DataPlane ----

DataPlane::DataPlane(const topo::Topology& topology, std::map<std::string, Placement> placements,
                     std::string self, DataPlaneOptions options)
    : impl_(std::make_unique<DataPlaneState>(topology, std::move(placements), std::move(self), std::move(options))) {}

DataPlane::~DataPlane() { stop(); }

std::string DataPlane::listen_address() const { return impl_->address; }

Endpoint* DataPlane::remote_consumer(StreamRuntime& stream, int copy) {
  DataPlaneState& p = *impl_;
  const auto s = static_cast<std::size_t>(stream.index);
  if (s >= p.consumer_host.size() || copy < 0 || static_cast<std::size_t>(copy) >= p.consumer_host[s].size()) {
    throw Error("data plane: no consumer copy " + std::to_string(copy) + " on stream " + stream.label);
  }
  const int host = p.consumer_host[s][static_cast<std::size_t>(copy)];
  if (host == p.self || p.outbound[static_cast<std::size_t>(host)] == nullptr) {
    throw Error("data plane: consumer copy " + std::to_string(copy) + " of " + stream.label +
                " is not placed on another host");
  }
  auto& endpoint = p.endpoints[s][static_cast<std::size_t>(copy)];
  if (endpoint == nullptr) {
    endpoint = std::make_unique<RemoteEndpoint>(static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(copy),
                                                p.outbound[static_cast<std::size_t>(host)], stream.room.get(),
                                                p.window[s][static_cast<std::size_t>(copy)]);
  }
  return endpoint.get();
}

void DataPlane::graph_ready(Graph& graph) {
  DataPlaneState& p = *impl_;
  for (auto& stream : graph.streams()) {
    const auto s = static_cast<std::size_t>(stream->index);
    bool remote_producers = false;
    for (std::size_t h = 0; h < p.hosts.size(); ++h) {
      if (static_cast<int>(h) != p.self && p.host_produces[s][h]) remote_producers = true;
    }
    if (!remote_producers) continue;
    for (std::size_t c = 0; c < stream->channels.size(); ++c) {
      InputChannel* channel = stream->channels[c].get();
      if (channel == nullptr) continue;
      const std::uint32_t batch = std::max<std::uint32_t>(1, p.window[s][c] / 2);
      p.landings[s][c] = std::make_unique<Landing>(p, static_cast<int>(s), static_cast<int>(c), channel,
                                                   p.hosts.size(), batch);
      channel->set_pop_observer(p.landings[s][c].get());
    }
  }
  // Publish to the I/O thread (the post orders these writes before its reads).
  asio::post(p.io, [&p, &graph] {
    p.graph = &graph;
    p.graph_ready_io = true;
    for (std::size_t h = 0; h < p.hosts.size(); ++h) p.grant_initial(static_cast<int>(h));
  });
}

void DataPlane::connect(const std::map<std::string, std::string>& peers, std::chrono::milliseconds timeout) {
  DataPlaneState& p = *impl_;
  for (std::size_t h = 0; h < p.hosts.size(); ++h) {
    if (!p.receives_from_me[h]) continue;
    auto found = peers.find(p.hosts[h]);
    if (found == peers.end()) {
      throw Error("data plane: no address for host '" + p.hosts[h] + "', which this host sends to");
    }
    asio::post(p.io, [&p, h, address = found->second] { p.start_outbound(static_cast<int>(h), address); });
  }
  std::unique_lock<std::mutex> lock(p.mu);
  auto all_up = [&] {
    for (std::size_t h = 0; h < p.hosts.size(); ++h) {
      if (p.receives_from_me[h] && !p.out_up[h]) return false;
      if (p.sends_to_me[h] && !p.in_up[h]) return false;
    }
    return true;
  };
  p.changed.wait_for(lock, timeout, [&] { return all_up() || p.failure.has_value(); });
  if (p.failure) throw Error("data plane: " + *p.failure);
  if (all_up()) return;
  std::string message = "data plane of host '" + p.hosts[static_cast<std::size_t>(p.self)] + "' could not connect within " +
                        std::to_string(timeout.count()) + " ms:";
  for (std::size_t h = 0; h < p.hosts.size(); ++h) {
    if (p.receives_from_me[h] && !p.out_up[h]) {
      message += " host '" + p.hosts[h] + "' at " + peers.at(p.hosts[h]) + " did not answer (" + p.out_error[h] + ");";
    }
    if (p.sends_to_me[h] && !p.in_up[h]) {
      message += " host '" + p.hosts[h] + "' did not connect to " + p.address + ";";
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
  DataPlaneState& p = *impl_;
  {
    std::lock_guard<std::mutex> lock(p.mu);
    if (p.stopped) return;
  }
  if (p.thread.joinable()) {
    // Say BYE on every identified link, give the writes a moment, then cancel everything.
    // (The promises are shared: a handler that runs after we stopped waiting must not
    // touch a dead one.)
    auto said = std::make_shared<std::promise<void>>();
    asio::post(p.io, [&p, said] {
      for (auto& link : p.outbound) {
        if (link != nullptr) link->say_bye();
      }
      for (auto& link : p.inbound) {
        if (link != nullptr) link->say_bye();
      }
      said->set_value();
    });
    said->get_future().wait_for(std::chrono::seconds(1));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    while (std::chrono::steady_clock::now() < deadline) {
      auto idle = std::make_shared<std::promise<bool>>();
      asio::post(p.io, [&p, idle] {
        bool all = true;
        for (auto& link : p.outbound) all = all && (link == nullptr || link->write_idle());
        for (auto& link : p.inbound) all = all && (link == nullptr || link->write_idle());
        idle->set_value(all);
      });
      auto f = idle->get_future();
      if (f.wait_for(std::chrono::seconds(1)) != std::future_status::ready || f.get()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    p.stopping.store(true);
    {
      std::lock_guard<std::mutex> lock(p.mu);
      p.stopped = true;  // from here on, failures are ours: not reported
    }
    asio::post(p.io, [&p] {
      boost::system::error_code ignored;
      p.acceptor.close(ignored);
      for (auto& link : p.outbound) {
        if (link != nullptr) link->close();
      }
      for (auto& link : p.inbound) {
        if (link != nullptr) link->close();
      }
      std::vector<std::shared_ptr<Link>> pending(p.unidentified.begin(), p.unidentified.end());
      for (auto& link : pending) link->close();
      p.unidentified.clear();
      p.work.reset();
    });
    p.thread.join();
  }
  p.stopping.store(true);
  {
    std::lock_guard<std::mutex> lock(p.mu);
    p.stopped = true;
  }
  for (auto& stream : p.landings) {
    for (auto& landing : stream) {
      if (landing != nullptr) landing->release_held();
    }
  }
}

}  // namespace sluice
