#include "net/plane_state.h"

#include <algorithm>
#include <iostream>
#include <utility>

#include "net/data_plane.h"
#include "net/link.h"

namespace sluice::net {

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

}  // namespace sluice::net
