#include "net/data_plane.h"

#include <algorithm>
#include <future>
#include <utility>

#include "net/link.h"
#include "net/plane_state.h"

namespace sluice {

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
