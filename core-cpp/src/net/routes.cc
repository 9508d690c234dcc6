#include "net/routes.h"

#include <algorithm>
#include <bit>

#include "sluice/error.h"

namespace sluice::net {

namespace {

void fnv(std::uint64_t& h, const std::string& s) {
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  h = (h ^ 0xff) * 0x100000001b3ULL;
}

}  // namespace

std::uint32_t remote_window(std::size_t depth, std::size_t buffer_size) {
  const std::size_t queue = std::bit_ceil(std::max<std::size_t>(depth, 1));
  const std::size_t fits = std::bit_floor(std::max<std::size_t>(topo::kDefaultQueueBytes / std::max<std::size_t>(buffer_size, 1), 1));
  return static_cast<std::uint32_t>(std::max(queue, std::min(fits, topo::kMaxDefaultDepth)));
}

Routes::Routes(const topo::Topology& topology, const std::map<std::string, Placement>& placements,
               const std::string& self, bool encrypt_all) {
  for (const auto& [name, placement] : placements) hosts_.push_back(name);
  self_ = host_index(self);
  if (self_ < 0) throw Error("data plane: this host '" + self + "' has no placement");
  const std::size_t nhosts = hosts_.size();

  fingerprint_ = 0xcbf29ce484222325ULL;
  for (const topo::StreamSpec& spec : topology.streams) {
    const int from_copies = topology.copies_of(spec.from.filter);
    const int to_copies = topology.copies_of(spec.to.filter);  // the client: one
    auto locate = [&](const std::string& filter, int copies) {
      std::vector<int> where(static_cast<std::size_t>(copies), -1);
      for (std::size_t h = 0; h < nhosts; ++h) {
        for (int c = 0; c < copies; ++c) {
          if (placements.at(hosts_[h]).runs_here(filter, c)) where[static_cast<std::size_t>(c)] = static_cast<int>(h);
        }
      }
      for (int c = 0; c < copies; ++c) {
        if (where[static_cast<std::size_t>(c)] < 0) {
          throw Error("data plane: copy " + std::to_string(c) + " of '" + filter + "' is placed on no host");
        }
      }
      return where;
    };
    producer_host_.push_back(locate(spec.from.filter, from_copies));
    consumer_host_.push_back(locate(spec.to.filter, to_copies));
    std::vector<std::uint32_t> producers(nhosts, 0);
    for (int h : producer_host_.back()) ++producers[static_cast<std::size_t>(h)];
    producers_on_.push_back(producers);
    const std::uint32_t window = remote_window(spec.depth, spec.buffer_size);
    window_.push_back(window);
    const std::uint32_t most_copies = *std::max_element(producers.begin(), producers.end());
    limits_.push_back(StreamLimits{static_cast<std::uint32_t>(from_copies), static_cast<std::uint32_t>(to_copies),
                                   static_cast<std::uint32_t>(spec.buffer_size), window * most_copies});
    fnv(fingerprint_, spec.from.str());
    fnv(fingerprint_, spec.to.str());
    fnv(fingerprint_, std::to_string(spec.buffer_size) + "/" + std::to_string(spec.depth) + "/w" + std::to_string(window) + "/" +
                          std::to_string(from_copies) + "/" + std::to_string(to_copies) + "/" +
                          topo::to_string(spec.policy) + (spec.encrypt || encrypt_all ? "/tls" : ""));
  }
  for (std::size_t h = 0; h < nhosts; ++h) {
    fnv(fingerprint_, hosts_[h]);
    for (const auto& [filter, copies] : placements.at(hosts_[h]).local) {
      fnv(fingerprint_, filter);
      for (int c : copies) fnv(fingerprint_, std::to_string(c));
    }
  }

  sends_to_.assign(nhosts, false);
  hears_from_.assign(nhosts, false);
  encrypted_.assign(nhosts, std::vector<bool>(nhosts, false));
  for (std::size_t s = 0; s < producer_host_.size(); ++s) {
    const bool encrypt = topology.streams[s].encrypt || encrypt_all;
    for (int ph : producer_host_[s]) {
      for (int ch : consumer_host_[s]) {
        if (ph == ch) continue;
        if (encrypt) encrypted_[static_cast<std::size_t>(ph)][static_cast<std::size_t>(ch)] = true;
        if (ch == self_) hears_from_[static_cast<std::size_t>(ph)] = true;
        if (ph == self_) sends_to_[static_cast<std::size_t>(ch)] = true;
      }
    }
  }
}

int Routes::host_index(const std::string& name) const {
  auto it = std::lower_bound(hosts_.begin(), hosts_.end(), name);
  return it != hosts_.end() && *it == name ? static_cast<int>(it - hosts_.begin()) : -1;
}

std::string Routes::host_label(int host) const { return "host '" + hosts_[static_cast<std::size_t>(host)] + "'"; }

std::size_t Routes::landing_room(std::size_t stream, std::uint32_t copy) const {
  const int consumer = consumer_host_[stream][copy];
  std::size_t room = 0;
  for (std::size_t h = 0; h < hosts_.size(); ++h) {
    if (static_cast<int>(h) != consumer) room += window(stream, static_cast<int>(h));
  }
  return room;
}

std::size_t Routes::landing_room(std::size_t stream) const {
  std::size_t room = 0;
  for (std::uint32_t c = 0; c < consumer_host_[stream].size(); ++c) {
    if (consumer_host_[stream][c] == self_) room += landing_room(stream, c);
  }
  return room;
}

bool Routes::any_encrypted() const {
  for (std::size_t h = 0; h < hosts_.size(); ++h) {
    if (encrypted(self_, static_cast<int>(h)) || encrypted(static_cast<int>(h), self_)) return true;
  }
  return false;
}

bool Routes::lands_here(std::size_t stream) const {
  for (std::size_t h = 0; h < hosts_.size(); ++h) {
    if (static_cast<int>(h) == self_ || !host_produces(stream, static_cast<int>(h))) continue;
    for (int ch : consumer_host_[stream]) {
      if (ch == self_) return true;
    }
  }
  return false;
}

}  // namespace sluice::net
