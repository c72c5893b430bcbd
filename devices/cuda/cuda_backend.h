// The `cuda` back end: replay through the CUDA Driver API, loaded at run time with
// dlopen("libcuda.so.1"); every entry point comes from cuGetProcAddress with an explicit API
// version (the _v2 stream memory operations of CUDA 11.7: cuStreamWaitValue64/32,
// cuStreamWriteValue64/32). qvet links no CUDA library, so it builds and runs without a driver;
// `open` then says which library or call failed.
//
// A GpuApi (devices/gpu_stream.h, which does the rest): one primary context per physical GPU; the
// host allocation from cuMemHostAlloc (portable, mapped). The probe kernel is the embedded PTX
// (devices/probe_code.h), loaded with cuModuleLoadData into each context. open() requires, per GPU used:
//   CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS (64-bit waits and writes on words),
//   CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, and CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING.
// %globaltimer counts ns, so calibration measures only its lead. QVET_CUDA_LIBRARY names another
// library to load (the tests' stand-in, tests/fake_drivers/). CUDA_DEVICE_MAX_CONNECTIONS is raised to 32
// (unless set) so that a blocked wait does not stall unrelated streams sharing a hardware queue;
// a GPU running more streams than that may still report a false hang.
#pragma once
#include <memory>

#include "devices/backend.h"

namespace qvet {

// Defined only in builds with the CUDA headers (QVET_HAVE_CUDA_HEADERS, cmake/probe.cmake).
std::unique_ptr<Backend> make_cuda_backend();

}  // namespace qvet
