#include "runtime/plugin_loader.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

#include "sluice/error.h"
#include "topology/suggest.h"

namespace sluice {

namespace {

using ClassTable = std::map<std::string, FilterFactory>;

// Registrations arrive from static initialisers: the program's own before main(), a
// library's during dlopen() on the loading thread. `loading` says which table they go to.
struct Registry {
  std::mutex mu;                             // guards libraries; held across dlopen
  std::map<std::string, ClassTable> libraries;  // key: library path; "" = the program
};

Registry& registry() {
  static Registry* instance = new Registry();  // never destroyed: filters may outlive main
  return *instance;
}

thread_local ClassTable* loading = nullptr;

ClassTable& load_locked(Registry& reg, const std::string& library) {
  auto found = reg.libraries.find(library);
  if (found != reg.libraries.end()) return found->second;
  ClassTable& table = reg.libraries[library];
  loading = &table;
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  loading = nullptr;
  if (handle == nullptr) {
    const char* why = dlerror();
    reg.libraries.erase(library);
    std::string reason = why ? why : "unknown error";
    std::string hint = reason.find("undefined symbol") != std::string::npos
                           ? "; link the library against everything it uses (and Sluice::sluice)"
                           : "; build it first, or fix the path (relative paths are relative to the topology file)";
    throw Error("cannot load filter library '" + library + "': " + reason + hint);
  }
  // Deliberately never dlclose()d: filter objects and their vtables must stay valid.
  return table;
}

}  // namespace

namespace detail {
bool register_filter(const char* class_name, FilterFactory factory) {
  if (loading != nullptr) {
    (*loading)[class_name] = factory;  // inside dlopen, on the thread holding the registry lock
  } else {
    Registry& reg = registry();
    std::lock_guard<std::mutex> lock(reg.mu);
    reg.libraries[""][class_name] = factory;
  }
  return true;
}
}  // namespace detail

FilterFactory find_filter_factory(const std::string& library, const std::string& class_name) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  ClassTable& table = library.empty() ? reg.libraries[""] : load_locked(reg, library);
  auto found = table.find(class_name);
  if (found != table.end()) return found->second;
  // A library already loaded with the program registered into the program's table.
  if (!library.empty()) {
    ClassTable& program = reg.libraries[""];
    auto builtin = program.find(class_name);
    if (table.empty() && builtin != program.end()) return builtin->second;
  }
  std::vector<std::string> names;
  for (const auto& entry : table) names.push_back(entry.first);
  std::string where = library.empty() ? "this program" : "library '" + library + "'";
  std::string message = where + " has no filter class '" + class_name + "'";
  std::string near = topo::closest_match(class_name, names);
  if (!near.empty()) message += "; did you mean '" + near + "'?";
  if (names.empty()) {
    message += "; it registers none: add SLUICE_FILTER(" + class_name + ") to the library's sources";
  } else {
    message += " (it registers: " + topo::join(names) + ")";
  }
  throw Error(message);
}

std::vector<std::string> registered_classes(const std::string& library) {
  Registry& reg = registry();
  std::lock_guard<std::mutex> lock(reg.mu);
  std::vector<std::string> names;
  auto found = reg.libraries.find(library);
  if (found != reg.libraries.end()) {
    for (const auto& entry : found->second) names.push_back(entry.first);
  }
  return names;
}

}  // namespace sluice
