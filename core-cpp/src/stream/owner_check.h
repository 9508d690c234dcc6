// OwnerCheck: refuses a port's slow path to any thread but the one that runs its copy.
//
// A copy's streams are its own: the inline read and write paths take no lock, so another
// thread using them (one the filter started) loses or duplicates buffers, or breaks a wait
// the scheduler does not know of. The inline paths cannot afford a check; the slow paths (a
// run taken off the queue, a write that is not inline, every wait) can: the copy's crash
// record is current on the thread that runs it (its own thread, or the worker running its
// task), and on no other (runtime/crash_report.h).
#ifndef SLUICE_STREAM_OWNER_CHECK_H_
#define SLUICE_STREAM_OWNER_CHECK_H_

#include <string>

#include "runtime/crash_report.h"

namespace sluice {

class OwnerCheck {
 public:
  // owner: the copy's record, which outlives this (null: no check, for the client's end of a
  // `to: client` stream and for ports made by tests). port: "output 'out' (a.out -> b.in)".
  OwnerCheck(const crash::CopyRecord* owner, std::string port) : owner_(owner), port_(std::move(port)) {}

  // Throws sluice::Error when the calling thread does not run the copy.
  void check() const {
    if (owner_ != nullptr && crash::current() != owner_) refuse();
  }

 private:
  [[noreturn]] void refuse() const;

  const crash::CopyRecord* const owner_;
  const std::string port_;
};

}  // namespace sluice

#endif  // SLUICE_STREAM_OWNER_CHECK_H_
