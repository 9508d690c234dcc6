#!/usr/bin/env bash
# net_bench across a veth pair: two network namespaces (10.77.1.1/24 and 10.77.1.2/24, only
# inside namespaces this script creates) joined by a veth pair; host a of net_bench and every
# peer's client in the first, host b and every peer's server in the second. Needs root and
# `ip netns`; says so and exits 0 otherwise. Removes every namespace, veth and process it
# made, also on failure or interrupt.
#   bench/net_veth.sh [BUILD] [net_bench args...]     (default: build --reps 5)
set -uo pipefail
BUILD=${1:-build}
shift || true
[ $# -gt 0 ] || set -- --reps "${BENCH_REPS:-5}"
if [ "$(id -u)" -ne 0 ]; then
  echo "## Remote C++ -> C++ stream across a veth pair"
  echo
  echo "Skipped: needs root to create network namespaces (run \`sudo make bench\` or \`sudo bench/net_veth.sh\`)."
  exit 0
fi
if ! command -v ip >/dev/null || ! ip netns list >/dev/null 2>&1; then
  echo "Skipped: \`ip netns\` is not available (install iproute2)."
  exit 0
fi
tag="nb$(( $$ % 100000 ))"
ns_a="$tag-a"; ns_b="$tag-b"; veth_a="${tag}va"; veth_b="${tag}vb"
bench_pid=""
cleanup() {
  # net_bench and its forked children are in their own process group (set -m below).
  if [ -n "$bench_pid" ] && kill -0 "$bench_pid" 2>/dev/null; then kill -KILL -- "-$bench_pid" 2>/dev/null; fi
  # Peers' servers started in ns b (iperf3 -s -1 exits by itself; sockperf sr is killed by
  # net_bench): anything still running there is ours.
  for pid in $(ip netns pids "$ns_b" 2>/dev/null) $(ip netns pids "$ns_a" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
  ip netns del "$ns_a" 2>/dev/null
  ip netns del "$ns_b" 2>/dev/null
  ip link del "$veth_a" 2>/dev/null
  true
}
trap cleanup EXIT
trap 'exit 130' INT TERM
ip netns add "$ns_a" && ip netns add "$ns_b" &&
  ip link add "$veth_a" type veth peer name "$veth_b" &&
  ip link set "$veth_a" netns "$ns_a" && ip link set "$veth_b" netns "$ns_b" &&
  ip -n "$ns_a" addr add 10.77.1.1/24 dev "$veth_a" && ip -n "$ns_b" addr add 10.77.1.2/24 dev "$veth_b" &&
  ip -n "$ns_a" link set "$veth_a" up && ip -n "$ns_b" link set "$veth_b" up &&
  ip -n "$ns_a" link set lo up && ip -n "$ns_b" link set lo up || { echo "cannot set up namespaces and veth" >&2; exit 1; }
set -m
ip netns exec "$ns_a" "$BUILD/bench/net_bench" "$@" --peer-netns "$ns_b" --addr-a 10.77.1.1 --addr-b 10.77.1.2 &
bench_pid=$!
set +m
wait "$bench_pid"
status=$?
bench_pid=""
exit $status
