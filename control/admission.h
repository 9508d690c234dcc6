// Admission: caps the connections a control server (sluiced, sluice serve) holds before
// they are authenticated (TLS handshake and hello still to come), in total and per source
// address, so that a flood of idle or slow connections costs a bounded number of
// descriptors and sessions and cannot crowd out everyone else. Beyond a cap, a new
// connection is closed at once (accept_loop.h).
//
// Not thread-safe: the server's io_context thread (AcceptLoop). Must outlive every Ticket.
#ifndef SLUICE_CONTROL_ADMISSION_H_
#define SLUICE_CONTROL_ADMISSION_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace sluice::control {

class Admission {
 public:
  // Default: 64 connections authenticating at once, 8 of them from one address.
  static constexpr std::size_t kTotal = 64;
  static constexpr std::size_t kPerAddress = 8;

  // A connection counted against the caps until the ticket is released or destroyed.
  class Ticket {
   public:
    Ticket() = default;
    Ticket(Ticket&& other) noexcept { *this = std::move(other); }
    Ticket& operator=(Ticket&& other) noexcept;
    ~Ticket() { release(); }
    // Stops counting this connection (it authenticated, or it is gone). Idempotent.
    void release();

   private:
    friend class Admission;
    Ticket(Admission* owner, std::string address) : owner_(owner), address_(std::move(address)) {}
    Admission* owner_ = nullptr;
    std::string address_;
  };

  explicit Admission(std::size_t total = kTotal, std::size_t per_address = kPerAddress)
      : total_cap_(total), per_address_cap_(per_address) {}
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;

  // A ticket for a new connection from `address`, or nullopt, with `*why` set, when it
  // would exceed a cap (the refusal is counted).
  std::optional<Ticket> admit(const std::string& address, std::string* why);

  std::size_t pending() const { return pending_; }
  std::size_t pending_from(const std::string& address) const;
  std::uint64_t refused() const { return refused_; }

 private:
  void release(const std::string& address);

  const std::size_t total_cap_;
  const std::size_t per_address_cap_;
  std::size_t pending_ = 0;
  std::map<std::string, std::size_t> by_address_;  // addresses with pending connections only
  std::uint64_t refused_ = 0;
};

}  // namespace sluice::control

#endif  // SLUICE_CONTROL_ADMISSION_H_
