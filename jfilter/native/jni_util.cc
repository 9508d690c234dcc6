#include "jni_util.h"

#include <vector>

#include "java_types.h"
#include "sluice/error.h"

namespace sluice::jni {

namespace {

// UTF-8 -> UTF-16; malformed bytes become U+FFFD.
std::u16string utf16(std::string_view in) {
  std::u16string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size();) {
    const auto c = static_cast<unsigned char>(in[i]);
    char32_t cp = 0xFFFD;
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 1) {
      cp = c;
    } else if (n > 1 && i + n <= in.size()) {
      cp = c & (0x7F >> n);
      for (std::size_t k = 1; k < n; ++k) {
        const auto cc = static_cast<unsigned char>(in[i + k]);
        if ((cc >> 6) != 0x2) {
          n = k;
          cp = 0xFFFD;
          break;
        }
        cp = (cp << 6) | (cc & 0x3F);
      }
    } else {
      n = 1;
    }
    i += n;
    if (cp >= 0x10000 && cp <= 0x10FFFF) {
      cp -= 0x10000;
      out.push_back(static_cast<char16_t>(0xD800 + (cp >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + (cp & 0x3FF)));
    } else {
      out.push_back(static_cast<char16_t>(cp > 0x10FFFF ? 0xFFFD : cp));
    }
  }
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

void throw_new(JNIEnv* env, jclass type, std::string_view message) noexcept {
  if (env->ExceptionCheck()) return;  // keep the first
  jstring text = to_jstring(env, message);
  if (text == nullptr) return;  // OutOfMemoryError pending
  jmethodID init = env->GetMethodID(type, "<init>", "(Ljava/lang/String;)V");
  if (init == nullptr) return;
  auto error = static_cast<jthrowable>(env->NewObject(type, init, text));
  env->DeleteLocalRef(text);
  if (error != nullptr) {
    env->Throw(error);
    env->DeleteLocalRef(error);
  }
}

}  // namespace

std::string to_utf8(JNIEnv* env, jstring s) {
  if (s == nullptr) return {};
  const jsize n = env->GetStringLength(s);
  std::vector<jchar> chars(static_cast<std::size_t>(n));
  env->GetStringRegion(s, 0, n, chars.data());
  std::string out;
  out.reserve(chars.size());
  for (std::size_t i = 0; i < chars.size(); ++i) {
    char32_t cp = chars[i];
    if (cp >= 0xD800 && cp < 0xDC00 && i + 1 < chars.size() && chars[i + 1] >= 0xDC00 && chars[i + 1] < 0xE000) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (chars[++i] - 0xDC00);
    } else if (cp >= 0xD800 && cp < 0xE000) {
      cp = 0xFFFD;
    }
    append_utf8(out, cp);
  }
  return out;
}

jstring to_jstring(JNIEnv* env, std::string_view utf8) {
  bool ascii = true;
  for (char c : utf8) ascii = ascii && static_cast<unsigned char>(c) < 0x80 && c != '\0';
  jstring s;
  if (ascii && utf8.size() < 1024) {
    char text[1024];
    utf8.copy(text, utf8.size());
    text[utf8.size()] = '\0';
    s = env->NewStringUTF(text);  // plain ASCII is valid modified UTF-8
  } else {
    const std::u16string wide = utf16(utf8);
    s = env->NewString(reinterpret_cast<const jchar*>(wide.data()), static_cast<jsize>(wide.size()));
  }
  if (s == nullptr) throw JavaPending{};
  return s;
}

void throw_to_java(JNIEnv* env) noexcept {
  const JavaTypes& t = types();
  try {
    throw;
  } catch (const JavaPending&) {
    // Already pending: it propagates as it is.
  } catch (const StaleHandle& e) {
    throw_new(env, t.illegal_state, e.what());
  } catch (const Aborted& e) {
    throw_new(env, t.aborted_exception, e.what());
  } catch (const std::exception& e) {
    throw_new(env, t.sluice_exception, e.what());
  } catch (...) {
    throw_new(env, t.sluice_exception, "the sluice runtime failed with an unknown C++ exception");
  }
}

