#include "jvm.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "exit_watch.h"
#include "java_types.h"
#include "jni_util.h"
#include "runtime/crash_report.h"
#include "runtime/process_exit.h"
#include "sluice/error.h"
#include "sluice/logger.h"

namespace sluice::jni {

namespace {

using CreateJavaVM = jint (*)(JavaVM**, void**, void*);
using GetCreatedJavaVMs = jint (*)(JavaVM**, jsize, jsize*);

struct Holder {
  std::mutex mu;                     // guards everything below
  std::vector<std::string> options;  // what the JVM started with (empty when adopted)
  bool adopted = false;
  std::string failure;               // why creation failed, once it did
  std::set<std::string> warned;      // topology files already warned about
};

Holder& holder() {
  static Holder* instance = new Holder();  // lives until exit, like the JVM
  return *instance;
}

std::atomic<JavaVM*> the_vm{nullptr};

thread_local JNIEnv* attached_env = nullptr;
thread_local bool attached_here = false;

std::string this_library_dir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&this_library_dir), &info) == 0 || info.dli_fname == nullptr) return "";
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

std::string find_jfilter_jar() {
  if (const char* env = std::getenv("SLUICE_JFILTER_JAR"); env != nullptr && *env != '\0') {
    if (std::filesystem::is_regular_file(env)) return env;
    throw Error(std::string("SLUICE_JFILTER_JAR names '") + env + "', which is not a file; point it at jfilter.jar");
  }
  std::vector<std::string> candidates;
  if (std::string dir = this_library_dir(); !dir.empty()) candidates.push_back(dir + "/../share/sluice/jfilter.jar");
  candidates.push_back(SLUICE_JFILTER_BUILD_JAR);
  candidates.push_back(SLUICE_JFILTER_INSTALL_JAR);
  std::string looked;
  for (const std::string& c : candidates) {
    if (std::filesystem::is_regular_file(c)) return std::filesystem::weakly_canonical(c).string();
    looked += (looked.empty() ? "" : ", ") + c;
  }
  throw Error("cannot find the sluice jfilter jar (looked at " + looked +
              "); build it (make, or cmake --build build) or set SLUICE_JFILTER_JAR to jfilter.jar");
}

// The JVM library: $SLUICE_JVM_LIBRARY, $JAVA_HOME's, the build's JDK, the loader's search path.
CreateJavaVM load_libjvm() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("SLUICE_JVM_LIBRARY"); env != nullptr && *env != '\0') {
    // Named on purpose: another JDK in its place would run silently (a typo went unnoticed).
    void* lib = dlopen(env, RTLD_NOW | RTLD_GLOBAL);
    const char* error = lib == nullptr ? dlerror() : nullptr;
    if (lib != nullptr) {
      if (auto create = reinterpret_cast<CreateJavaVM>(dlsym(lib, "JNI_CreateJavaVM"))) return create;
    }
    throw Error(std::string("SLUICE_JVM_LIBRARY names '") + env + "', which cannot be used as the JVM (" +
                (error != nullptr ? std::string(error) : std::string("no JNI_CreateJavaVM in it")) +
                "); point it at a JDK 17's lib/server/libjvm.so, or unset it to use JAVA_HOME's");
  }
  if (const char* home = std::getenv("JAVA_HOME"); home != nullptr && *home != '\0') {
    const std::string libjvm = std::string(home) + "/lib/server/libjvm.so";
    if (!std::filesystem::is_regular_file(libjvm)) {
      throw Error("JAVA_HOME is '" + std::string(home) + "', which has no lib/server/libjvm.so; point it at a JDK 17 "
                  "(e.g. /usr/lib/jvm/java-17-openjdk-amd64), or unset it to use the JDK sluice was built with");
    }
    candidates.push_back(libjvm);
  }
  candidates.push_back(SLUICE_JVM_LIBRARY);
  candidates.push_back("libjvm.so");
  std::string why;
  for (const std::string& c : candidates) {
    if (void* lib = dlopen(c.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      if (auto create = reinterpret_cast<CreateJavaVM>(dlsym(lib, "JNI_CreateJavaVM"))) return create;
      why += "\n  " + c + ": no JNI_CreateJavaVM";
      continue;
    }
    const char* error = dlerror();
    why += "\n  " + (error != nullptr ? std::string(error) : c);
  }
  throw Error("cannot load the JVM (libjvm.so); install a JDK 17 (scripts/install-deps.sh), or set JAVA_HOME "
              "or SLUICE_JVM_LIBRARY. Tried:" + why);
}

