// The registration check (register_natives.h) against a small class, NativeShapes, with
// tables right and wrong: a descriptor that drifted, a native method the table forgot and a
// row the class does not declare are each named with both descriptors, and a right table
// registers methods that Java can then call.
#include "register_natives.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "java_test_support.h"
#include "jvm.h"
#include "sluice/error.h"

namespace jtest {
namespace {

jlong twice(JNIEnv*, jclass, jlong x) { return 2 * x; }
jstring name(JNIEnv*, jclass, jint, jobjectArray) { return nullptr; }
void instance(JNIEnv*, jobject) {}

JNINativeMethod row(const char* method, const char* descriptor, void* function) {
  return {const_cast<char*>(method), const_cast<char*>(descriptor), function};
}

const JNINativeMethod kTwice = row("nTwice", "(J)J", reinterpret_cast<void*>(&twice));
const JNINativeMethod kName = row("nName", "(I[Ljava/lang/String;)Ljava/lang/String;", reinterpret_cast<void*>(&name));
const JNINativeMethod kInstance = row("nInstance", "()V", reinterpret_cast<void*>(&instance));

class JniRegisterNatives : public ::testing::Test {
 protected:
  // The JVM is the runtime's own, started by a run with a Java filter; NativeShapes loads
  // through the class loader the runtime gives the test filters' jar.
  void SetUp() override {
    testing_filters::RunOutcome out = run(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 1, size: 64}}
  mid:  {lang: java, class: org.sluice.nativetest.Relay, classpath: [@JAR@]}
  sink: {class: "testing_filters::TestSink"}
streams:
  - {from: src.out, to: mid.in}
  - {from: mid.out, to: sink.in}
)");
    ASSERT_FALSE(out.failure) << out.failure->str();
    JavaVM* vm = sluice::jni::jvm();
    ASSERT_NE(vm, nullptr);
    ASSERT_EQ(vm->AttachCurrentThread(reinterpret_cast<void**>(&env_), nullptr), JNI_OK);
    jclass bridge = env_->FindClass("org/sluice/Bridge");
    ASSERT_NE(bridge, nullptr);
    jmethodID loader_of = env_->GetStaticMethodID(bridge, "loader", "([Ljava/lang/String;)Ljava/lang/ClassLoader;");
    jclass string = env_->FindClass("java/lang/String");
    jobjectArray classpath = env_->NewObjectArray(1, string, env_->NewStringUTF(JAVA_TEST_FILTERS_JAR));
    jobject loader = env_->CallStaticObjectMethod(bridge, loader_of, classpath);
    ASSERT_FALSE(env_->ExceptionCheck());
    jclass class_class = env_->FindClass("java/lang/Class");
    jmethodID for_name =
        env_->GetStaticMethodID(class_class, "forName", "(Ljava/lang/String;ZLjava/lang/ClassLoader;)Ljava/lang/Class;");
    shapes_ = static_cast<jclass>(env_->CallStaticObjectMethod(
        class_class, for_name, env_->NewStringUTF("org.sluice.nativetest.NativeShapes"), JNI_FALSE, loader));
    ASSERT_FALSE(env_->ExceptionCheck());
    ASSERT_NE(shapes_, nullptr);
  }

  void TearDown() override {
    if (env_ != nullptr) sluice::jni::jvm()->DetachCurrentThread();  // frees the local references
  }

  std::string mismatch(const std::vector<JNINativeMethod>& table) {
    return sluice::jni::natives_mismatch(env_, shapes_, "org/sluice/nativetest/NativeShapes", table);
  }

  JNIEnv* env_ = nullptr;
  jclass shapes_ = nullptr;
};

TEST_F(JniRegisterNatives, RegistersATableThatMatchesTheClass) {
  const std::vector<JNINativeMethod> table = {kInstance, kName, kTwice};  // any order
  EXPECT_EQ(mismatch(table), "");
  sluice::jni::register_natives(env_, shapes_, "org/sluice/nativetest/NativeShapes", table);
  jmethodID twice_in_java = env_->GetStaticMethodID(shapes_, "twice", "(J)J");
  ASSERT_NE(twice_in_java, nullptr);
  EXPECT_EQ(env_->CallStaticLongMethod(shapes_, twice_in_java, jlong{21}), 42);  // Java -> nTwice -> C++
  EXPECT_FALSE(env_->ExceptionCheck());
}

TEST_F(JniRegisterNatives, NamesADescriptorThatDiffersFromTheJavaOne) {
  EXPECT_EQ(mismatch({row("nTwice", "(I)J", reinterpret_cast<void*>(&twice)), kName, kInstance}),
            "native method org.sluice.nativetest.NativeShapes.nTwice: Java declares (J)J, the C++ table "
            "registers (I)J");
  EXPECT_EQ(mismatch({kTwice, row("nName", "(I[Ljava/lang/String;)[B", reinterpret_cast<void*>(&name)), kInstance}),
            "native method org.sluice.nativetest.NativeShapes.nName: Java declares "
            "(I[Ljava/lang/String;)Ljava/lang/String;, the C++ table registers (I[Ljava/lang/String;)[B");
}

TEST_F(JniRegisterNatives, NamesANativeMethodTheTableForgot) {
  EXPECT_EQ(mismatch({kTwice, kInstance}),
            "native method org.sluice.nativetest.NativeShapes.nName (I[Ljava/lang/String;)Ljava/lang/String;: "
            "declared in Java, missing from the C++ table");
}

TEST_F(JniRegisterNatives, NamesARowTheClassDoesNotDeclareNative) {
  EXPECT_EQ(mismatch({kTwice, kName, kInstance, row("twice", "(J)J", reinterpret_cast<void*>(&twice)),
                      row("nGone", "()V", reinterpret_cast<void*>(&instance))}),
            "native method org.sluice.nativetest.NativeShapes.twice (J)J: in the C++ table, but the Java class "
            "declares no such native method; native method org.sluice.nativetest.NativeShapes.nGone ()V: in the "
            "C++ table, but the Java class declares no such native method");
}

TEST_F(JniRegisterNatives, RefusesAWrongTableSayingWhatToDo) {
  try {
    sluice::jni::register_natives(env_, shapes_, "org/sluice/nativetest/NativeShapes",
                                  std::vector<JNINativeMethod>{row("nTwice", "(I)J", reinterpret_cast<void*>(&twice))});
    FAIL() << "a wrong table was registered";
  } catch (const sluice::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("nTwice: Java declares (J)J, the C++ table registers (I)J"), std::string::npos) << what;
    EXPECT_NE(what.find("nName (I[Ljava/lang/String;)Ljava/lang/String;: declared in Java, missing"),
              std::string::npos) << what;
    EXPECT_NE(what.find("rebuild both: make"), std::string::npos) << what;
  }
  EXPECT_FALSE(env_->ExceptionCheck());
}

}  // namespace
}  // namespace jtest
