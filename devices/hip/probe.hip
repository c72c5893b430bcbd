// The probe kernel for HIP: compiled offline by clang to one AMD code object per target and
// embedded in qvet (no HIP headers or device libraries needed). s_memrealtime counts at the
// device's wall-clock rate, which the host measures at open and passes in (kHz), with the
// clock's lead over the host's.
#define QVET_GLOBAL __attribute__((global))
#define QVET_DEVICE __attribute__((device, always_inline)) inline
#define QVET_NOW() __builtin_amdgcn_s_memrealtime()
#define QVET_FENCE() __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "")
#include "devices/probe_kernel.h"
