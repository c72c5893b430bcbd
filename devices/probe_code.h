// The probe kernel's device code (devices/probe_kernel.h), built at build time and embedded in
// qvet, so that no compiler is needed at run time.
#pragma once
#include <cstddef>

namespace qvet {

struct ProbeCode {
  const char* target;  // "compute_80" (PTX), "gfx90a", ...
  const unsigned char* data;
  size_t size;
};

// PTX text for CUDA, NUL-terminated (size counts the NUL); size 0 when qvet was built without nvcc.
extern const ProbeCode kCudaProbe;
// One AMD code object (ELF) per gfx target; none when built without a clang that targets amdgcn.
extern const ProbeCode kHipProbes[];
extern const size_t kHipProbeCount;

}  // namespace qvet