namespace {

// A Java string may hold U+0000, which would end the text wherever it travels as a C string
// (an exception's what(), a control message read back): shown as \x00, as failure texts
// show other control characters.
std::string nul_escaped(std::string text) {
  for (std::size_t at = text.find('\0'); at != std::string::npos; at = text.find('\0', at + 4)) {
    text.replace(at, 1, "\\x00");
  }
  return text;
}

}  // namespace

std::string take_pending(JNIEnv* env) {
  if (!env->ExceptionCheck()) return {};
  jthrowable t = env->ExceptionOccurred();
  env->ExceptionClear();
  jclass type = env->GetObjectClass(t);
  jmethodID to_string = env->GetMethodID(type, "toString", "()Ljava/lang/String;");
  auto text = to_string == nullptr ? nullptr : static_cast<jstring>(env->CallObjectMethod(t, to_string));
  env->ExceptionClear();
  std::string out =
      text == nullptr ? "a Java exception whose description could not be printed" : nul_escaped(to_utf8(env, text));
  env->DeleteLocalRef(text);
  env->DeleteLocalRef(type);
  env->DeleteLocalRef(t);
  return out;
}

std::string stack_trace(JNIEnv* env, jthrowable t) {
  const JavaTypes& types_ = types();
  auto text = static_cast<jstring>(env->CallStaticObjectMethod(types_.bridge, types_.bridge_stack_trace, t));
  if (env->ExceptionCheck() || text == nullptr) {
    // Printing failed (out of memory, say): fall back to toString().
    env->ExceptionClear();
    text = static_cast<jstring>(env->CallObjectMethod(t, types_.throwable_to_string));
    if (env->ExceptionCheck() || text == nullptr) {
      env->ExceptionClear();
      return "a Java exception whose description could not be printed";
    }
  }
  std::string out = nul_escaped(to_utf8(env, text));
  env->DeleteLocalRef(text);
  return out;
}

void rethrow_java_exception(JNIEnv* env) {
  if (!env->ExceptionCheck()) return;
  jthrowable t = env->ExceptionOccurred();
  env->ExceptionClear();
  const bool aborted = env->IsInstanceOf(t, types().aborted_exception);
  std::string message = aborted ? std::string() : stack_trace(env, t);
  env->DeleteLocalRef(t);
  if (aborted) throw Aborted();
  throw Error(message);
}

LocalFrame::LocalFrame(JNIEnv* env, jint capacity) : env_(env) {
  if (env->PushLocalFrame(capacity) != 0) {
    env->ExceptionClear();
    throw Error("the JVM is out of memory (no room for " + std::to_string(capacity) + " local references)");
  }
}

void JavaLookup::missing(const std::string& what) const {
  const std::string pending = take_pending(env_);
  throw Error("the JVM lacks " + what + (pending.empty() ? "" : ": " + pending) +
              "; the sluice jfilter jar on its class path must match " + library_ + " (rebuild both: make)");
}

jclass JavaLookup::global_class(const char* name) const {
  jclass local = env_->FindClass(name);
  if (local == nullptr) missing(std::string("class ") + name);
  auto global = static_cast<jclass>(env_->NewGlobalRef(local));
  env_->DeleteLocalRef(local);
  return global;
}

jmethodID JavaLookup::method(jclass type, const char* name, const char* signature) const {
  jmethodID id = env_->GetMethodID(type, name, signature);
  if (id == nullptr) missing(std::string("method ") + name + signature);
  return id;
}

jmethodID JavaLookup::static_method(jclass type, const char* name, const char* signature) const {
  jmethodID id = env_->GetStaticMethodID(type, name, signature);
  if (id == nullptr) missing(std::string("static method ") + name + signature);
  return id;
}

jfieldID JavaLookup::field(jclass type, const char* name, const char* signature) const {
  jfieldID id = env_->GetFieldID(type, name, signature);
  if (id == nullptr) missing(std::string("field ") + name + " " + signature);
  return id;
}

}  // namespace sluice::jni
