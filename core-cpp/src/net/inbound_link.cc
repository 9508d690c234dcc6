#include "net/inbound_link.h"

#include <string>

namespace sluice::net {

Landing* InboundLink::admit_frame(std::uint32_t stream, std::uint32_t producer, std::uint32_t consumer,
                                  FrameKind kind) {
  auto where = [&] {
    return std::string(frame_kind_name(kind)) + " on stream " + std::to_string(stream);
  };
  if (!side_.attached()) {
    protocol_error(where() + " before this host granted any credit");
    return nullptr;
  }
  if (env_.routes.producer_host(stream, producer) != host()) {
    protocol_error(where() + " from producer copy " + std::to_string(producer) + ", which does not run on that host");
    return nullptr;
  }
  Landing* landing = side_.landing(stream, consumer);
  if (landing == nullptr) {
    protocol_error(where() + " for consumer copy " + std::to_string(consumer) + ", which does not run on this host");
    return nullptr;
  }
  if (!landing->take_credit(host())) {
    protocol_error(where() + " for consumer copy " + std::to_string(consumer) + " without credit");
    return nullptr;
  }
  return landing;
}

bool InboundLink::on_frame(const Frame& frame) {
  if (const auto* data = std::get_if<DataFrame>(&frame)) {
    if (admit_frame(data->stream, data->producer, data->consumer, FrameKind::kData) == nullptr) return false;
    data_ = *data;
    ParkingLot& lot = side_.lot(data->stream);
    if (lot.empty()) {
      if (std::optional<Buffer> buffer = side_.pool(data->stream).try_acquire()) {
        std::byte* payload = buffer->data();  // from the pool: the slot is not read
        slot_ = detail::BufferAccess::unwrap(*buffer);
        expect_payload(payload, data->size);
        return true;
      }
    }
    const ParkingLot::Spot spot = lot.park(*data);
    ticket_ = spot.ticket;
    expect_payload(spot.payload, data->size);
    return true;
  }
  if (const auto* end = std::get_if<EndOfWorkFrame>(&frame)) {
    Landing* landing = admit_frame(end->stream, end->producer, end->consumer, FrameKind::kEndOfWork);
    if (landing == nullptr) return false;
    ParkingLot& lot = side_.lot(end->stream);
    if (lot.empty()) {
      landing->land(Item::end_of_work(end->producer));
    } else {
      lot.park(*end);  // behind that stream's parked data
    }
    return true;
  }
  return protocol_error(std::string(frame_kind_name(kind_of(frame))) + " on a connection that carries data to this host");
}

bool InboundLink::on_payload() {
  if (slot_ == nullptr) {  // parked: now complete, it may move once a buffer is free
    side_.lot(data_.stream).arrived(ticket_);
    side_.unpark(data_.stream);
    return true;
  }
  Item item{slot_, data_.size, data_.producer, data_.key};
  slot_ = nullptr;
  side_.landing(data_.stream, data_.consumer)->land(item);
  return true;
}

bool InboundLink::on_authenticated() {
  std::string why;
  auto self = std::static_pointer_cast<InboundLink>(shared_from_this());
  if (!admit_(self, &why)) return protocol_error(why);
  return true;
}

void InboundLink::on_close() {
  if (slot_ != nullptr) {
    detail::release_slot(slot_);
    slot_ = nullptr;
  }
}

}  // namespace sluice::net
