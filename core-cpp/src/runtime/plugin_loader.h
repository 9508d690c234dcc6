// Loads C++ filter libraries (dlopen) and finds the classes they register with SLUICE_FILTER.
#ifndef SLUICE_RUNTIME_PLUGIN_LOADER_H_
#define SLUICE_RUNTIME_PLUGIN_LOADER_H_

#include <string>
#include <vector>

#include "sluice/filter.h"

namespace sluice {

// Loads `library` once per process (later calls reuse it) and returns the factory for
// `class_name`. An empty `library` means the class is linked into the program itself.
// Throws sluice::Error when the library cannot be loaded (file missing, undefined symbol:
// dlerror's words plus what to do) or does not register the class (listing those it does,
// with a did-you-mean). Thread-safe.
FilterFactory find_filter_factory(const std::string& library, const std::string& class_name);

// The same, with the arguments the class declares it needs (SLUICE_FILTER_ARGS).
struct FoundFilter {
  FilterFactory factory;
  std::vector<std::string> required_args;
};
FoundFilter find_filter(const std::string& library, const std::string& class_name);

// The classes a loaded library (or the program, for "") registers, sorted.
std::vector<std::string> registered_classes(const std::string& library);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_PLUGIN_LOADER_H_
