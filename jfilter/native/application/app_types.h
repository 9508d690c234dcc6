// The Java classes and methods the Application binding calls, looked up once when a JVM loads
// libsluice_application_jni (JNI_OnLoad), and the registration of the native methods of
// org.sluice.Application and org.sluice.Unit. The rest (Buffer, Peer, Bindings, exceptions)
// is libsluice_jni's (java_types.h), looked up through the same class loader.
#ifndef SLUICE_JNI_APPLICATION_APP_TYPES_H_
#define SLUICE_JNI_APPLICATION_APP_TYPES_H_

#include <jni.h>

#include "sluice/application.h"

namespace sluice::jni {

struct AppTypes {
  jclass unit_report;        // global reference
  jmethodID unit_report_new;
  jmethodID unit_ended;      // Unit.ended(UnitReport, String)
  jmethodID unit_expire;     // Unit.expire(int, long)
};

// REQUIRES: load_app_types() succeeded (JNI_OnLoad returns an error otherwise).
const AppTypes& app_types();

// Looks everything up through `env` (the loading class's loader) and registers the natives.
// Throws sluice::Error naming what is missing.
void load_app_types(JNIEnv* env);

// A new org.sluice.UnitReport (local reference). Throws JavaPending when Java failed.
jobject to_java(JNIEnv* env, const UnitReport& report);

}  // namespace sluice::jni

#endif  // SLUICE_JNI_APPLICATION_APP_TYPES_H_
