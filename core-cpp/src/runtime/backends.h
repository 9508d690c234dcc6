// The backends for each `lang`, and the check that every filter of a topology can load.
#ifndef SLUICE_RUNTIME_BACKENDS_H_
#define SLUICE_RUNTIME_BACKENDS_H_

#include <functional>
#include <memory>

#include "runtime/language_backend.h"
#include "runtime/placement.h"
#include "sluice/filter.h"
#include "topology/topology.h"

namespace sluice {

// The process-wide backend for `lang`, created on first use. For Java this loads the
// JNI bridge library (libsluice_jni.so, next to libsluice or named by the SLUICE_JNI_LIBRARY
// environment variable). Throws sluice::Error when the language is not available.
// Thread-safe.
LanguageBackend& backend_for(topo::Lang lang);

// Installs the factory a backend library provides for its language; the first call to
// backend_for(lang) after it creates the backend. Returns true. The bridge compiles the
// streams' inline paths in, as filters do, so the filter ABI's version is in this symbol's
// name too: a bridge built against other headers fails to load instead of misbehaving.
inline namespace SLUICE_FILTER_ABI {
bool register_backend(topo::Lang lang, std::function<std::unique_ptr<LanguageBackend>()> factory);
}  // namespace SLUICE_FILTER_ABI

// Prepares each backend the topology uses and checks that every filter's library and class
// load. Throws topo::TopologyError with one diagnostic per filter that does not, at its
// `library:` or `class:` line and column.
void check_loadable(const topo::Topology& topology);
// The same for the filters that have copies in `placement` only: what one host of a run
// across hosts loads (a library that only some hosts have, for the filters placed there).
void check_loadable(const topo::Topology& topology, const Placement& placement);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_BACKENDS_H_
