#!/usr/bin/env bash
# Installs the Debian packages sluice needs that are missing (as root; uses sudo otherwise).
# Safe to run again: it installs nothing when everything is there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libyaml-cpp-dev libgtest-dev nlohmann-json3-dev libcli11-dev   # core, console, tests
  libspdlog-dev                                                  # the log backend (core-cpp/src/log)
  libzmq3-dev iperf3 sockperf                                    # benchmark peers
  python3-matplotlib                                             # bench/seed_table.py's plot
  libboost-dev libboost-context-dev libprotobuf-dev protobuf-compiler libssl-dev      # daemons: Asio, control, TLS
  iproute2 nftables python3                                      # daemons' tests (ip netns, ss, nft)
  openssl                                                        # daemons' tests: certificates, s_client
  clang libclang-rt-14-dev                                       # libFuzzer runs of the decoders
  openjdk-17-jdk-headless maven                                  # Java filters
  slurmctld slurmd slurm-client munge                            # tests/slurm: a local Slurm cluster
  doxygen                                                        # the C++ API reference (docs/api)
  chromium prometheus                                            # --ui tests: headless page, promtool
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
