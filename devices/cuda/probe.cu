// The probe kernel for CUDA: compiled to PTX (compute_80) at build time and embedded in qvet;
// the driver JIT-compiles it for the GPU it runs on. %globaltimer counts nanoseconds.
#define QVET_GLOBAL __global__
#define QVET_DEVICE __device__ __forceinline__
#define QVET_NOW() qvet_globaltimer()
#define QVET_FENCE() __threadfence_system()
static __device__ __forceinline__ unsigned long long qvet_globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#include "devices/probe_kernel.h"
