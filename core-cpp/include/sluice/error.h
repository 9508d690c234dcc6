// sluice::Error: the one exception type the runtime throws at users.
//
// Every message says what went wrong and what would be right, e.g.
//   "filter 'count' asked for input port 'left', which no stream feeds; connect it in the
//    topology or ask for one of: in"
// Filters may throw anything derived from std::exception; the runtime reports it with the
// filter's name, copy, host and unit of work and stops the run.
#ifndef SLUICE_ERROR_H_
#define SLUICE_ERROR_H_

#include <stdexcept>
#include <string>

namespace sluice {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// Thrown out of a blocking call (read, allocate, write) when the run is being stopped
// because something else failed. A filter should let it propagate: catching it and
// continuing only delays the shutdown (every later blocking call throws it again).
class Aborted : public Error {
 public:
  Aborted() : Error("run aborted because another part of the application failed") {}
};

}  // namespace sluice

#endif  // SLUICE_ERROR_H_
