// ClientApp: the native peer of one org.sluice.Application: the sluice::Application and the
// units submitted through it that the client side has not finished with (client_unit.h).
//
// stop() is where Java's promise "close() never waits for a reader that will not come" is
// kept: it refuses new units, discards the results nobody has read yet (a reader that is still
// reading gets IllegalStateException saying so), takes back every result buffer still out,
// lets every submitted unit run to its end (or, with abort, cancels them), delivers each unit's
// report to its Java Unit, and stops the sluice::Application. Result buffers go back before any
// unit is drained, so a pool that a client emptied cannot hold the drain up.
//
// Thread safety: every method from any thread; stop() calls run one at a time.
#ifndef SLUICE_JNI_APPLICATION_CLIENT_APP_H_
#define SLUICE_JNI_APPLICATION_CLIENT_APP_H_

#include <jni.h>

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "application/client_unit.h"
#include "application/handle_table.h"
#include "sluice/application.h"

namespace sluice::jni {

class ClientApp {
 public:
  // `units`: the table where submit() files new units (it outlives every ClientApp).
  ClientApp(Application app, HandleTable<ClientUnit>& units) : app_(std::move(app)), units_table_(units) {}

  const std::string& name() const { return app_.name(); }
  bool remote() const { return app_.remote(); }
  std::uint64_t units_ended() const { return app_.units_ended(); }

  // sluice::Application::start(). Throws sluice::Error naming what failed.
  void start() { app_.start(); }

  // Appends a unit with `payload` for the Java Unit `java_unit`; returns its handle in the
  // units table and its index. Throws StaleHandle once stop() began.
  std::pair<jlong, std::uint64_t> submit(JNIEnv* env, std::string payload, jobject java_unit);

  // See above. `abort`: cancel the running and queued units instead of running them.
  // Idempotent (a second call finds nothing left to do).
  void stop(JNIEnv* env, bool abort);

 private:
  Application app_;
  HandleTable<ClientUnit>& units_table_;

  std::mutex stop_mu_;  // one stop() at a time

  std::mutex mu_;  // guards what follows
  std::vector<std::pair<jlong, std::weak_ptr<ClientUnit>>> units_;  // in submission order
  std::string stopped_;  // why submit() is refused; "" while it is not
};

}  // namespace sluice::jni

#endif  // SLUICE_JNI_APPLICATION_CLIENT_APP_H_
