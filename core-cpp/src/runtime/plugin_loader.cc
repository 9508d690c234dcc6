#include "runtime/plugin_loader.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "log/backend.h"
#include "sluice/error.h"
#include "sluice/version.h"
#include "topology/suggest.h"

namespace sluice {

namespace {

// Every SLUICE_FILTER registration, with the shared object that defines it. Registrations
// arrive from static initialisers: the program's before main(), a library's inside
// dlopen(). Attributing each to the object its factory lives in (dladdr) is right even
// when a library links another filter library, whose initialisers run in the same dlopen.
struct Registration {
  std::string class_name;
  FilterFactory factory;
  std::string object;  // canonical path of the defining executable or library
  std::vector<std::string> required_args;  // SLUICE_FILTER_ARGS
  // Registered outside our dlopen(): linked into the program. Only these serve a filter
  // without `library:`; a library another filter named must not (which filter is listed
  // first would decide what runs).
  bool in_program = true;
};

// Set on the thread inside load()'s dlopen, whose initialisers register that library's
// classes (and those of filter libraries it links).
thread_local bool loading_a_library = false;

struct Registry {
  std::mutex mu;  // guards every member; never held across dlopen (initialisers register)
  std::vector<Registration> registrations;
  std::set<std::string> opened;  // libraries we dlopen()ed, canonical paths
  std::set<std::string> unoptimized;  // objects built without -O (note_unoptimized)
  std::set<std::string> warned;       // ... and those this process has warned about
};

Registry& registry() {
  static Registry* instance = new Registry();  // never destroyed: filters may outlive main
  return *instance;
}

std::string canonical(const std::string& path) {
  char resolved[PATH_MAX];
  return realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : path;
}

std::string program_path() {
  static const std::string path = canonical("/proc/self/exe");
  return path;
}

std::string defining_object(FilterFactory factory) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(factory), &info) == 0 || info.dli_fname == nullptr ||
      info.dli_fname[0] == '\0') {
    return program_path();
  }
  return canonical(info.dli_fname);
}

// " (that is: helper(int))" when dlerror's undefined symbol (from `at`) is a mangled C++
// name, else "".
std::string demangled_symbol(const std::string& reason, std::size_t at) {
  if (at == std::string::npos) return "";
  const std::size_t start = reason.find("_Z", at);
  if (start == std::string::npos) return "";
  std::size_t end = start;
  while (end < reason.size() && (std::isalnum(static_cast<unsigned char>(reason[end])) || reason[end] == '_' ||
                                 reason[end] == '.' || reason[end] == '$')) {
    ++end;
  }
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(reason.substr(start, end - start).c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(" (that is: ") + name.get() + ")" : "";
}

// What to do about a library that dlopen cannot open for a reason other than a missing
// symbol: what the path holds instead, when it says (a jar, a directory), else build or fix.
std::string not_a_library_hint(const std::string& library) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(library, ec)) {
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(library, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0) found.push_back(name);
    }
    std::sort(found.begin(), found.end());
    return "; it is a directory: name the library file in it" +
           (found.empty() ? std::string(" (it holds no .so yet: build it first)") : " (it holds " + topo::join(found) + ")");
  }
  const auto ends_with = [&](const char* tail) {
    const std::size_t n = std::strlen(tail);
    return library.size() >= n && library.compare(library.size() - n, n, tail) == 0;
  };
  if (ends_with(".jar") || ends_with(".class")) {
    return "; it is Java: give the filter lang: java and classpath: [" + library + "] instead of library:";
  }
  if (!fs::exists(library, ec)) {
    // libNAME.so beside a NAME.so that is not there: CMake names its libraries so.
    const fs::path p(library);
    const fs::path lib_named = p.parent_path() / ("lib" + p.filename().string());
    if (p.filename().string().rfind("lib", 0) != 0 && fs::exists(lib_named, ec)) {
      return "; did you mean '" + lib_named.string() + "'?";
    }
  }
  return "; build it first, or fix the path (relative paths are relative to the topology file)";
}

void load(const std::string& library, const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(registry().mu);
    if (registry().opened.count(path) != 0) return;
  }
  // Deliberately never dlclose()d: filter objects and their vtables must stay valid.
  loading_a_library = true;
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  loading_a_library = false;
  if (handle == nullptr) {
    const char* why = dlerror();
    std::string reason = why ? why : "unknown error";
    // dlerror names the file first: only the symbol's name after "undefined symbol" counts.
    const std::size_t undefined_at = reason.find("undefined symbol");
    const bool undefined = undefined_at != std::string::npos;
    std::string hint =
        !undefined ? not_a_library_hint(library)
        : reason.find("_old_string", undefined_at) != std::string::npos
            ? "; it was built with -D_GLIBCXX_USE_CXX11_ABI=0 (libstdc++'s old std::string), which this sluice "
              "cannot share strings with: rebuild it without that definition"
        : reason.find("register_filter", undefined_at) != std::string::npos
            ? "; it was built against the headers of another sluice version (sluice/filter.h): rebuild it "
              "against this one (" SLUICE_VERSION ")"
            : "; link the library against everything it uses (and Sluice::sluice)";
    throw Error("cannot load filter library '" + library + "': " + reason + demangled_symbol(reason, undefined_at) +
                hint);
  }
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().opened.insert(path);
}

}  // namespace

