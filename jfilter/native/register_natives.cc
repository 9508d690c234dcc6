#include "register_natives.h"

#include <string_view>
#include <vector>

#include "sluice/error.h"

namespace sluice::jni {

namespace {

struct Declared {
  std::string name;
  std::string descriptor;
  bool matched = false;
};

// Throws sluice::Error for a failed reflection call (the Java exception cleared).
void check(JNIEnv* env, const char* class_name, const char* what) {
  if (!env->ExceptionCheck()) return;
  const std::string why = take_pending(env);
  throw Error(std::string("cannot list the native methods of ") + class_name + " (" + what + "): " + why);
}

jmethodID method_id(JNIEnv* env, jclass type, const char* name, const char* descriptor, const char* class_name) {
  jmethodID id = env->GetMethodID(type, name, descriptor);
  check(env, class_name, name);
  return id;
}

std::string descriptor_of(JNIEnv* env, jobject type, jmethodID descriptor_string, const char* class_name) {
  auto text = static_cast<jstring>(env->CallObjectMethod(type, descriptor_string));
  check(env, class_name, "Class.descriptorString");
  std::string out = to_utf8(env, text);
  env->DeleteLocalRef(text);
  return out;
}

// The native methods `type` declares (not inherited ones), with their JVM descriptors.
std::vector<Declared> declared_natives(JNIEnv* env, jclass type, const char* class_name) {
  constexpr jint kNative = 0x100;  // java.lang.reflect.Modifier.NATIVE
  LocalFrame frame(env, 16);
  jclass class_class = env->FindClass("java/lang/Class");
  jclass method_class = env->FindClass("java/lang/reflect/Method");
  check(env, class_name, "java.lang.reflect");
  jmethodID declared_methods =
      method_id(env, class_class, "getDeclaredMethods", "()[Ljava/lang/reflect/Method;", class_name);
  jmethodID descriptor_string = method_id(env, class_class, "descriptorString", "()Ljava/lang/String;", class_name);
  jmethodID modifiers = method_id(env, method_class, "getModifiers", "()I", class_name);
  jmethodID name = method_id(env, method_class, "getName", "()Ljava/lang/String;", class_name);
  jmethodID return_type = method_id(env, method_class, "getReturnType", "()Ljava/lang/Class;", class_name);
  jmethodID parameter_types = method_id(env, method_class, "getParameterTypes", "()[Ljava/lang/Class;", class_name);

  auto methods = static_cast<jobjectArray>(env->CallObjectMethod(type, declared_methods));
  check(env, class_name, "Class.getDeclaredMethods");
  std::vector<Declared> out;
  const jsize count = env->GetArrayLength(methods);
  for (jsize i = 0; i < count; ++i) {
    LocalFrame per_method(env, 16);
    jobject m = env->GetObjectArrayElement(methods, i);
    const jint flags = env->CallIntMethod(m, modifiers);
    check(env, class_name, "Method.getModifiers");
    if ((flags & kNative) == 0) continue;
    Declared d;
    auto method_name = static_cast<jstring>(env->CallObjectMethod(m, name));
    check(env, class_name, "Method.getName");
    d.name = to_utf8(env, method_name);
    auto parameters = static_cast<jobjectArray>(env->CallObjectMethod(m, parameter_types));
    check(env, class_name, "Method.getParameterTypes");
    d.descriptor = "(";
    for (jsize p = 0, n = env->GetArrayLength(parameters); p < n; ++p) {
      jobject parameter = env->GetObjectArrayElement(parameters, p);
      d.descriptor += descriptor_of(env, parameter, descriptor_string, class_name);
      env->DeleteLocalRef(parameter);
    }
    jobject returned = env->CallObjectMethod(m, return_type);
    check(env, class_name, "Method.getReturnType");
    d.descriptor += ")" + descriptor_of(env, returned, descriptor_string, class_name);
    out.push_back(std::move(d));
  }
  return out;
}

std::string dotted(std::string_view class_name) {
  std::string out(class_name);
  for (char& c : out) c = c == '/' ? '.' : c;
  return out;
}

}  // namespace

std::string natives_mismatch(JNIEnv* env, jclass type, const char* class_name,
                             std::span<const JNINativeMethod> methods) {
  std::vector<Declared> declared = declared_natives(env, type, class_name);
  const std::string owner = dotted(class_name);
  std::string problems;
  auto add = [&problems](const std::string& problem) { problems += (problems.empty() ? "" : "; ") + problem; };
  for (const JNINativeMethod& m : methods) {
    bool exact = false;
    std::string java;  // the Java descriptors of methods with this name
    for (Declared& d : declared) {
      if (d.name != m.name) continue;
      if (d.descriptor == m.signature) {
        exact = d.matched = true;
        break;
      }
      java += (java.empty() ? "" : " or ") + d.descriptor;
    }
    if (exact) continue;
    if (!java.empty()) {
      for (Declared& d : declared) d.matched = d.matched || d.name == m.name;  // reported here, not as missing
      add("native method " + owner + "." + m.name + ": Java declares " + java + ", the C++ table registers " +
          m.signature);
    } else {
      add("native method " + owner + "." + m.name + " " + m.signature +
          ": in the C++ table, but the Java class declares no such native method");
    }
  }
  for (const Declared& d : declared) {
    if (!d.matched) {
      add("native method " + owner + "." + d.name + " " + d.descriptor +
          ": declared in Java, missing from the C++ table");
    }
  }
  return problems;
}

void register_natives(JNIEnv* env, jclass type, const char* class_name, std::span<const JNINativeMethod> methods) {
  const std::string problems = natives_mismatch(env, type, class_name, methods);
  if (!problems.empty()) {
    throw Error(problems +
                "; the jfilter jar on the JVM's class path and the sluice native libraries must come from one "
                "build (rebuild both: make), and a changed native method needs its JNINativeMethod row changed too");
  }
  if (env->RegisterNatives(type, methods.data(), static_cast<jint>(methods.size())) != JNI_OK) {
    throw Error("cannot register the native methods of " + dotted(class_name) + ": " + take_pending(env));
  }
}

void register_natives(JNIEnv* env, const char* class_name, std::span<const JNINativeMethod> methods) {
  jclass type = env->FindClass(class_name);
  if (type == nullptr) {
    throw Error(std::string("the JVM lacks class ") + class_name + ": " + take_pending(env) +
                "; the jfilter jar on its class path must match the sluice native libraries (rebuild both: make)");
  }
  try {
    register_natives(env, type, class_name, methods);
  } catch (...) {
    env->DeleteLocalRef(type);
    throw;
  }
  env->DeleteLocalRef(type);
}

}  // namespace sluice::jni
