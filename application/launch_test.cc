// launch_and_wire (console/launch_app.h) against real host daemons: while the client's data
// plane waits for the hosts to connect, the hosts must still be heard and sent heartbeats.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "application/daemons_fixture.h"
#include "console/connect_hosts.h"
#include "console/host_group.h"
#include "console/host_stats.h"
#include "console/launch_app.h"
#include "console/remote.h"
#include "control/auth.h"
#include "runtime/placement.h"
#include "sluice/error.h"
#include "topology/topology.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

// No `to: client` stream: the slow client below stands for one whose data port is slow to
// be reached (busy, or the machine out of descriptors for a while).
const std::string kTopology = std::string("name: launch-test\n") +
                              "hosts: {a: 127.0.0.1:1, b: 127.0.0.1:1}\n"
                              "filters:\n"
                              "  src:   {class: AppSource, library: " SLUICE_APP_FILTERS_LIB ", place: {a: 1}}\n"
                              "  stage: {class: AppStage, library: " SLUICE_APP_FILTERS_LIB ", place: {b: 1}}\n"
                              "streams:\n"
                              "  - {from: src.out, to: stage.in, depth: 4, buffer_size: 4KiB}\n";

TEST(LaunchAndWire, TheHostsStayHeardWhileTheClientWaitsForItsConnections) {
  HostDaemons daemons(SLUICE_SLUICED, {"a", "b"});
  topo::Topology t = topo::parse_topology_text(kTopology, "launch-test.yaml", "/tmp");
  console::apply_hosts_option(t, daemons.hosts());
  console::ControlOptions control;
  control.token_file = daemons.token_file();
  const std::optional<console::Credentials> credentials = console::load_credentials(control);
  ASSERT_TRUE(credentials);
  std::vector<std::unique_ptr<console::HostClient>> clients = console::connect_all(t, *credentials, false);
  ASSERT_EQ(clients.size(), 2u);
  const std::map<std::string, Placement> placements = console::place_with_client(t);
  console::HostStats stats(t, clients.size());
  console::HostGroup hosts(std::move(clients), placements, stats);
  hosts.set_take_signals(false);
  hosts.start_readers();
  console::LaunchPlan plan;
  plan.topology = &t;
  plan.placements = &placements;
  plan.run_key = control::random_bytes(32);
  // Twice the host daemons' patience with a silent console (3 s, control/tls_session.h).
  const auto slow = 2 * std::chrono::milliseconds(3000);
  int calls = 0;
  const console::ConnectClient slow_client = [&](const std::map<std::string, std::string>& peers,
                                                 const std::function<bool()>& between) {
    EXPECT_EQ(peers.size(), 2u);
    const auto until = std::chrono::steady_clock::now() + slow;
    while (std::chrono::steady_clock::now() < until) {
      if (!between()) throw Error("the launch failed meanwhile");
      ++calls;
      std::this_thread::sleep_for(50ms);
    }
  };
  const bool started = console::launch_and_wire(hosts, plan, slow_client, [] {});
  EXPECT_TRUE(started) << (hosts.failure() ? hosts.failure()->str() : "");
  EXPECT_GE(calls, 60);
  hosts.teardown(false);
}

}  // namespace
}  // namespace sluice
