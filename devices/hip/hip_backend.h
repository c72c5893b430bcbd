// The `hip` back end: replay through the HIP runtime, loaded at run time with dlopen
// (libamdhip64.so.6, .so.5 or .so: Debian ships 5.2, ROCm installs newer). Waits and writes on
// words are hipStreamWaitValue64/32 (flag hipStreamWaitValueGte) and hipStreamWriteValue64/32;
// the probe kernel is one of the embedded AMD code objects (devices/probe_code.h), the first that
// hipModuleLoadData accepts on the device (no device-property struct is read: its layout
// changed between ROCm releases). A GpuApi (devices/gpu_stream.h, which does the rest, including
// the calibration of s_memrealtime's rate and lead). QVET_HIP_LIBRARY names another library to
// load (the tests' stand-in, tests/fake_drivers/). GPU_MAX_HW_QUEUES is raised to 16 (unless set) so that a
// blocked wait does not stall unrelated streams sharing a hardware queue. hipStreamWaitValueGte
// compares unsigned (HIP's documentation); the plan's spin rule is CUDA's, harmless here.
#pragma once
#include <memory>

#include "devices/backend.h"

namespace qvet {

// Defined only in builds with the HIP headers (QVET_HAVE_HIP_HEADERS, cmake/probe.cmake).
std::unique_ptr<Backend> make_hip_backend();

}  // namespace qvet
