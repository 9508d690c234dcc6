// Registration of native methods, checked against the class the JVM loaded.
//
// A JNINativeMethod table names each native method and its JVM descriptor by hand; the C++
// function beside it has the signature javac -h generated, so only the descriptor string can
// drift from the Java declaration. register_natives() compares the table with the class's own
// native methods (through reflection) before it registers anything: a descriptor that differs
// from the Java one, a native method the table forgot, or one the class does not declare (any
// more) stops start-up with a message naming the method and both descriptors. The same check
// catches a jfilter jar and a native library from different builds.
//
// Thread safety: both functions are safe from any thread attached to the JVM.
#ifndef SLUICE_JNI_REGISTER_NATIVES_H_
#define SLUICE_JNI_REGISTER_NATIVES_H_

#include <jni.h>

#include <span>
#include <string>

#include "jni_util.h"

// One row of a table for org.sluice.<cls>: the method's name, its JVM descriptor, and the
// function javac -h declared for it (Java_org_sluice_<cls>_<name>).
#define SLUICE_NATIVE(cls, name, descriptor)                             \
  JNINativeMethod {                                                      \
    const_cast<char*>(#name), const_cast<char*>(descriptor),             \
        reinterpret_cast<void*>(&Java_org_sluice_##cls##_##name)         \
  }

namespace sluice::jni {

// What keeps `methods` from being the native methods of `type` (called `class_name` in the
// messages, e.g. "org/sluice/Buffer"): one "; "-separated item per problem, each naming the
// method, the Java descriptor and the C++ one; "" when every native method `type` declares is
// in the table with the same descriptor and the table has nothing else. Throws sluice::Error
// when reflection fails (the Java exception cleared).
SLUICE_JNI_SHARED std::string natives_mismatch(JNIEnv* env, jclass type, const char* class_name,
                                               std::span<const JNINativeMethod> methods);

// Checks `methods` against `type` (natives_mismatch) and registers them. Throws sluice::Error
// that names the class and each problem, and says what to do; registers nothing then.
SLUICE_JNI_SHARED void register_natives(JNIEnv* env, jclass type, const char* class_name,
                                        std::span<const JNINativeMethod> methods);

// The same for the class `class_name` (slashes: "org/sluice/Buffer"), found through `env`'s
// class loader (FindClass). Throws sluice::Error when the class is missing.
SLUICE_JNI_SHARED void register_natives(JNIEnv* env, const char* class_name,
                                        std::span<const JNINativeMethod> methods);

}  // namespace sluice::jni

#endif  // SLUICE_JNI_REGISTER_NATIVES_H_
