// Filter: the user's unit of computation, and SLUICE_FILTER to register one.
//
// The runtime creates one Filter object per copy, once per run, and keeps it across units
// of work. For each unit of work it calls init, then process, then finalize, all in the
// copy's own flow of control: a thread of its own (Java copies), or a task that the
// runtime's worker threads run (C++ copies), which may resume on another worker after it
// waits on a stream (docs/runtime.md). An exception from any of them stops the
// application; the console reports the filter, copy, host, unit of work and the
// exception's message.
//
// A Filter need not be thread-safe: no two of its methods run at once. Different copies
// are different objects and may run at the same time. A filter may start threads of its
// own, but only init, process and finalize may use its Context and streams.
#ifndef SLUICE_FILTER_H_
#define SLUICE_FILTER_H_

#include <initializer_list>
#include <memory>
#include <type_traits>

#include "sluice/context.h"

namespace sluice {

class Filter {
 public:
  Filter() = default;
  Filter(const Filter&) = delete;
  Filter& operator=(const Filter&) = delete;
  virtual ~Filter() = default;

  // Before process, once per unit of work. Default: nothing.
  virtual void init(Context& ctx) { (void)ctx; }
  // Reads inputs until end of work (or not at all, for a source) and writes outputs.
  // Returning ends this copy's part of the unit of work: its outputs then carry end of
  // work downstream. Buffers left unread in its inputs are discarded, with a warning.
  virtual void process(Context& ctx) = 0;
  // After process, once per unit of work; outputs are closed by then. Default: nothing.
  virtual void finalize(Context& ctx) { (void)ctx; }
};

using FilterFactory = std::unique_ptr<Filter> (*)();

namespace detail {
// The version of what filter code compiles into itself from these headers (the streams'
// inline read and write, their classes' layout) is part of these symbols' names: a filter
// library built against other headers then fails to load, with a message that says to
// rebuild it, instead of calling into the runtime the wrong way.
// So is libstdc++'s std::string: a library built with -D_GLIBCXX_USE_CXX11_ABI=0 (the old,
// copy-on-write string) would hand the runtime strings it reads wrongly, so its symbols get
// another name, which this runtime (built with the new string) does not define.
#if defined(_GLIBCXX_USE_CXX11_ABI) && !_GLIBCXX_USE_CXX11_ABI
#define SLUICE_FILTER_ABI filter_abi_5_old_string
#else
#define SLUICE_FILTER_ABI filter_abi_5  // runtime use: the namespace below, and the JNI bridge's
#endif
inline namespace SLUICE_FILTER_ABI {
// Adds a class to the registry of the shared library being loaded (or of the program
// itself, for filters linked into it). Used by SLUICE_FILTER; returns true.
bool register_filter(const char* class_name, FilterFactory factory);
// The same, with the names of the arguments the class needs (SLUICE_FILTER_ARGS).
bool register_filter(const char* class_name, FilterFactory factory, std::initializer_list<const char*> required_args);
// Records that the library defining `factory` was compiled without optimization (the stream
// calls these headers compile into it run many times slower): loading it then warns once.
// Used by SLUICE_FILTER; returns true. Weak: a library built with these headers still loads
// into a runtime of the same filter ABI that predates it (the macro then skips the note).
__attribute__((weak)) bool note_unoptimized(FilterFactory factory);
}  // namespace SLUICE_FILTER_ABI
}  // namespace detail

}  // namespace sluice

// Registers `Class` (default-constructible, derived from sluice::Filter) under the name
// written, e.g. SLUICE_FILTER(Upper) registers "Upper", SLUICE_FILTER(text::Upper)
// registers "text::Upper". Use at namespace scope in one .cc file of the filter library.
#define SLUICE_FILTER(Class) SLUICE_FILTER_AS_(Class, __COUNTER__)
#define SLUICE_FILTER_AS_(Class, n) SLUICE_FILTER_AS2_(Class, n)
#define SLUICE_FILTER_AS2_(Class, n)                                                     \
  namespace {                                                                            \
  [[maybe_unused]] const bool sluice_registered_##n = ::sluice::detail::register_filter( \
      #Class, SLUICE_FACTORY_(Class)) && SLUICE_NOTE_BUILD_(Class);                      \
  }

// Internal to the macros. The build note says whether the code that includes this header
// (the filter library) is optimized: __OPTIMIZE__ is what GCC and Clang define under -O1+.
// The asserts say what SLUICE_FILTER needs before the template errors of make_unique would.
#define SLUICE_FACTORY_(Class)                                                                          \
  []() -> std::unique_ptr<::sluice::Filter> {                                                          \
    static_assert(std::is_base_of_v<::sluice::Filter, Class>,                                           \
                  "SLUICE_FILTER(" #Class "): the class must derive (publicly) from sluice::Filter");    \
    static_assert(!std::is_abstract_v<Class>,                                                           \
                  "SLUICE_FILTER(" #Class "): the class is abstract: does it override "                 \
                  "void process(sluice::Context&) with exactly that signature?");                       \
    static_assert(std::is_default_constructible_v<Class>,                                               \
                  "SLUICE_FILTER(" #Class "): the class needs a public constructor without arguments"); \
    return std::make_unique<Class>();                                                                   \
  }
#if defined(__OPTIMIZE__)
#define SLUICE_NOTE_BUILD_(Class) true
#else
#define SLUICE_NOTE_BUILD_(Class) \
  (::sluice::detail::note_unoptimized == nullptr || ::sluice::detail::note_unoptimized(SLUICE_FACTORY_(Class)))
#endif

// Registers `Class` like SLUICE_FILTER and declares the arguments it cannot run without:
//   SLUICE_FILTER_ARGS(LineReader, "path")
// `sluice validate` and `sluice run` then refuse a topology whose filter of this class lacks
// one of them (file:line:column, before anything starts), instead of the unit of work failing
// when the filter reads it (ctx.arg(key) without a fallback) — perhaps in finalize, after the
// whole unit ran. Arguments read with a fallback (ctx.arg(key, fallback)) need no declaring.
#define SLUICE_FILTER_ARGS(Class, ...) SLUICE_FILTER_ARGS_AS_(Class, __COUNTER__, __VA_ARGS__)
#define SLUICE_FILTER_ARGS_AS_(Class, n, ...) SLUICE_FILTER_ARGS_AS2_(Class, n, __VA_ARGS__)
#define SLUICE_FILTER_ARGS_AS2_(Class, n, ...)                                           \
  namespace {                                                                            \
  [[maybe_unused]] const bool sluice_registered_##n = ::sluice::detail::register_filter( \
      #Class, SLUICE_FACTORY_(Class), {__VA_ARGS__}) && SLUICE_NOTE_BUILD_(Class);       \
  }

#endif  // SLUICE_FILTER_H_
