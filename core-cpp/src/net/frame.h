// Data-plane frames: a fixed 32-byte little-endian header, then `size` payload bytes.
//
//   offset  size  field
//        0     2  magic     0x53 0x4c ("SL")
//        2     1  version   1
//        3     1  flags     exactly one of DATA, END_OF_WORK, CREDIT, HELLO, BYE
//        4     4  stream    index in the topology's streams
//        8     4  producer  global producer copy
//       12     4  consumer  global consumer copy
//       16     8  key       DATA: the buffer's key; CREDIT: credits granted;
//                           HELLO: the topology's fingerprint
//       24     4  size      payload bytes (DATA: <= buffer_size; HELLO: the host name)
//       28     4  reserved  0
//
// See docs/protocol.md, "Data plane". The decoder trusts nothing: it checks every field
// against the topology before the caller reads a payload byte.
#ifndef SLUICE_NET_FRAME_H_
#define SLUICE_NET_FRAME_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace sluice::net {

inline constexpr std::size_t kHeaderSize = 32;
inline constexpr std::uint8_t kMagic0 = 0x53;  // 'S'
inline constexpr std::uint8_t kMagic1 = 0x4c;  // 'L'
inline constexpr std::uint8_t kVersion = 1;
inline constexpr std::size_t kMaxHostName = 255;

enum Flag : std::uint8_t {
  kData = 1,       // a buffer: payload = its bytes
  kEndOfWork = 2,  // the producer copy ended the unit of work for this consumer copy
  kCredit = 4,     // receiver -> sender: `key` more frames may be sent to (stream, consumer)
  kHello = 8,      // first frame each way: payload = host name, key = topology fingerprint
  kBye = 16,       // the sender is stopping on purpose: its end of file is not a failure
};

struct FrameHeader {
  std::uint8_t flags = 0;
  std::uint32_t stream = 0;
  std::uint32_t producer = 0;
  std::uint32_t consumer = 0;
  std::uint64_t key = 0;
  std::uint32_t size = 0;
};

// Writes `h` into out[0..kHeaderSize).
void encode_header(const FrameHeader& h, std::byte* out) noexcept;

// What the decoder checks a header against: per stream, its copies and buffer size.
struct StreamLimits {
  std::uint32_t producers = 0;
  std::uint32_t consumers = 0;
  std::uint32_t buffer_size = 0;
  std::uint32_t depth = 0;  // the most credits one CREDIT frame may grant
};

class FrameDecoder {
 public:
  explicit FrameDecoder(std::vector<StreamLimits> streams) : streams_(std::move(streams)) {}

  // Decodes the header in in[0..kHeaderSize). On success fills *out and returns true;
  // otherwise returns false with *error saying what is wrong ("bad magic 0x1234",
  // "DATA of 70000 bytes on stream 0 whose buffer_size is 65536"...). Never reads past
  // kHeaderSize bytes, never allocates except for the error message.
  bool decode(const std::byte* in, FrameHeader* out, std::string* error) const;

  const std::vector<StreamLimits>& streams() const { return streams_; }

 private:
  std::vector<StreamLimits> streams_;
};

}  // namespace sluice::net

#endif  // SLUICE_NET_FRAME_H_
