// AdaptiveMutex: a mutex for very short critical sections that several threads hit at
// a high rate (a connection's send queue). It is glibc's adaptive pthread mutex: a thread
// that finds it held spins briefly (the holder is about to let go) before it sleeps in the
// kernel, where std::mutex goes to sleep at once and its unlock then pays a futex wake-up.
//
// Thread safety: a Lockable (lock, try_lock, unlock) for std::unique_lock / lock_guard; use
// std::condition_variable_any to wait with it.
#ifndef SLUICE_SYNC_ADAPTIVE_MUTEX_H_
#define SLUICE_SYNC_ADAPTIVE_MUTEX_H_

#include <pthread.h>

namespace sluice {

class AdaptiveMutex {
 public:
  AdaptiveMutex() noexcept {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(&mu_, &attr);
    pthread_mutexattr_destroy(&attr);
  }
  ~AdaptiveMutex() { pthread_mutex_destroy(&mu_); }
  AdaptiveMutex(const AdaptiveMutex&) = delete;
  AdaptiveMutex& operator=(const AdaptiveMutex&) = delete;

  void lock() noexcept { pthread_mutex_lock(&mu_); }
  bool try_lock() noexcept { return pthread_mutex_trylock(&mu_) == 0; }
  void unlock() noexcept { pthread_mutex_unlock(&mu_); }

 private:
  pthread_mutex_t mu_;
};

}  // namespace sluice

#endif  // SLUICE_SYNC_ADAPTIVE_MUTEX_H_
