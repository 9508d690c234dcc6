// The native methods of org.sluice.Application and org.sluice.Unit, and the JNI_OnLoad of
// libsluice_application_jni: a Java program's own JVM drives sluice/application.h.
//
// Each entry point resolves its handle in a HandleTable (a handle that names nothing is a
// closed object: IllegalStateException, or nothing for the calls that are safe to repeat), does
// the work through ClientApp/ClientUnit, and turns every C++ exception into a Java one
// (guarded, jni_util.h: StaleHandle -> IllegalStateException, anything else -> SluiceException).
// Signatures come from the headers javac -h generates; app_types.cc registers them, after
// checking its descriptors against the classes (register_natives.h).
#include <cstdio>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "application/app_types.h"
#include "application/client_app.h"
#include "application/client_unit.h"
#include "application/handle_table.h"
#include "jni_util.h"
#include "jvm.h"
#include "org_sluice_Application.h"
#include "org_sluice_Unit.h"
#include "sluice/application.h"

using sluice::jni::ClientApp;
using sluice::jni::ClientUnit;
using sluice::jni::HandleTable;
using sluice::jni::StaleHandle;

namespace {

// Both live until the process exits, like the JVM (no destructor races with threads at exit).
HandleTable<ClientApp>& apps() {
  static auto* table = new HandleTable<ClientApp>();
  return *table;
}

HandleTable<ClientUnit>& units() {
  static auto* table = new HandleTable<ClientUnit>();
  return *table;
}

// Units detached before they ended (Unit.close(), and a read() that saw the end of the results:
// neither waits), until their report went to Java: delivered, and the unit removed from units()
// when no result buffer is out, by the next submit(), close() or end of results after the end,
// or by Unit.waitFor(), or the application's stop.
class DetachedUnits {
 public:
  void add(jlong handle, std::shared_ptr<ClientUnit> unit) {
    std::lock_guard<std::mutex> lock(mu_);
    units_.emplace_back(handle, std::move(unit));
  }
  // After `unit` was detached: removes it from units() when its report could be delivered
  // already (and no result buffer is out), else keeps it for a later sweep. Never waits.
  void let_go_or_keep(JNIEnv* env, jlong handle, std::shared_ptr<ClientUnit> unit) {
    if (unit->finish_if_ended(env)) {
      units().remove(handle);
    } else {
      add(handle, std::move(unit));
    }
  }
  // Delivers the reports of the units that have ended, and forgets them. Never waits.
  void sweep(JNIEnv* env) {
    std::vector<std::pair<jlong, std::shared_ptr<ClientUnit>>> pending;
    {
      std::lock_guard<std::mutex> lock(mu_);
      pending.swap(units_);
    }
    std::vector<std::pair<jlong, std::shared_ptr<ClientUnit>>> waiting;
    for (auto& [handle, unit] : pending) {
      if (unit->finish_if_ended(env)) {
        units().remove(handle);
      } else {
        waiting.emplace_back(handle, std::move(unit));
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    units_.insert(units_.end(), std::make_move_iterator(waiting.begin()), std::make_move_iterator(waiting.end()));
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<jlong, std::shared_ptr<ClientUnit>>> units_;
};

DetachedUnits& detached_units() {
  static auto* detached = new DetachedUnits();
  return *detached;
}

std::shared_ptr<ClientApp> app_of(jlong handle) {
  std::shared_ptr<ClientApp> app = apps().find(handle);
  if (!app) throw StaleHandle("this Application was closed; open it again");
  return app;
}

sluice::ApplicationOptions to_options(JNIEnv* env, jobjectArray strings, jboolean encrypt, jint nodes,
                                      jboolean log_to_stderr) {
  auto at = [&](jsize i) {
    auto s = static_cast<jstring>(env->GetObjectArrayElement(strings, i));
    std::string out = sluice::jni::to_utf8(env, s);
    env->DeleteLocalRef(s);
    return out;
  };
  // The order of ApplicationOptions.strings().
  sluice::ApplicationOptions o;
  o.hosts = at(0);
  o.token_file = at(1);
  o.cert_file = at(2);
  o.key_file = at(3);
  o.ca_file = at(4);
  o.client_listen = at(5);
  o.launcher = at(6);
  o.partition = at(7);
  o.time = at(8);
  o.account = at(9);
  o.data_ports = at(10);
  o.encrypt = encrypt;
  o.nodes = nodes;
  o.log_to_stderr = log_to_stderr;
  return o;
}

}  // namespace

// ---- Application

JNIEXPORT jlong JNICALL Java_org_sluice_Application_nOpen(JNIEnv* env, jclass, jstring path, jstring yaml,
                                                         jstring name, jstring base_dir, jobjectArray options,
                                                         jboolean encrypt, jint nodes, jboolean log_to_stderr) {
  return sluice::jni::guarded(env, [&] {
    sluice::ApplicationOptions o = to_options(env, options, encrypt, nodes, log_to_stderr);
    sluice::Application app =
        path != nullptr
            ? sluice::Application::open(sluice::jni::to_utf8(env, path), std::move(o))
            : sluice::Application::from_text(sluice::jni::to_utf8(env, yaml), sluice::jni::to_utf8(env, name),
                                             sluice::jni::to_utf8(env, base_dir), std::move(o));
    return apps().add(std::make_shared<ClientApp>(std::move(app), units()));
  });
}

JNIEXPORT jstring JNICALL Java_org_sluice_Application_nName(JNIEnv* env, jclass, jlong handle) {
  return sluice::jni::guarded(env, [&] {
    return sluice::jni::to_jstring(env, app_of(handle)->name());
  });
}

JNIEXPORT jboolean JNICALL Java_org_sluice_Application_nRemote(JNIEnv* env, jclass, jlong handle) {
  return sluice::jni::guarded(env, [&] {
    return app_of(handle)->remote();
  });
}

JNIEXPORT void JNICALL Java_org_sluice_Application_nStart(JNIEnv* env, jclass, jlong handle) {
  return sluice::jni::guarded(env, [&] {
    app_of(handle)->start();
  });
}

JNIEXPORT jlongArray JNICALL Java_org_sluice_Application_nSubmit(JNIEnv* env, jclass, jlong handle, jbyteArray payload,
                                                                jobject unit) {
  return sluice::jni::guarded(env, [&] {
    detached_units().sweep(env);
    std::string bytes(static_cast<std::size_t>(env->GetArrayLength(payload)), '\0');
    env->GetByteArrayRegion(payload, 0, static_cast<jsize>(bytes.size()), reinterpret_cast<jbyte*>(bytes.data()));
    auto [unit_handle, index] = app_of(handle)->submit(env, std::move(bytes), unit);
    jlongArray out = env->NewLongArray(2);
    sluice::jni::check_pending(env);
    const jlong values[2] = {unit_handle, static_cast<jlong>(index)};
    env->SetLongArrayRegion(out, 0, 2, values);
    return out;
  });
}

JNIEXPORT void JNICALL Java_org_sluice_Application_nStop(JNIEnv* env, jclass, jlong handle, jboolean abort) {
  return sluice::jni::guarded(env, [&] {
    app_of(handle)->stop(env, abort);
  });
}

JNIEXPORT void JNICALL Java_org_sluice_Application_nClose(JNIEnv* env, jclass, jlong handle) {
  return sluice::jni::guarded(env, [&] {
    std::shared_ptr<ClientApp> app = apps().find(handle);
    if (!app) return;
    app->stop(env, false);
    apps().remove(handle);
  });
}

JNIEXPORT jlong JNICALL Java_org_sluice_Application_nUnitsEnded(JNIEnv* env, jclass, jlong handle) {
  return sluice::jni::guarded(env, [&] {
    return static_cast<jlong>(app_of(handle)->units_ended());
  });
}

// ---- Unit

JNIEXPORT jlong JNICALL Java_org_sluice_Unit_nRead(JNIEnv* env, jclass, jlong handle, jobject mailbox) {
  return sluice::jni::guarded(env, [&] {
    std::shared_ptr<ClientUnit> unit = units().find(handle);
    if (!unit) return jlong{0};  // done, or closed: Java knows which (Unit.ended came first)
    auto* box = static_cast<std::byte*>(env->GetDirectBufferAddress(mailbox));
    if (box == nullptr || env->GetDirectBufferCapacity(mailbox) < 16) {
      throw sluice::Error("internal: Unit.nRead needs a direct ByteBuffer of 16 bytes");
    }
    return unit->read(env, box);
  });
}

JNIEXPORT jobject JNICALL Java_org_sluice_Unit_nShared(JNIEnv* env, jclass, jlong handle, jobject peer,
                                                      jlong buffer) {
  return sluice::jni::guarded(env, [&] {
    std::shared_ptr<ClientUnit> unit = units().find(handle);
    if (!unit) throw StaleHandle("this Unit was closed while its result was being read");
    return unit->shared(env, peer, buffer);
  });
}

JNIEXPORT void JNICALL Java_org_sluice_Unit_nRelease(JNIEnv* env, jclass, jlong handle, jlong buffer) {
  return sluice::jni::guarded(env, [&] {
    std::shared_ptr<ClientUnit> unit = units().find(handle);
    if (unit && unit->release(env, buffer)) units().remove(handle);
  });
}

JNIEXPORT void JNICALL Java_org_sluice_Unit_nFinish(JNIEnv* env, jclass, jlong handle) {
  return sluice::jni::guarded(env, [&] {
    std::shared_ptr<ClientUnit> unit = units().find(handle);
    if (unit && unit->finish(env)) units().remove(handle);
  });
}

JNIEXPORT void JNICALL Java_org_sluice_Unit_nClose(JNIEnv* env, jclass, jlong handle) {
  return sluice::jni::guarded(env, [&] {
    detached_units().sweep(env);
    std::shared_ptr<ClientUnit> unit = units().find(handle);
    if (!unit) return;
    unit->close(env, "this Unit was closed; the results it had not read were discarded");
    detached_units().let_go_or_keep(env, handle, std::move(unit));
  });
}

JNIEXPORT void JNICALL Java_org_sluice_Unit_nResultsEnded(JNIEnv* env, jclass, jlong handle) {
  return sluice::jni::guarded(env, [&] {
    detached_units().sweep(env);
    std::shared_ptr<ClientUnit> unit = units().find(handle);
    if (!unit) return;
    unit->detach(env);
    detached_units().let_go_or_keep(env, handle, std::move(unit));
  });
}

JNIEXPORT void JNICALL Java_org_sluice_Unit_nCancel(JNIEnv* env, jclass, jlong handle) {
  return sluice::jni::guarded(env, [&] {
    if (std::shared_ptr<ClientUnit> unit = units().find(handle)) unit->cancel();
  });
}

// Loaded by a Java program (System.load, through org.sluice.NativeLibrary): adopt its JVM for
// the runtime (so Java filters run in it, their classes loading through the same class loader
// as org.sluice), then register the natives of Application and Unit.
extern "C" JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void*) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_10) != JNI_OK) return JNI_ERR;
  try {
    sluice::jni::adopt_jvm(vm, env);
    sluice::jni::load_app_types(env);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libsluice_application_jni: %s\n", e.what());
    return JNI_ERR;
  }
  return JNI_VERSION_10;
}