std::vector<std::string> split_words(const char* text) {
  std::vector<std::string> words;
  std::istringstream in(text == nullptr ? "" : text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The JVM's smallest heap, in practice (smaller ones end the process while the JVM starts).
constexpr std::size_t kMinHeap = 4 << 20;

std::vector<std::string> jvm_options(const topo::Topology& topology) {
  if (topology.jvm.heap != 0 && topology.jvm.heap < kMinHeap) {
    throw Error("jvm: heap " + std::to_string(topology.jvm.heap) +
                " bytes is too small for the JVM; give at least 4MiB, or leave heap: out for the JVM's default");
  }
  std::vector<std::string> options;
  if (topology.jvm.heap != 0) options.push_back("-Xmx" + std::to_string(topology.jvm.heap));
  for (const std::string& o : topology.jvm.options) options.push_back(o);
  for (std::string& o : split_words(std::getenv("SLUICE_JVM_OPTIONS"))) options.push_back(std::move(o));
  return options;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out.empty() ? "(none)" : out;
}

// What the exit hook says if the JVM ends the process while it starts (it does for some bad
// options, e.g. a heap too small: "Error occurred during initialization of VM").
std::string& exit_note() {
  static std::string* note = new std::string();
  return *note;
}

// The JVM calls these, then ends the process.
void JNICALL on_jvm_abort() {
  if (!exit_note().empty()) std::fprintf(stderr, "%s\n", exit_note().c_str());
  std::fflush(stderr);
}
// System.exit or Runtime.halt (in a filter, or a thread it started): HotSpot calls this,
// then exit() (process_exit.h ends it here). Once the JVM runs, the copy is named where a
// crash would be (crash_report.h): its process cannot go on, and in a program that owns its
// process (the console, sluice-appd) the status a filter chose must not pass for one of
// sluice's own (3 means "the topology is invalid"), so it ends with 1; a program that
// embeds sluice keeps the filter's status (process::finish returns there).
void JNICALL on_jvm_exit(jint code) {
  on_jvm_abort();
  if (!exit_note().empty()) {  // the JVM did not start: explained above
    process::finish(code);
    return;
  }
  char what[160];
  if (const crash::CopyRecord* caller = exit_caller()) {
    std::snprintf(what, sizeof what, "called System.exit(%d)", static_cast<int>(code));
    crash::report_event(what, caller);
  } else {
    std::snprintf(what, sizeof what,
                  "ended the JVM (status %d) from a thread that runs no filter copy, or by Runtime.halt",
                  static_cast<int>(code));
    crash::report_event(what, nullptr);
  }
  process::finish(1);
}

// Creates the JVM on a thread of its own: its threads inherit a mask that blocks the signals
// the console waits for (with -Xrs the JVM does not unblock them), and no thread of ours stays
// attached as the JVM's "main" thread.
JavaVM* create(const std::vector<std::string>& options, const std::string& topology_file) {
  CreateJavaVM create_vm = load_libjvm();
  const std::string jar = find_jfilter_jar();
  // No attach listener (with -Xrs HotSpot opens /tmp/.java_pid<pid> at once: a control
  // socket into the process) and no perf-data file (/tmp/hsperfdata_<user>/<pid>): a process
  // that ends without the JVM's own shutdown left both in /tmp. jvm: options come after,
  // so `-XX:-DisableAttachMechanism` brings jcmd and jstack back (docs/java.md).
  std::vector<std::string> all = {"-Djava.class.path=" + jar, "-Xrs", "-XX:+DisableAttachMechanism",
                                  "-XX:-UsePerfData"};
  all.insert(all.end(), options.begin(), options.end());
  exit_note() = "sluice: the JVM could not start with options " + join(all) + " (see its message above); fix jvm: in " +
                topology_file + " or SLUICE_JVM_OPTIONS";
  // Before the JVM installs its own signal handlers: it keeps ours and chains to them for the
  // crashes that are not its own (a handler installed after it would replace HotSpot's).
  crash::install_handlers();
  JavaVM* vm = nullptr;
  std::string error;
  std::thread creator([&] {
    sigset_t quiet;
    sigemptyset(&quiet);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1}) sigaddset(&quiet, sig);
    pthread_sigmask(SIG_BLOCK, &quiet, nullptr);
    std::vector<JavaVMOption> vm_options;
    for (std::string& o : all) vm_options.push_back(JavaVMOption{o.data(), nullptr});
    vm_options.push_back(JavaVMOption{const_cast<char*>("exit"), reinterpret_cast<void*>(&on_jvm_exit)});
    vm_options.push_back(JavaVMOption{const_cast<char*>("abort"), reinterpret_cast<void*>(&on_jvm_abort)});
    JavaVMInitArgs args{};
    args.version = JNI_VERSION_10;
    args.nOptions = static_cast<jint>(vm_options.size());
    args.options = vm_options.data();
    args.ignoreUnrecognized = JNI_FALSE;
    JNIEnv* env = nullptr;
    const jint rc = create_vm(&vm, reinterpret_cast<void**>(&env), &args);
    if (rc != JNI_OK) {
      vm = nullptr;
      error = "the JVM did not start (JNI_CreateJavaVM returned " + std::to_string(rc) + ") with options " +
              join(all) + "; see the JVM's message above, and fix jvm: in the topology or SLUICE_JVM_OPTIONS";
      return;
    }
    try {
      load_types(env);
      watch_exit(env);
    } catch (const std::exception& e) {
      error = e.what();
    }
    vm->DetachCurrentThread();
  });
  creator.join();
  exit_note().clear();  // started: later exits (System.exit in a filter, say) are not ours to explain
  if (vm == nullptr || !error.empty()) throw Error(error);
  process::jvm_started();  // after libjvm was loaded: see process_exit.h
  return vm;
}

}  // namespace

