// Several "hosts" in one test process: one Engine and one DataPlane each, on loopback
// ports, connected to each other, driven unit by unit (one thread per engine, a barrier
// between units, as the console does).
#ifndef SLUICE_TESTS_NET_CLUSTER_H_
#define SLUICE_TESTS_NET_CLUSTER_H_

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "net/data_plane.h"
#include "runtime/backends.h"
#include "runtime/engine.h"
#include "topology/topology.h"

namespace testing_filters {

// "filter" -> copies on this host, e.g. {{"src", {0}}, {"sink", {1}}}.
inline sluice::Placement place(std::map<std::string, std::vector<int>> local) {
  sluice::Placement p;
  p.local = std::move(local);
  return p;
}

struct ClusterOptions {
  std::chrono::milliseconds connect_timeout{5000};
  // Called with every host's data address after the planes listen, before they connect.
  std::function<void(const sluice::topo::Topology&, const std::map<std::string, std::string>& peers)> before_connect;
};

class Cluster {
 public:
  struct Host {
    std::string name;
    std::unique_ptr<sluice::DataPlane> plane;
    std::unique_ptr<sluice::Engine> engine;
  };

  // Builds every host's data plane and engine and connects them. Throws on failure (the
  // destructor of what was built still runs: every thread and socket goes).
  Cluster(const std::string& yaml, std::map<std::string, sluice::Placement> placements, ClusterOptions options = {})
      : topology_(sluice::topo::parse_topology_text(yaml, "test.yaml", SLUICE_TEST_DATA_DIR)),
        options_(std::move(options)) {
    try {
      build(placements);
    } catch (...) {
      teardown();
      throw;
    }
  }

  ~Cluster() { teardown(); }

  // Runs every unit of the topology's work on every host; per unit, each host's engine in
  // its own thread. Returns the first failure (host order), or nullopt.
  std::optional<std::string> run_all() {
    for (std::size_t u = 0; u < topology_.work.size(); ++u) {
      if (auto failure = run_unit(u)) return failure;
    }
    return std::nullopt;
  }

  // Runs unit u on every host. A unit that has not finished everywhere within `limit`
  // is cancelled on every host and reported as "did not finish within N s" (a hang is a
  // test failure, not a stuck suite).
  std::optional<std::string> run_unit(std::size_t u,
                                      std::chrono::milliseconds limit = std::chrono::seconds(60)) {
    std::vector<std::optional<sluice::Failure>> failures(hosts_.size());
    std::vector<std::thread> threads;
    std::mutex mu;
    std::condition_variable done_cv;
    std::size_t done = 0;
    for (std::size_t i = 0; i < hosts_.size(); ++i) {
      threads.emplace_back([&, i] {
        failures[i] = hosts_[i]->engine->run_unit(u, topology_.work[u]);
        std::lock_guard<std::mutex> lock(mu);
        ++done;
        done_cv.notify_all();
      });
    }
    bool hung = false;
    std::string where;  // what every copy and stream was doing when the limit struck
    {
      std::unique_lock<std::mutex> lock(mu);
      if (!done_cv.wait_for(lock, limit, [&] { return done == hosts_.size(); })) {
        hung = true;
        lock.unlock();
        where = hang_report();
        for (auto& host : hosts_) host->engine->cancel("the test's time limit");
      }
    }
    for (auto& t : threads) t.join();
    if (hung) {
      return "unit " + std::to_string(u) + " did not finish within " +
             std::to_string(std::chrono::duration_cast<std::chrono::seconds>(limit).count()) + " s\n" + where;
    }
    for (auto& f : failures) {
      if (f) return f->str();
    }
    return std::nullopt;
  }

  // Per host: each copy's stage and what it waits on, each stream's counters, and what
  // its data plane holds in flight.
  std::string hang_report() const {
    std::string out;
    for (const auto& host : hosts_) {
      out += "host " + host->name + (host->plane->failure() ? " (data plane: " + *host->plane->failure() + ")" : "") +
             ":\n";
      for (const sluice::CopyActivity& a : host->engine->activity()) {
        out += "  " + a.filter + "#" + std::to_string(a.copy) + " unit " + std::to_string(a.unit) + " " + a.stage;
        if (!a.waiting_for.empty()) out += ", waiting to " + a.waiting_for + " on " + a.stream;
        out += "\n";
      }
      for (const sluice::StreamStats& st : host->engine->stream_stats()) {
        out += "  " + st.label + ": written " + std::to_string(st.buffers) + ", read " + std::to_string(st.consumed) +
               ", queued " + std::to_string(st.queued) + " of " + std::to_string(st.capacity) + "\n";
      }
      out += host->plane->in_flight();
    }
    return out;
  }

  Host& host(const std::string& name) {
    for (auto& h : hosts_) {
      if (h->name == name) return *h;
    }
    throw sluice::Error("no host " + name);
  }
  const sluice::topo::Topology& topology() const { return topology_; }
  // The run key every host of a test cluster shares.
  static std::string key() { return "test-cluster-run-key-0123456789"; }

 private:
  void build(const std::map<std::string, sluice::Placement>& placements) {
    sluice::check_loadable(topology_);
    for (auto& [name, placement] : placements) {
      auto host = std::make_unique<Host>();
      host->name = name;
      sluice::DataPlaneOptions options;
      options.key = key();
      host->plane = std::make_unique<sluice::DataPlane>(topology_, placements, name, options);
      hosts_.push_back(std::move(host));
    }
    for (auto& host : hosts_) {
      sluice::EngineOptions options;
      options.host = host->name;
      options.placement = placements.at(host->name);
      options.wiring = host->plane.get();
      options.abort_grace = std::chrono::milliseconds(3000);
      host->engine = std::make_unique<sluice::Engine>(topology_, options);
      sluice::Engine* engine = host->engine.get();
      host->plane->set_failure_callback([engine](const std::string& why) { engine->cancel(why); });
    }
    std::map<std::string, std::string> peers;
    for (auto& host : hosts_) peers[host->name] = host->plane->listen_address();
    if (options_.before_connect) options_.before_connect(topology_, peers);
    std::vector<std::string> errors(hosts_.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < hosts_.size(); ++i) {
      threads.emplace_back([&, i] {
        try {
          hosts_[i]->plane->connect(peers, options_.connect_timeout);
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
      });
    }
    for (auto& t : threads) t.join();
    for (auto& e : errors) {
      if (!e.empty()) throw sluice::Error(e);
    }
    for (auto& host : hosts_) {
      if (auto failure = host->engine->start()) throw sluice::Error(failure->str());
    }
  }

  void teardown() {
    for (auto& host : hosts_) {
      if (host->engine) host->engine->cancel("test over");
    }
    for (auto& host : hosts_) host->plane->stop();
    for (auto& host : hosts_) host->engine.reset();
    hosts_.clear();
  }

  sluice::topo::Topology topology_;
  ClusterOptions options_;
  std::vector<std::unique_ptr<Host>> hosts_;
};

}  // namespace testing_filters

#endif  // SLUICE_TESTS_NET_CLUSTER_H_
