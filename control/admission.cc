#include "control/admission.h"

#include <utility>

namespace sluice::control {

Admission::Ticket& Admission::Ticket::operator=(Ticket&& other) noexcept {
  if (this != &other) {
    release();
    owner_ = std::exchange(other.owner_, nullptr);
    address_ = std::move(other.address_);
  }
  return *this;
}

void Admission::Ticket::release() {
  if (owner_ != nullptr) std::exchange(owner_, nullptr)->release(address_);
}

std::optional<Admission::Ticket> Admission::admit(const std::string& address, std::string* why) {
  if (pending_ >= total_cap_) {
    ++refused_;
    *why = std::to_string(pending_) + " connections are authenticating already (the cap)";
    return std::nullopt;
  }
  if (pending_from(address) >= per_address_cap_) {
    ++refused_;
    *why = std::to_string(per_address_cap_) + " connections from " + address +
           " are authenticating already (the cap per address)";
    return std::nullopt;
  }
  ++pending_;
  ++by_address_[address];
  return Ticket(this, address);
}

std::size_t Admission::pending_from(const std::string& address) const {
  auto it = by_address_.find(address);
  return it == by_address_.end() ? 0 : it->second;
}

void Admission::release(const std::string& address) {
  auto it = by_address_.find(address);
  if (it == by_address_.end()) return;
  --pending_;
  if (--it->second == 0) by_address_.erase(it);
}

}  // namespace sluice::control