JavaVM* jvm() { return the_vm.load(std::memory_order_acquire); }

void adopt_jvm(JavaVM* vm, JNIEnv* env) {
  Holder& h = holder();
  std::lock_guard<std::mutex> lock(h.mu);
  if (the_vm.load() != nullptr) return;
  load_types(env);
  h.adopted = true;
  the_vm.store(vm, std::memory_order_release);
}

void ensure_jvm(const topo::Topology& topology) {
  Holder& h = holder();
  std::lock_guard<std::mutex> lock(h.mu);
  const std::vector<std::string> wanted = jvm_options(topology);
  if (the_vm.load() != nullptr) {
    if ((h.adopted ? !topology.jvm.options.empty() || topology.jvm.heap != 0 : wanted != h.options) &&
        h.warned.insert(topology.file).second) {
      Logger("sluice").warn("the JVM of this process already runs (with options " +
                            (h.adopted ? std::string("set by whoever started it") : join(h.options)) +
                            "); the jvm: settings of " + topology.file + " (" + join(wanted) +
                            ") take effect only in a new process");
    }
    return;
  }
  if (!h.failure.empty()) throw Error(h.failure);
  try {
    // A JVM some other code created in this process (the JVM allows only one).
    if (auto get_created = reinterpret_cast<GetCreatedJavaVMs>(dlsym(RTLD_DEFAULT, "JNI_GetCreatedJavaVMs"))) {
      JavaVM* existing = nullptr;
      jsize count = 0;
      if (get_created(&existing, 1, &count) == JNI_OK && count > 0) {
        ScopedEnv attached(existing);
        load_types(attached.get());
        h.adopted = true;
        the_vm.store(existing, std::memory_order_release);
        return;
      }
    }
    JavaVM* vm = create(wanted, topology.file);
    h.options = wanted;
    the_vm.store(vm, std::memory_order_release);
  } catch (const std::exception& e) {
    h.failure = e.what();
    throw;
  }
}

void attach_thread() {
  JavaVM* vm = jvm();
  if (vm == nullptr) throw Error("internal: a Java filter thread started before the JVM (check_loadable was skipped)");
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_10) == JNI_OK) {
    attached_env = env;  // a Java thread already (an embedded run started from Java)
    return;
  }
  JavaVMAttachArgs args{JNI_VERSION_10, const_cast<char*>("sluice copy"), nullptr};
  if (vm->AttachCurrentThreadAsDaemon(reinterpret_cast<void**>(&env), &args) != JNI_OK) {
    throw Error("cannot attach a filter thread to the JVM (out of memory?)");
  }
  attached_env = env;
  attached_here = true;
  remember_copy_thread(env);
}

void detach_thread() {
  if (attached_here) {
    forget_copy_thread(attached_env);
    jvm()->DetachCurrentThread();
  }
  attached_env = nullptr;
  attached_here = false;
}

JNIEnv* thread_env() { return attached_env; }

ScopedEnv::ScopedEnv(JavaVM* vm) : vm_(vm) {
  if (vm == nullptr) throw Error("internal: the JVM was not started (check_loadable prepares it)");
  if (vm->GetEnv(reinterpret_cast<void**>(&env_), JNI_VERSION_10) == JNI_OK) return;
  JavaVMAttachArgs args{JNI_VERSION_10, const_cast<char*>("sluice"), nullptr};
  if (vm->AttachCurrentThreadAsDaemon(reinterpret_cast<void**>(&env_), &args) != JNI_OK) {
    throw Error("cannot attach a thread to the JVM (out of memory?)");
  }
  attached_ = true;
}

ScopedEnv::~ScopedEnv() {
  if (attached_) vm_->DetachCurrentThread();
}

}  // namespace sluice::jni
