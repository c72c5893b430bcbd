// The probe kernel (devices/probe_kernel.h) compiled for the CPU, for one stand-in driver. The
// includer defines QVET_NOW() first: its device clock. Spin loops yield, and stop when the stream
// is destroyed.
#pragma once
#include <atomic>

#include "tests/fake_drivers/fake_gpu.h"

#define QVET_GLOBAL
#define QVET_DEVICE inline
#define QVET_FENCE() std::atomic_thread_fence(std::memory_order_seq_cst)
#define QVET_SPIN() \
  if (qvet::fake::spin()) return
#include "devices/probe_kernel.h"

namespace qvet::fake {

inline void run_probe(const ProbeArgs& a) {
  auto u64 = [](uint64_t x) { return reinterpret_cast<qvet_u64*>(uintptr_t(x)); };
  auto u32 = [](uint64_t x) { return reinterpret_cast<qvet_u32*>(uintptr_t(x)); };
  qvet_probe(u64(a.times), a.slot, a.stamp, a.duration, u32(a.cells), u32(a.desc), a.d, u32(a.seen), u64(a.word), a.value,
             a.width, a.hz, a.shift);
}

// The device clock's lead over the host's: a calibration that forgot it would log wrong times.
constexpr uint64_t kClockLead = 7'000'000'000;

}  // namespace qvet::fake
