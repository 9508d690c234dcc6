// Routes: who talks to whom in the data plane, derived once from the topology and the
// whole application's placement: on which host each producer and consumer copy runs,
// which hosts this one sends to and hears from, each (stream, consumer copy)'s credit
// window per sending host, and the fingerprint both ends of a connection must agree on.
//
// Immutable after construction; safe to read from any thread.
#ifndef SLUICE_NET_ROUTES_H_
#define SLUICE_NET_ROUTES_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "net/frame.h"
#include "runtime/placement.h"
#include "topology/topology.h"

namespace sluice::net {

// The credit window of a stream across hosts for one producer copy: how many frames each
// producer copy on a sending host may have in flight to one consumer copy before credit comes
// back (a host's window is this times its producer copies: Routes::window). The stream's queue (its depth,
// rounded up to a power of two), but never less than the default depth for its buffer size
// without that default's floor of 16 (topo::default_depth: a MiB's worth of buffers, up to
// 1024), so the depth alone rules at 1 MiB and more:
// the window is what a connection can carry per round trip, and a depth chosen to keep a
// local queue short (64 at 100 B: 6.4 KB a round trip) ran ~4x slower across two daemons
// than the default 1024 (bench/RESULTS.md "2026-12-16"). The frames land in a pool of their
// own on the consumer's host (Graph::landing_blocks), so this bounds that host's memory
// as depth bounds a queue's: at most 1 MiB more per sending host and consumer copy than
// the depth alone would.
std::uint32_t remote_window(std::size_t depth, std::size_t buffer_size);

class Routes {
 public:
  // `placements`: every host's Placement; `self`: this process's host, one of its keys.
  // Throws sluice::Error when self is not placed or a copy runs nowhere.
  // `encrypt_all`: every stream travels over TLS (sluice run --encrypt), not only those with
  // encrypt: true.
  Routes(const topo::Topology& topology, const std::map<std::string, Placement>& placements,
         const std::string& self, bool encrypt_all = false);

  // Host indices refer to hosts(), sorted by name.
  const std::vector<std::string>& hosts() const { return hosts_; }
  int self() const { return self_; }
  const std::string& self_name() const { return hosts_[static_cast<std::size_t>(self_)]; }
  // -1 when `name` is not a host of this run.
  int host_index(const std::string& name) const;
  // "host 'b'", for messages.
  std::string host_label(int host) const;

  std::size_t stream_count() const { return producer_host_.size(); }
  // The host that runs producer (consumer) copy `copy` of `stream`.
  int producer_host(std::size_t stream, std::uint32_t copy) const { return producer_host_[stream][copy]; }
  int consumer_host(std::size_t stream, std::uint32_t copy) const { return consumer_host_[stream][copy]; }
  std::size_t consumer_copies(std::size_t stream) const { return consumer_host_[stream].size(); }
  // How many producer copies of `stream` run on `host`; true when some do.
  std::uint32_t producers_on(std::size_t stream, int host) const {
    return producers_on_[stream][static_cast<std::size_t>(host)];
  }
  bool host_produces(std::size_t stream, int host) const { return producers_on(stream, host) != 0; }
  // True when a local consumer copy of `stream` has producers on other hosts.
  bool lands_here(std::size_t stream) const;
  // The credits `sender` holds for each consumer copy of `stream`: remote_window for each of
  // its producer copies. Embedded, each producer copy has a lane of the consumer's queue to
  // itself; across hosts the copies on one host share its window, so the window grows with
  // them: copies that share one window of a single copy's size starved each other (one
  // copy's buffers and end of work held all of it while the consumer read another input
  // first), and a graph that finished embedded hung across hosts (an outside review).
  std::uint32_t window(std::size_t stream, int sender) const { return window_[stream] * producers_on(stream, sender); }
  // One producer copy's share of it: remote_window.
  std::uint32_t copy_window(std::size_t stream) const { return window_[stream]; }
  // The most frames of `stream` that other hosts can have sent to consumer copy `copy` and
  // not had credit back for: the windows of the hosts other than its own, summed.
  std::size_t landing_room(std::size_t stream, std::uint32_t copy) const;
  // The same, summed over this host's consumer copies of `stream`.
  std::size_t landing_room(std::size_t stream) const;
  // Hosts this one sends data to / receives data from.
  bool sends_to(int host) const { return sends_to_[static_cast<std::size_t>(host)]; }
  bool hears_from(int host) const { return hears_from_[static_cast<std::size_t>(host)]; }

  // True when the connection from `sender` to `receiver` runs TLS: it carries a stream
  // that must be encrypted.
  bool encrypted(int sender, int receiver) const {
    return encrypted_[static_cast<std::size_t>(sender)][static_cast<std::size_t>(receiver)];
  }
  // True when some connection to or from this host runs TLS.
  bool any_encrypted() const;

  // Over the streams (ends, sizes, copies, policy, encryption) and every host's placement.
  std::uint64_t fingerprint() const { return fingerprint_; }
  // Per stream: what a frame's fields may be.
  const std::vector<StreamLimits>& limits() const { return limits_; }

 private:
  std::vector<std::string> hosts_;
  int self_ = -1;
  std::vector<std::vector<int>> producer_host_;  // [stream][producer copy] -> host
  std::vector<std::vector<int>> consumer_host_;  // [stream][consumer copy] -> host
  std::vector<std::vector<std::uint32_t>> producers_on_;  // [stream][host]: producer copies there
  std::vector<std::uint32_t> window_;  // [stream]: remote_window, per producer copy
  std::vector<bool> sends_to_;    // [host]
  std::vector<bool> hears_from_;  // [host]
  std::vector<std::vector<bool>> encrypted_;  // [sender][receiver]
  std::uint64_t fingerprint_ = 0;
  std::vector<StreamLimits> limits_;
};

}  // namespace sluice::net

#endif  // SLUICE_NET_ROUTES_H_
