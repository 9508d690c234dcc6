#include "runtime/process_exit.h"

#include <atomic>

namespace sluice::process {

namespace {
std::atomic<bool> end_early{false};
}  // namespace

void end_before_jvm_statics_at_exit() { end_early.store(true, std::memory_order_release); }

bool ends_before_jvm_statics_at_exit() { return end_early.load(std::memory_order_acquire); }

}  // namespace sluice::process
