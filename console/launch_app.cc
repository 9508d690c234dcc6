#include "console/launch_app.h"

#include <chrono>
#include <fstream>
#include <sstream>

#include "control/auth.h"
#include "sluice/error.h"

namespace sluice::console {

namespace {

using namespace std::chrono_literals;
using control::Envelope;

constexpr auto kLaunchTimeout = 60s;  // app_ready / started (JVM start, library loading)

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string any_port_on(const std::string& ip) {
  if (ip.empty()) return "127.0.0.1:0";
  return (ip.find(':') != std::string::npos ? "[" + ip + "]" : ip) + ":0";
}

Envelope launch_message(const LaunchPlan& plan, const std::string& app_id, const std::string& text,
                        const HostClient& host) {
  const topo::Topology& t = *plan.topology;
  Envelope m;
  auto* l = m.mutable_launch();
  l->set_application_id(app_id);
  l->set_topology_text(text);
  l->set_topology_file(t.file);
  l->set_topology_dir(t.dir);
  l->set_host(host.name());
  l->set_data_key(plan.run_key);
  l->set_encrypt_data(plan.encrypt);
  // The data plane listens on the address the console reached this host at (resolved:
  // hosts: may name the host), on a free port.
  const std::string& ip = host.peer_ip();
  if (!ip.empty()) l->set_data_listen(any_port_on(ip));
  for (const auto& [name, placement] : *plan.placements) {
    auto* hp = l->add_placement();
    hp->set_host(name);
    for (const auto& [filter, copies] : placement.local) {
      auto& list = (*hp->mutable_copies())[filter];
      for (int c : copies) list.add_index(c);
    }
  }
  return m;
}

bool launch_everywhere(HostGroup& hosts, const LaunchPlan& plan, const std::function<void()>& tick) {
  const topo::Topology& t = *plan.topology;
  // What was parsed here (the file may have changed since; the Application's from_text has none).
  const std::string text = t.text.empty() ? read_file(t.file) : t.text;
  const std::string app_id = t.name + "-" + control::random_hex(4);
  for (int i : hosts.active()) hosts.client(i).send(launch_message(plan, app_id, text, hosts.client(i)));
  return hosts.wait_all(Envelope::kAppReady, 0, kLaunchTimeout, tick);
}

bool launch_and_wire(HostGroup& hosts, const LaunchPlan& plan, const ConnectClient& connect_client,
                     const std::function<void()>& tick) {
  if (!launch_everywhere(hosts, plan, tick)) return false;
  std::map<std::string, std::string> peers;  // the hosts' data planes
  for (const auto& [i, address] : hosts.data_addresses()) peers[hosts.client(i).name()] = address;
  Envelope w;
  w.mutable_wiring()->mutable_peers()->insert(peers.begin(), peers.end());
  for (const auto& [name, address] : plan.extra_peers) (*w.mutable_wiring()->mutable_peers())[name] = address;
  hosts.broadcast(w);
  std::set<int> started;
  if (connect_client) {
    // While the client's data plane waits for the hosts to connect (up to a minute when its
    // port is busy), the hosts are heard and sent their heartbeats, or their daemons would
    // drop this console as silent; and what they say (started, a failure) is kept.
    const auto between = [&] {
      tick();
      return hosts.poll(Envelope::kStarted, 0, started);
    };
    try {
      connect_client(peers, between);
    } catch (const std::exception& e) {
      hosts.fail_run(Failure{"", -1, std::string(topo::kClient), 0, "network", e.what()});
    }
  }
  return hosts.wait_all(Envelope::kStarted, 0, kLaunchTimeout, tick, std::move(started));
}

}  // namespace sluice::console
