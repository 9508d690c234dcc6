// Data-plane frames (wire version 2): a fixed 32-byte little-endian header, then `size`
// payload bytes. Each kind has its own struct with named fields; on the wire they share
// one layout, and a field a kind does not use must be zero.
//
//   offset  size  field
//        0     2  magic     0x53 0x4c ("SL")
//        2     1  version   2
//        3     1  kind      DATA, END_OF_WORK, CREDIT, HELLO, AUTH, PING, BYE
//        4     4  stream    DATA, END_OF_WORK, CREDIT: index in the topology's streams
//        8     4  producer  DATA, END_OF_WORK: the writing copy
//       12     4  consumer  DATA, END_OF_WORK, CREDIT: the reading copy
//       16     8  word      DATA: the buffer's key; CREDIT: credits granted;
//                           HELLO: the fingerprint of topology and placement
//       24     4  size      payload bytes: DATA: the buffer's bytes; HELLO: nonce and
//                           host name; AUTH: the proof
//       28     4  reserved  0
//
// See docs/protocol.md, "Data plane". The decoder trusts nothing: it checks every field
// against the topology before the caller reads a payload byte.
#ifndef SLUICE_NET_FRAME_H_
#define SLUICE_NET_FRAME_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace sluice::net {

inline constexpr std::size_t kFrameHeaderSize = 32;
inline constexpr std::uint8_t kMagic0 = 0x53;  // 'S'
inline constexpr std::uint8_t kMagic1 = 0x4c;  // 'L'
inline constexpr std::uint8_t kWireVersion = 2;
inline constexpr std::size_t kMaxHostName = 255;
inline constexpr std::size_t kNonceSize = 32;
inline constexpr std::size_t kProofSize = 32;  // HMAC-SHA256

enum class FrameKind : std::uint8_t {
  kData = 1,       // a buffer
  kEndOfWork = 2,  // the producer copy ended the unit of work for this consumer copy
  kCredit = 3,     // receiver -> sender: more frames may be sent to (stream, consumer)
  kHello = 4,      // first frame each way: who is speaking, and a fresh nonce
  kAuth = 5,       // proof of the run key over both HELLOs
  kPing = 6,       // "still here": sent on a link that has been quiet for a while
  kBye = 7,        // the sender stops on purpose: its end of file is not a failure
};

const char* frame_kind_name(FrameKind kind) noexcept;

struct DataFrame {
  std::uint32_t stream = 0;
  std::uint32_t producer = 0;
  std::uint32_t consumer = 0;
  std::uint64_t key = 0;
  std::uint32_t size = 0;  // payload: the buffer's used bytes
};

struct EndOfWorkFrame {
  std::uint32_t stream = 0;
  std::uint32_t producer = 0;
  std::uint32_t consumer = 0;
};

struct CreditFrame {
  std::uint32_t stream = 0;
  std::uint32_t consumer = 0;
  std::uint32_t credits = 0;  // 1 .. the stream's window
};

// Payload: kNonceSize random bytes, then the sender's host name (1 .. kMaxHostName bytes).
struct HelloFrame {
  std::uint64_t fingerprint = 0;
  std::uint32_t name_size = 0;
  std::uint32_t payload_size() const { return static_cast<std::uint32_t>(kNonceSize) + name_size; }
};

// Payload: kProofSize bytes (see net/handshake.h).
struct AuthFrame {};
struct PingFrame {};
struct ByeFrame {};

using Frame = std::variant<DataFrame, EndOfWorkFrame, CreditFrame, HelloFrame, AuthFrame, PingFrame, ByeFrame>;

FrameKind kind_of(const Frame& frame) noexcept;
// The bytes that follow the header.
std::uint32_t payload_size(const Frame& frame) noexcept;

// Writes `frame`'s header into out[0 .. kFrameHeaderSize).
void encode_frame(const Frame& frame, std::byte* out) noexcept;

// What the decoder checks a header against: per stream, its copies, buffer size and credit
// window (net/routes.h remote_window).
struct StreamLimits {
  std::uint32_t producers = 0;
  std::uint32_t consumers = 0;
  std::uint32_t buffer_size = 0;
  std::uint32_t window = 0;  // the most credits one CREDIT frame may grant
};

// Decodes data-plane frame headers (the control protocol has its own reader).
class DataFrameDecoder {
 public:
  explicit DataFrameDecoder(std::vector<StreamLimits> streams = {}) : streams_(std::move(streams)) {}

  // Decodes the header in in[0 .. kFrameHeaderSize). On success fills *out and returns
  // true; otherwise returns false with *error saying what is wrong ("bad magic 0x4745 ...",
  // "DATA of 70000 bytes on stream 0 whose buffer_size is 65536 bytes"). Never reads past
  // the header, never allocates except for the error message.
  bool decode(const std::byte* in, Frame* out, std::string* error) const;

  const std::vector<StreamLimits>& streams() const { return streams_; }

 private:
  std::vector<StreamLimits> streams_;
};

}  // namespace sluice::net

#endif  // SLUICE_NET_FRAME_H_