namespace detail {
inline namespace SLUICE_FILTER_ABI {
bool register_filter(const char* class_name, FilterFactory factory) {
  return register_filter(class_name, factory, {});
}

bool register_filter(const char* class_name, FilterFactory factory, std::initializer_list<const char*> required_args) {
  Registration registration{class_name, factory, defining_object(factory), {}, !loading_a_library};
  for (const char* arg : required_args) registration.required_args.emplace_back(arg);
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  reg.registrations.push_back(std::move(registration));
  return true;
}

bool note_unoptimized(FilterFactory factory) {
  std::string object = defining_object(factory);
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  reg.unoptimized.insert(std::move(object));
  return true;
}
}  // namespace SLUICE_FILTER_ABI
}  // namespace detail

FilterFactory find_filter_factory(const std::string& library, const std::string& class_name) {
  return find_filter(library, class_name).factory;
}

FoundFilter find_filter(const std::string& library, const std::string& class_name) {
  const std::string path = library.empty() ? std::string() : canonical(library);
  if (!library.empty()) load(library, path);
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  // Without a library: anything linked into the program, preferring the executable's own.
  const Registration* found = nullptr;
  std::set<std::string> names;
  for (const Registration& r : reg.registrations) {
    if (library.empty() ? !r.in_program : r.object != path) continue;
    names.insert(r.class_name);
    if (r.class_name != class_name) continue;
    if (found != nullptr && found->object == r.object) {
      // Two SLUICE_FILTERs of one name in one library (each in a .cc file of its own, or in a
      // header): which class runs would depend on the order of its static initialisers.
      throw Error("filter library '" + r.object + "' registers filter class '" + class_name +
                  "' twice (SLUICE_FILTER(" + class_name + ") in two places, or in a header that two of its .cc "
                  "files include): give one of the classes another name, and register each in one .cc file");
    }
    if (found == nullptr || r.object == program_path()) found = &r;
  }
  if (found != nullptr) {
    if (reg.unoptimized.count(found->object) != 0 && reg.warned.insert(found->object).second) {
      logging::process_line(
          LogLevel::kWarn,
          "filter library '" + found->object +
              "' was compiled without optimization (no -O: CMake's CMAKE_BUILD_TYPE empty, or Debug): the stream "
              "calls sluice's headers compile into it (read, write, allocate) run about 15 times slower; build it "
              "with -DCMAKE_BUILD_TYPE=Release (or RelWithDebInfo, to keep debug information)");
    }
    return {found->factory, found->required_args};
  }
  std::vector<std::string> sorted(names.begin(), names.end());
  std::string where = library.empty() ? "this program" : "library '" + library + "'";
  std::string message = where + " has no filter class '" + class_name + "'";
  // A class registered inside a namespace is named with it (SLUICE_FILTER(ns::Scale) is
  // "ns::Scale"), which an edit distance would not offer for a bare "Scale".
  std::string near;
  for (const std::string& n : sorted) {
    if (n.size() > class_name.size() + 2 && n.compare(n.size() - class_name.size(), class_name.size(), class_name) == 0 &&
        n.compare(n.size() - class_name.size() - 2, 2, "::") == 0) {
      near = n;
    }
  }
  if (near.empty()) near = topo::closest_match(class_name, sorted);
  if (!near.empty()) message += "; did you mean '" + near + "'?";
  if (library.empty() && near.empty()) {
    // No library: only what is linked into the program itself, which is rarely where a
    // filter lives: the usual cause is a filter without `library:`.
    message += "; name the filter library that has it with library: in the filter (a path relative to the "
               "topology file, e.g. library: build/libmyfilters.so)";
  } else if (sorted.empty()) {
    message += "; it registers none: add SLUICE_FILTER(" + class_name + ") to the library's sources";
  } else {
    message += " (it registers: " + topo::join(sorted) + ")";
    if (near.empty()) message += "; if the class is in this library, register it: SLUICE_FILTER(" + class_name + ") in one of its .cc files";
  }
  throw Error(message);
}

std::vector<std::string> registered_classes(const std::string& library) {
  const std::string path = library.empty() ? program_path() : canonical(library);
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  std::set<std::string> names;
  for (const Registration& r : reg.registrations) {
    if (r.object == path) names.insert(r.class_name);
  }
  return {names.begin(), names.end()};
}

}  // namespace sluice
