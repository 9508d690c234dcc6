// A graph that finishes in one process finishes across hosts, whatever the placement and
// depths, with the same traffic on every stream.
//
// Random DAGs of 2-6 filters (sources, and mixers that read their inputs one after the
// other in a random order and forward or copy what they read to random outputs), random
// copies, policies, depths (1-8) and buffer sizes, placed at random over 2-3 hosts. Each
// graph runs embedded first; the ones that finish there (a mixer that drains one input
// before another can deadlock any runtime) must finish across hosts too, and every
// filter's input ports must see the same number of buffers and the same checksum.
//
// SLUICE_PROPERTY_SEED and SLUICE_PROPERTY_GRAPHS change the seed and the number of graphs;
// a failure prints the seed and the graph's YAML. (With the default seed, graph 41 hung
// the data plane before frames that find their pool empty were parked.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "net_cluster.h"
#include "runtime/engine.h"

namespace testing_filters {
namespace {

namespace fs = std::filesystem;

struct Generated {
  std::string yaml;  // with REPORT standing for the report directory
  std::vector<std::string> filters;
  std::map<std::string, int> copies;
};

// One random graph. Filter i only reads from filters before it, so the graph is acyclic.
Generated generate(std::mt19937& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const int n = pick(2, 6);
  std::vector<bool> source(static_cast<std::size_t>(n), false);
  source[0] = true;
  for (int i = 1; i < n - 1; ++i) source[static_cast<std::size_t>(i)] = pick(0, 3) == 0;
  struct Edge {
    int from, to;
    std::string from_port, to_port;
  };
  std::vector<Edge> edges;
  std::vector<int> outputs(static_cast<std::size_t>(n), 0);
  std::vector<std::vector<std::string>> inputs(static_cast<std::size_t>(n));
  auto connect = [&](int from, int to) {
    const std::string out = source[static_cast<std::size_t>(from)]
                                ? "out"
                                : "o" + std::to_string(outputs[static_cast<std::size_t>(from)]);
    const std::string in = "i" + std::to_string(inputs[static_cast<std::size_t>(to)].size());
    ++outputs[static_cast<std::size_t>(from)];
    inputs[static_cast<std::size_t>(to)].push_back(in);
    edges.push_back({from, to, out, in});
  };
  auto can_feed = [&](int from) { return !source[static_cast<std::size_t>(from)] || outputs[static_cast<std::size_t>(from)] == 0; };
  for (int i = 1; i < n; ++i) {
    if (source[static_cast<std::size_t>(i)]) continue;
    std::vector<int> candidates;
    for (int j = 0; j < i; ++j) {
      if (can_feed(j)) candidates.push_back(j);
    }
    std::shuffle(candidates.begin(), candidates.end(), rng);
    const int want = std::min<int>(static_cast<int>(candidates.size()), pick(1, 3));
    for (int k = 0; k < want; ++k) connect(candidates[static_cast<std::size_t>(k)], i);
  }
  // A source nobody reads gets a reader: the last mixer after it (the last filter is one).
  for (int j = 0; j < n; ++j) {
    if (source[static_cast<std::size_t>(j)] && outputs[static_cast<std::size_t>(j)] == 0) {
      for (int i = n - 1; i > j; --i) {
        if (!source[static_cast<std::size_t>(i)]) {
          connect(j, i);
          break;
        }
      }
    }
  }
  // (A mixer left without inputs reads nothing and ends at once: still a valid filter.)

  Generated g;
  static const char* policies[] = {"round_robin", "demand_driven", "by_key", "broadcast"};
  std::ostringstream y;
  y << "defaults: {buffer_size: " << (pick(0, 1) == 0 ? "256B" : "1KiB") << ", depth: " << pick(1, 8) << "}\n";
  y << "filters:\n";
  for (int i = 0; i < n; ++i) {
    const std::string name = "f" + std::to_string(i);
    const int copies = pick(1, 2);
    g.filters.push_back(name);
    g.copies[name] = copies;
    y << "  " << name << ": {class: " << (source[static_cast<std::size_t>(i)] ? "GSource" : "GMix")
      << ", library: " << SLUICE_GRAPH_FILTERS_LIB << ", copies: " << copies << ", args: {report: REPORT";
    if (source[static_cast<std::size_t>(i)]) {
      y << ", count: " << pick(20, 300) << ", size: " << pick(16, 200);
    } else {
      std::vector<std::string> order = inputs[static_cast<std::size_t>(i)];
      std::shuffle(order.begin(), order.end(), rng);
      std::string joined;
      for (const auto& port : order) joined += (joined.empty() ? "" : ",") + port;
      y << ", order: \"" << joined << "\"";
      std::string outs;
      for (int k = 0; k < outputs[static_cast<std::size_t>(i)]; ++k) {
        outs += (outs.empty() ? "" : ",") + std::string("o") + std::to_string(k);
      }
      if (!outs.empty()) y << ", outputs: \"" << outs << "\"";
      y << ", copy: " << (pick(0, 2) == 0 ? "true" : "false");
    }
    y << "}}\n";
  }
  y << "streams:\n";
  for (const Edge& e : edges) {
    y << "  - {from: f" << e.from << "." << e.from_port << ", to: f" << e.to << "." << e.to_port
      << ", policy: " << policies[pick(0, 3)] << ", depth: " << pick(1, 8) << "}\n";
  }
  y << "work: [one, two]\n";
  g.yaml = y.str();
  return g;
}

std::string with_report(std::string yaml, const fs::path& dir) {
  for (std::size_t at; (at = yaml.find("REPORT")) != std::string::npos;) yaml.replace(at, 6, dir.string());
  return yaml;
}

// "filter.port" -> (buffers, checksum), summed over copies and units.
std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> read_reports(const fs::path& dir) {
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const std::string filter = name.substr(0, name.find('.'));
    std::ifstream in(entry.path());
    std::string port;
    std::uint64_t buffers = 0, checksum = 0;
    while (in >> port >> buffers >> checksum) {
      auto& total = out[filter + "." + port];
      total.first += buffers;
      total.second += checksum;
    }
  }
  return out;
}

// Runs every unit embedded; false when a unit stops moving (no buffer written anywhere for
// `quiet`: a graph that deadlocks by design) or fails.
bool run_embedded(const std::string& yaml, std::chrono::milliseconds quiet, std::string* why) {
  sluice::topo::Topology topology = sluice::topo::parse_topology_text(yaml, "test.yaml", SLUICE_TEST_DATA_DIR);
  sluice::check_loadable(topology);
  sluice::EngineOptions options;
  options.abort_grace = std::chrono::milliseconds(2000);
  sluice::Engine engine(topology, options);
  if (auto failure = engine.start()) {
    *why = failure->str();
    return false;
  }
  auto moved = [&] {
    std::uint64_t total = 0;
    for (const auto& s : engine.stream_stats()) total += s.buffers;
    return total;
  };
  for (std::size_t u = 0; u < topology.work.size(); ++u) {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    std::thread watchdog([&] {
      std::unique_lock<std::mutex> lock(mu);
      std::uint64_t last = moved();
      auto last_change = std::chrono::steady_clock::now();
      while (!cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) {
        const std::uint64_t now = moved();
        if (now != last) {
          last = now;
          last_change = std::chrono::steady_clock::now();
        } else if (std::chrono::steady_clock::now() - last_change > quiet) {
          engine.cancel("no buffer moved for a while: deadlocked");
          return;
        }
      }
    });
    auto failure = engine.run_unit(u, topology.work[u]);
    {
      std::lock_guard<std::mutex> lock(mu);
      done = true;
    }
    cv.notify_all();
    watchdog.join();
    if (failure) {
      *why = failure->str();
      return false;
    }
  }
  return true;
}

// A random placement over `hosts` hosts; only hosts that run something are listed.
std::map<std::string, sluice::Placement> place_randomly(const Generated& g, int hosts, std::mt19937& rng) {
  std::map<std::string, sluice::Placement> out;
  for (const std::string& filter : g.filters) {
    for (int c = 0; c < g.copies.at(filter); ++c) {
      const std::string host = "h" + std::to_string(std::uniform_int_distribution<int>(0, hosts - 1)(rng));
      out[host].local[filter].push_back(c);
    }
  }
  if (out.size() == 1) {  // everything landed on one host: move one copy elsewhere
    auto& only = out.begin()->second.local;
    const std::string other = out.begin()->first == "h0" ? "h1" : "h0";
    auto& [filter, copies] = *only.begin();
    out[other].local[filter].push_back(copies.back());
    copies.pop_back();
    if (copies.empty()) only.erase(filter);
  }
  return out;
}

std::string describe(const std::map<std::string, sluice::Placement>& placements) {
  std::string out;
  for (const auto& [host, p] : placements) {
    out += host + ":";
    for (const auto& [filter, copies] : p.local) {
      for (int c : copies) out += " " + filter + "#" + std::to_string(c);
    }
    out += "\n";
  }
  return out;
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : fallback;
}

TEST(NetPropertyTest, RandomGraphsThatFinishEmbeddedFinishAcrossHostsWithTheSameTraffic) {
  const int seed = env_int("SLUICE_PROPERTY_SEED", 1);
  const int graphs = env_int("SLUICE_PROPERTY_GRAPHS", 60);
  std::mt19937 rng(static_cast<unsigned>(seed));
  const fs::path root = fs::temp_directory_path() / ("sluice-property-" + std::to_string(::getpid()));
  int compared = 0;
  for (int i = 0; i < graphs; ++i) {
    const Generated g = generate(rng);
    const auto placements = place_randomly(g, 2 + static_cast<int>(rng() % 2), rng);
    const fs::path dir = root / std::to_string(i);
    fs::create_directories(dir / "embedded");
    fs::create_directories(dir / "hosts");
    const std::string context = "seed " + std::to_string(seed) + ", graph " + std::to_string(i) + ":\n" +
                                g.yaml + describe(placements);
    std::string why;
    // Quiet for 1.5 s means deadlocked: long enough that a loaded machine does not make a
    // live graph look stuck (and skip it), short enough for the generator's dead ones.
    if (!run_embedded(with_report(g.yaml, dir / "embedded"), std::chrono::milliseconds(1500), &why)) {
      fs::remove_all(dir);
      continue;  // deadlocks (or fails) in one process: nothing to compare
    }
    ++compared;
    {
      Cluster cluster(with_report(g.yaml, dir / "hosts"), placements);
      for (std::size_t u = 0; u < cluster.topology().work.size(); ++u) {
        auto failure = cluster.run_unit(u, std::chrono::seconds(30));
        ASSERT_FALSE(failure) << *failure << "\n" << context;
      }
    }
    const auto want = read_reports(dir / "embedded");
    const auto got = read_reports(dir / "hosts");
    ASSERT_EQ(got, want) << context;
    fs::remove_all(dir);
  }
  fs::remove_all(root);
  std::cout << compared << " of " << graphs << " graphs finished embedded and were compared across hosts\n";
  EXPECT_GE(compared, graphs / 2) << "the generator makes too many graphs that deadlock in one process";
}

}  // namespace
}  // namespace testing_filters
