// What the control decoder must do with any bytes, checked: shared by the libFuzzer target
// (fuzz_control.cc) and its smoke driver (fuzz_smoke_main.cc). A broken rule aborts, which
// libFuzzer reports as a finding with the input that broke it.
//
// The rules: the bytes, fed to a FrameDecoder in two chunks, end in messages and then
// either a rejection with a reason or a request for more; every message decoded encodes
// again to a frame that decodes to an equal message; a rejection is final.
#ifndef SLUICE_CONTROL_FUZZ_CHECK_H_
#define SLUICE_CONTROL_FUZZ_CHECK_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <google/protobuf/util/field_comparator.h>
#include <google/protobuf/util/message_differencer.h>

#include "control/codec.h"

namespace sluice::control {

struct DecodeOutcome {
  std::vector<Envelope> messages;
  bool rejected = false;  // kError, with `error` saying why
  std::string error;
  std::size_t left = 0;   // bytes buffered when the decoder asked for more
};

inline void fuzz_require(bool ok, const char* rule) {
  if (!ok) {
    std::fprintf(stderr, "control decoder broke a rule: %s\n", rule);
    std::abort();
  }
}

// Equal field by field, a NaN equal to a NaN: a double field (a duration) may carry any
// 64 bits from the wire, and a NaN is re-encoded bit for bit, but a NaN is never equal to
// itself.
inline bool same_message(const Envelope& a, const Envelope& b) {
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  return differencer.Compare(a, b);
}

// Decodes `data` as a stream fed in two chunks, split at `split`, with frames of at most
// `max_frame` bytes; checks the rules above.
inline DecodeOutcome decode_checked(const std::uint8_t* data, std::size_t size, std::size_t split,
                                    std::size_t max_frame) {
  DecodeOutcome out;
  FrameDecoder decoder(max_frame);
  auto drain = [&] {
    Envelope m;
    for (;;) {
      switch (decoder.next(&m)) {
        case FrameDecoder::Status::kMessage: {
          fuzz_require(m.body_case() != Envelope::BODY_NOT_SET, "a decoded message has a body");
          const std::string frame = encode(m);
          FrameDecoder again;
          again.feed(frame.data(), frame.size());
          Envelope m2;
          fuzz_require(again.next(&m2) == FrameDecoder::Status::kMessage, "a decoded message re-encodes to a valid frame");
          fuzz_require(same_message(m, m2), "a re-encoded message decodes to an equal message");
          fuzz_require(again.buffered() == 0, "a re-encoded frame is decoded whole");
          out.messages.push_back(m);
          break;
        }
        case FrameDecoder::Status::kError:
          out.rejected = true;
          out.error = decoder.error();
          fuzz_require(!out.error.empty(), "a rejection says why");
          fuzz_require(decoder.next(&m) == FrameDecoder::Status::kError, "a rejection is final");
          return;
        case FrameDecoder::Status::kNeedMore:
          out.left = decoder.buffered();
          return;
      }
    }
  };
  decoder.feed(data, split);
  drain();
  if (out.rejected) return out;
  decoder.feed(data + split, size - split);
  drain();
  return out;
}

}  // namespace sluice::control

#endif  // SLUICE_CONTROL_FUZZ_CHECK_H_
