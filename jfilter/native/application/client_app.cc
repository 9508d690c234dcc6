#include "application/client_app.h"

#include "jni_util.h"

namespace sluice::jni {

std::pair<jlong, std::uint64_t> ClientApp::submit(JNIEnv* env, std::string payload, jobject java_unit) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!stopped_.empty()) throw StaleHandle(stopped_ + "; submit units before stop() or close(), or open the application again");
  auto unit = std::make_shared<ClientUnit>(env, app_.submit(std::move(payload)), java_unit);
  const std::uint64_t index = unit->index();
  const jlong handle = units_table_.add(unit);
  // Units the client side finished with are gone from the table: forget them now and then,
  // so that a long-lived application does not keep a list entry per unit it ever ran.
  if (units_.size() >= 64 && units_.size() == units_.capacity()) {
    std::erase_if(units_, [](const auto& entry) { return entry.second.expired(); });
  }
  units_.emplace_back(handle, unit);
  return {handle, index};
}

void ClientApp::stop(JNIEnv* env, bool abort) {
  std::lock_guard<std::mutex> stopping(stop_mu_);
  std::vector<std::pair<jlong, std::shared_ptr<ClientUnit>>> live;
  std::string why;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_.empty()) {
      stopped_ = abort ? "the application was aborted" : "the application was stopped";
    }
    why = stopped_ + "; the results of this unit that had not been read were discarded";
    for (auto& [handle, weak] : units_) {
      if (auto unit = weak.lock()) live.emplace_back(handle, std::move(unit));
    }
    units_.clear();
  }
  for (auto& [handle, unit] : live) unit->discard(env, why);
  if (abort) app_.abort();
  for (auto& [handle, unit] : live) {
    try {
      unit->end(env);
    } catch (const JavaPending&) {
      env->ExceptionClear();  // a report Java could not take (out of memory): the others still go
    }
    units_table_.remove(handle);
  }
  app_.stop();
}

}  // namespace sluice::jni
