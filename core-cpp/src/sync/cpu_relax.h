// cpu_relax: the spin-wait hint between two looks at a value another CPU will change (x86
// `pause`, AArch64 `yield`): it lets the other hyperthread run and keeps the loop from
// flooding the memory system with speculative loads. Nothing elsewhere.
#ifndef SLUICE_SYNC_CPU_RELAX_H_
#define SLUICE_SYNC_CPU_RELAX_H_

namespace sluice {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace sluice

#endif  // SLUICE_SYNC_CPU_RELAX_H_
