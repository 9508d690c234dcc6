#include "runtime/backends.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include "runtime/plugin_loader.h"
#include "topology/suggest.h"

namespace sluice {

namespace {

// C++ filters: shared libraries loaded with dlopen, classes registered by SLUICE_FILTER.
class CppBackend final : public LanguageBackend {
 public:
  void check(const topo::FilterSpec& spec) override {
    const FoundFilter found = find_filter(spec.library, spec.class_name);
    std::vector<std::string> missing;
    for (const std::string& arg : found.required_args) {
      if (spec.args.count(arg) == 0) missing.push_back(arg);
    }
    if (missing.empty()) return;
    std::string names;
    for (const std::string& arg : missing) names += (names.empty() ? "" : ", ") + ("args." + arg);
    std::string message = "class '" + spec.class_name + "' needs " + names + " (it declares them with SLUICE_FILTER_ARGS); add " +
                          (missing.size() == 1 ? "it" : "them") + " to the filter, e.g. args: {" + missing.front() + ": ...}";
    std::vector<std::string> given;
    for (const auto& [key, value] : spec.args) given.push_back(key);
    for (const std::string& arg : missing) {
      const std::string near = topo::closest_match(arg, given);
      if (!near.empty()) message += "; args." + near + " is there: did you mean '" + arg + "'?";
    }
    throw Error(message);
  }
  std::unique_ptr<Filter> create(const topo::FilterSpec& spec) override {
    std::unique_ptr<Filter> filter = find_filter_factory(spec.library, spec.class_name)();
    if (!filter) throw Error("the factory of class '" + spec.class_name + "' returned no filter");
    return filter;
  }
};

struct BackendTable {
  std::mutex mu;  // guards both maps
  std::map<topo::Lang, std::function<std::unique_ptr<LanguageBackend>()>> factories;
  std::map<topo::Lang, std::unique_ptr<LanguageBackend>> backends;
};

BackendTable& table() {
  static BackendTable* instance = new BackendTable();  // lives until exit, like the JVM
  return *instance;
}

// Where the JNI bridge lives: $SLUICE_JNI_LIBRARY, else next to libsluice itself.
std::string jni_library_path() {
  if (const char* env = std::getenv("SLUICE_JNI_LIBRARY"); env != nullptr && *env != '\0') return env;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&jni_library_path), &info) != 0 && info.dli_fname != nullptr) {
    std::string self = info.dli_fname;
    auto slash = self.rfind('/');
    if (slash != std::string::npos) return self.substr(0, slash + 1) + "libsluice_jni.so";
  }
  return "libsluice_jni.so";
}

void load_backend_library(topo::Lang lang) {
  if (lang != topo::Lang::kJava) return;
  const std::string path = jni_library_path();
  // The bridge registers its factory from a static initialiser (register_backend).
  if (dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    const char* error = dlerror();
    const std::string why = error != nullptr ? error : path;
    // A bridge built against another version's headers asks for that version's
    // register_backend (filter.h, SLUICE_FILTER_ABI), which this runtime does not have.
    const std::size_t undefined = why.find("undefined symbol: ");
    if (undefined != std::string::npos && why.find("register_backend", undefined) != std::string::npos) {
      throw Error("Java filters need the JNI bridge, and " + path +
                  " was built against the headers of another sluice version (" + why +
                  "); use the libsluice_jni.so built with this one (make), or set SLUICE_JNI_LIBRARY to it");
    }
    throw Error("Java filters need the JNI bridge, which did not load: " + why +
                "; build it (make) or set SLUICE_JNI_LIBRARY to libsluice_jni.so");
  }
}

}  // namespace

inline namespace SLUICE_FILTER_ABI {
bool register_backend(topo::Lang lang, std::function<std::unique_ptr<LanguageBackend>()> factory) {
  BackendTable& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  t.factories[lang] = std::move(factory);
  return true;
}
}  // namespace SLUICE_FILTER_ABI

LanguageBackend& backend_for(topo::Lang lang) {
  BackendTable& t = table();
  {
    std::lock_guard<std::mutex> lock(t.mu);
    auto found = t.backends.find(lang);
    if (found != t.backends.end()) return *found->second;
    if (lang == topo::Lang::kCpp) {
      return *(t.backends[lang] = std::make_unique<CppBackend>());
    }
    if (t.factories.count(lang) == 0) {
      // Load outside the lock: the library's initialiser calls register_backend.
    } else {
      return *(t.backends[lang] = t.factories[lang]());
    }
  }
  load_backend_library(lang);
  std::lock_guard<std::mutex> lock(t.mu);
  auto found = t.backends.find(lang);
  if (found != t.backends.end()) return *found->second;
  auto factory = t.factories.find(lang);
  if (factory == t.factories.end()) {
    throw Error(std::string("no backend for lang '") + topo::to_string(lang) +
                "' in this build; use lang: cpp");
  }
  return *(t.backends[lang] = factory->second());
}

namespace {

void check_loadable_if(const topo::Topology& topology, const std::function<bool(const topo::FilterSpec&)>& wanted) {
  std::vector<topo::Diagnostic> problems;
  std::set<topo::Lang> prepared;
  std::set<topo::Lang> unprepared;  // its prepare failed: said once, its filters not checked
  for (const topo::FilterSpec& spec : topology.filters) {
    if (!wanted(spec) || unprepared.count(spec.lang) != 0) continue;
    try {
      LanguageBackend& backend = backend_for(spec.lang);
      if (prepared.insert(spec.lang).second) {
        try {
          backend.prepare(topology);
        } catch (const std::exception& e) {
          // The language's runtime did not start (the JVM, with a bad jvm: option): once, at
          // the jvm: key when the topology has one, which is what to change; else at this
          // filter, the first that needed it. Its other filters cannot be checked.
          unprepared.insert(spec.lang);
          const bool at_jvm = spec.lang == topo::Lang::kJava && topology.jvm.mark.line > 0;
          problems.push_back({topology.file, at_jvm ? topology.jvm.mark : spec.class_mark,
                              (at_jvm ? std::string("jvm: ") : "filter '" + spec.name + "': ") + e.what()});
          continue;
        }
      }
      backend.check(spec);
    } catch (const std::exception& e) {
      std::string what = e.what();
      // Point at the line the user has to change: the library for load failures, the
      // classpath for a jar that is missing or lacks a class the filter needs, the class for
      // a class the library does not have.
      bool library_problem = what.rfind("cannot load", 0) == 0 || what.find("JNI bridge") != std::string::npos;
      bool classpath_problem = what.rfind("classpath ", 0) == 0;
      topo::Mark mark = library_problem ? spec.library_mark : classpath_problem ? spec.classpath_mark : spec.class_mark;
      problems.push_back({topology.file, mark, "filter '" + spec.name + "': " + what});
    }
  }
  if (!problems.empty()) throw topo::TopologyError(std::move(problems));
}

}  // namespace

void check_loadable(const topo::Topology& topology) {
  check_loadable_if(topology, [](const topo::FilterSpec&) { return true; });
}

void check_loadable(const topo::Topology& topology, const Placement& placement) {
  check_loadable_if(topology, [&](const topo::FilterSpec& spec) { return placement.count_here(spec.name) > 0; });
}

}  // namespace sluice
