// LanguageBackend: how the runtime makes filters of one language (`lang:` in a topology).
//
// The runtime never knows what language a filter is written in: it asks the backend for
// `lang` to check and create filters, and tells it when a copy thread starts and stops (so
// the Java backend can attach the thread to its JVM once). The C++ backend is built in;
// others register themselves when their library is loaded (see backends.h).
#ifndef SLUICE_RUNTIME_LANGUAGE_BACKEND_H_
#define SLUICE_RUNTIME_LANGUAGE_BACKEND_H_

#include <memory>
#include <string>

#include "sluice/filter.h"
#include "topology/topology.h"

namespace sluice {

class LanguageBackend {
 public:
  virtual ~LanguageBackend() = default;

  // Prepares the backend for a whole topology before any filter is checked or created
  // (e.g. starts the JVM with its classpath and options). Called once per topology.
  virtual void prepare(const topo::Topology& topology) { (void)topology; }

  // Throws sluice::Error saying why `spec`'s code cannot be loaded (missing library,
  // missing symbol, unknown class, a dependency missing from the classpath) and what would be
  // right. The caller adds the file:line:column: of `library:` for a message that starts
  // "cannot load", of `classpath:` for one that starts "classpath ", else of `class:`.
  virtual void check(const topo::FilterSpec& spec) = 0;

  // Creates one filter object for a copy; the caller owns it. Called on the copy's thread,
  // between thread_started() and thread_stopping().
  virtual std::unique_ptr<Filter> create(const topo::FilterSpec& spec) = 0;

  // Bracket the life of each copy thread that runs this backend's filters.
  virtual void thread_started() {}
  virtual void thread_stopping() {}
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_LANGUAGE_BACKEND_H_
