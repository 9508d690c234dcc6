// InputStream and OutputStream: a filter copy's ends of the streams the topology connects.
//
// A Context owns its streams; references from Context::input()/output() stay valid for the
// life of the filter object (across units of work). Each stream object belongs to one filter
// copy and must only be used from that copy's thread (the thread that calls init, process
// and finalize).
#ifndef SLUICE_STREAM_H_
#define SLUICE_STREAM_H_

#include <cstddef>
#include <optional>
#include <string>

#include "sluice/buffer.h"

namespace sluice {

class InputStream {
 public:
  InputStream() = default;
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;
  virtual ~InputStream() = default;

  // Blocks until a buffer arrives or the unit of work ends for this copy. Returns the
  // buffer (the caller owns it), or an empty optional at end of work: every upstream copy
  // returned from process and all its buffers were delivered. Once empty, read() keeps
  // returning empty until the next unit of work. Buffers from one upstream copy arrive in
  // the order it wrote them.
  // Throws sluice::Aborted when the run is being stopped.
  virtual std::optional<Buffer> read() = 0;

  // The port name in the topology ("in", "left", ...).
  virtual const std::string& name() const = 0;
};

class OutputStream {
 public:
  OutputStream() = default;
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;
  virtual ~OutputStream() = default;

  // Returns an empty buffer (size 0, key 0) of buffer_size() bytes capacity from the
  // stream's pool; the caller owns it. Blocks while the pool is empty: that is
  // backpressure from slower consumers. Throws sluice::Aborted when the run is stopping.
  virtual Buffer allocate() = 0;

  // Sends the buffer to a consumer copy chosen by the stream's policy, taking ownership.
  // Any valid buffer may be written (one from allocate() or one read from an input): the
  // payload is handed over, never copied. Blocks while the chosen copy's queue is full.
  // REQUIRES: buffer.valid() and buffer.size() <= buffer_size(); throws sluice::Error
  // otherwise. Throws sluice::Error when called outside process().
  virtual void write(Buffer&& buffer) = 0;

  // The stream's buffer size in bytes (topology `buffer_size`).
  virtual std::size_t buffer_size() const = 0;

  // The port name in the topology ("out", ...).
  virtual const std::string& name() const = 0;
};

}  // namespace sluice

#endif  // SLUICE_STREAM_H_
