#include "stream/owner_check.h"

#include "sluice/error.h"

namespace sluice {

void OwnerCheck::refuse() const {
  // A thread the filter started is the filter's: if the exception ends the process (uncaught
  // in a std::thread, it does), the crash report names the copy, not "outside any filter".
  if (crash::current() == nullptr) crash::set_current(owner_);
  throw Error("filter '" + std::string(owner_->filter) + "' copy " + std::to_string(owner_->copy) + " used its " +
              port_ + " from a thread that is not the copy's own (one the filter started?): a copy's streams are "
              "for its init, process and finalize only; hand buffers between your threads and process() yourself");
}

}  // namespace sluice
