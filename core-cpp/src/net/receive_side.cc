#include "net/receive_side.h"

#include <cstring>
#include <string>

#include "net/inbound_link.h"

namespace sluice::net {

ReceiveSide::ReceiveSide(boost::asio::io_context& io, const Routes& routes)
    : io_(io),
      routes_(routes),
      landings_(routes.stream_count()),
      lots_(routes.stream_count()),
      unpark_(routes.stream_count()),
      armed_(routes.stream_count(), false),
      links_(routes.hosts().size()),
      raw_links_(std::make_unique<std::atomic<Connection*>[]>(routes.hosts().size())) {
  for (std::size_t s = 0; s < unpark_.size(); ++s) {
    unpark_[s].side = this;
    unpark_[s].stream = static_cast<std::uint32_t>(s);
  }
}

ReceiveSide::~ReceiveSide() = default;

void ReceiveSide::UnparkWhenReleased::run() noexcept {
  try {
    boost::asio::post(side->io_, [side = side, stream = stream] {
      side->armed_[stream] = false;
      side->unpark(stream);
    });
  } catch (...) {  // out of memory: the next release, or the stop, cleans up
  }
}

void ReceiveSide::attach(Graph& graph) {
  graph_ = &graph;
  for (auto& stream : graph.streams()) {
    const auto s = static_cast<std::size_t>(stream->index);
    if (!routes_.lands_here(s)) continue;
    landings_[s].resize(stream->channels.size());
    for (std::size_t c = 0; c < stream->channels.size(); ++c) {
      InputChannel* channel = stream->channels[c].get();
      if (channel == nullptr) continue;
      landings_[s][c] = std::make_unique<Landing>(routes_, *this, static_cast<std::uint32_t>(s),
                                                  static_cast<std::uint32_t>(c), *channel);
      // Room in the landed lane for every frame the sending hosts may have in flight to it.
      channel->attach_landing(landings_[s][c].get(), routes_.landing_room(s, static_cast<std::uint32_t>(c)));
    }
    // At most this many frames of the stream can be here and not popped (credit).
    lots_[s] = std::make_unique<ParkingLot>(routes_.landing_room(s), stream->spec->buffer_size);
  }
}

void ReceiveSide::mark_attached() {
  attached_ = true;
  for (std::size_t h = 0; h < links_.size(); ++h) {
    if (links_[h] != nullptr) grant_initial(static_cast<int>(h));
  }
}

bool ReceiveSide::claim(int host, std::shared_ptr<InboundLink> link) {
  auto& slot = links_[static_cast<std::size_t>(host)];
  if (slot != nullptr) return false;
  raw_links_[static_cast<std::size_t>(host)].store(link.get(), std::memory_order_release);
  slot = std::move(link);
  if (attached_) grant_initial(host);
  return true;
}

Connection* ReceiveSide::link_from(int host) const noexcept {
  return raw_links_[static_cast<std::size_t>(host)].load(std::memory_order_acquire);
}

void ReceiveSide::grant_initial(int host) {
  Connection& link = *links_[static_cast<std::size_t>(host)];
  for (std::size_t s = 0; s < landings_.size(); ++s) {
    if (!routes_.host_produces(s, host)) continue;
    for (std::size_t c = 0; c < landings_[s].size(); ++c) {
      Landing* landing = landings_[s][c].get();
      if (landing == nullptr) continue;
      const std::uint32_t credits = landing->open_window(host);
      link.send(CreditFrame{static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(c), credits});
    }
  }
}

Landing* ReceiveSide::landing(std::uint32_t stream, std::uint32_t copy) const {
  if (stream >= landings_.size() || copy >= landings_[stream].size()) return nullptr;
  return landings_[stream][copy].get();
}

void ReceiveSide::unpark(std::uint32_t stream) {
  ParkingLot& parked = *lots_[stream];
  BufferPool& buffers = pool(stream);
  while (!parked.empty()) {
    const ParkingLot::Parked frame = parked.front();
    // Its payload is still arriving (the connection goes on with it later): stop here;
    // InboundLink unparks again once it is in.
    if (!frame.complete) return;
    Landing& to = *landings_[stream][frame.consumer];
    if (frame.end_of_work) {
      to.land(Item::end_of_work(frame.producer));
      parked.pop();
      continue;
    }
    std::optional<Buffer> buffer = buffers.try_acquire();
    if (!buffer) {
      if (armed_[stream]) return;  // a release will run us again
      armed_[stream] = true;
      buffers.call_when_released(&unpark_[stream]);
      buffer = buffers.try_acquire();  // one that came back before we armed
      if (!buffer) return;
    }
    std::memcpy(buffer->data(), frame.payload, frame.size);
    detail::Slot* slot = detail::BufferAccess::unwrap(*buffer);
    to.land(Item{slot, frame.size, frame.producer, frame.key});
    parked.pop();
  }
}

std::string ReceiveSide::in_flight() const {
  std::string out;
  if (graph_ == nullptr) return out;
  for (std::size_t s = 0; s < landings_.size(); ++s) {
    if (landings_[s].empty()) continue;
    const StreamRuntime& stream = *graph_->streams()[s];
    out += "  landing " + stream.label + ":";
    for (std::size_t c = 0; c < landings_[s].size(); ++c) {
      const Landing* landing = landings_[s][c].get();
      if (landing == nullptr) continue;
      out += " copy " + std::to_string(c) + " holds back " + std::to_string(landing->held()) + " (credit left:";
      for (std::size_t h = 0; h < links_.size(); ++h) {
        if (static_cast<int>(h) == routes_.self() || !routes_.host_produces(s, static_cast<int>(h))) continue;
        out += " " + routes_.hosts()[h] + " " + std::to_string(landing->credit_left(static_cast<int>(h))) + "/" +
               std::to_string(landing->window(static_cast<int>(h)));
      }
      out += ");";
    }
    out += " " + std::to_string(lots_[s]->size()) + " parked" +
           (armed_[s] ? " waiting for a free buffer" : "") + ", " + std::to_string(stream.pool->available()) +
           " of " + std::to_string(stream.pool->count()) + " buffers free\n";
  }
  return out;
}

void ReceiveSide::release_held() {
  for (auto& stream : landings_) {
    for (auto& landing : stream) {
      if (landing != nullptr) landing->release_held();
    }
  }
}

}  // namespace sluice::net
