#include "devices/hip/hip_backend.h"

// Built only where the headers were found (cmake/probe.cmake); devices/backends.cpp says so otherwise.
#ifdef QVET_HAVE_HIP_HEADERS

#include <cstdlib>
#include <vector>

#include <hip/hip_runtime_api.h>

#include "devices/gpu_driver.h"
#include "devices/probe_code.h"

namespace qvet {
namespace {

// The entry points, with the signatures of hip_runtime_api.h (stable across HIP 5 and 6), and the
// types and flags DriverApi uses.
struct Runtime : DriverTypes<hipError_t, hipStream_t, hipEvent_t, hipFunction_t> {
  // DriverApi's entry points.
  Entry<hipError_t (*)(void**, size_t, unsigned)> host_alloc{.name = "hipHostMalloc"};
  Entry<hipError_t (*)(void*)> host_free{.name = "hipHostFree"};
  Entry<hipError_t (*)(hipStream_t*, unsigned)> stream_create{.name = "hipStreamCreateWithFlags"};
  Entry<hipError_t (*)(hipStream_t)> stream_destroy{.name = "hipStreamDestroy"};
  Entry<hipError_t (*)(hipStream_t)> stream_query{.name = "hipStreamQuery"};
  Entry<hipError_t (*)(hipEvent_t*, unsigned)> event_create{.name = "hipEventCreateWithFlags"};
  Entry<hipError_t (*)(hipEvent_t, hipStream_t)> event_record{.name = "hipEventRecord"};
  Entry<hipError_t (*)(hipEvent_t)> event_destroy{.name = "hipEventDestroy"};
  Entry<hipError_t (*)(hipStream_t, hipEvent_t, unsigned)> stream_wait_event{.name = "hipStreamWaitEvent"};
  Entry<hipError_t (*)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, hipStream_t,
                       void**, void**)>
      launch_kernel{.name = "hipModuleLaunchKernel"};
  // This file's.
  Entry<const char* (*)(hipError_t)> get_error_name{.name = "hipGetErrorName"};
  Entry<hipError_t (*)(unsigned)> init{.name = "hipInit"};
  Entry<hipError_t (*)(int*)> get_device_count{.name = "hipGetDeviceCount"};
  Entry<hipError_t (*)(int)> set_device{.name = "hipSetDevice"};
  Entry<hipError_t (*)(void**, void*, unsigned)> device_pointer{.name = "hipHostGetDevicePointer"};
  Entry<hipError_t (*)(hipModule_t*, const void*)> module_load_data{.name = "hipModuleLoadData"};
  Entry<hipError_t (*)(hipModule_t)> module_unload{.name = "hipModuleUnload"};
  Entry<hipError_t (*)(hipFunction_t*, hipModule_t, const char*)> module_get_function{.name = "hipModuleGetFunction"};
  Entry<hipError_t (*)(void*, const void*, size_t, hipMemcpyKind, hipStream_t)> memcpy_async{.name = "hipMemcpyAsync"};
  Entry<hipError_t (*)(hipStream_t, void*, uint32_t, unsigned, uint32_t)> wait_value32{.name = "hipStreamWaitValue32"};
  Entry<hipError_t (*)(hipStream_t, void*, uint64_t, unsigned, uint64_t)> wait_value64{.name = "hipStreamWaitValue64"};
  Entry<hipError_t (*)(hipStream_t, void*, uint32_t, unsigned)> write_value32{.name = "hipStreamWriteValue32"};
  Entry<hipError_t (*)(hipStream_t, void*, uint64_t, unsigned)> write_value64{.name = "hipStreamWriteValue64"};
  // DriverApi's values.
  static constexpr Result kSuccess = hipSuccess, kNotReady = hipErrorNotReady;
  static constexpr unsigned kHostAllocFlags = hipHostMallocPortable | hipHostMallocMapped;
  static constexpr unsigned kStreamFlags = hipStreamNonBlocking, kEventFlags = hipEventDisableTiming;
};

class HipApi : public DriverApi<Runtime> {
 public:
  bool add_gpu(int physical, std::string&) override { return gpus_.push_back({physical}), true; }
  const char* name() const override { return "hip"; }
  bool clock_counts_ns() const override { return false; }  // s_memrealtime ticks
  bool start(int& gpus, std::string& error) override;
  bool make_current(uint32_t gpu) override { return call(d_.set_device, gpus_[gpu].dev); }
  bool load_probe(uint32_t gpu, std::string& error) override;
  uint64_t device_address(void* host) override {
    void* p = nullptr;
    return call(d_.device_pointer, &p, host, 0) ? reinterpret_cast<uintptr_t>(p) : 0;
  }
  // HIP takes addresses as pointers, a copy a direction, and a wait a mask of the bits compared.
  bool copy(Handle s, uint64_t dst, uint64_t src, size_t bytes) override {
    return call(d_.memcpy_async, ptr(dst), ptr(src), bytes, hipMemcpyDefault, stream(s));
  }
  bool wait_value(Handle s, uint64_t address, uint64_t value, int width) override {
    if (width == 64) return call(d_.wait_value64, stream(s), ptr(address), value, hipStreamWaitValueGte, ~uint64_t(0));
    return call(d_.wait_value32, stream(s), ptr(address), uint32_t(value), hipStreamWaitValueGte, ~uint32_t(0));
  }
  bool write_value(Handle s, uint64_t address, uint64_t value, int width) override {
    if (width == 64) return call(d_.write_value64, stream(s), ptr(address), value, 0);
    return call(d_.write_value32, stream(s), ptr(address), uint32_t(value), 0);
  }
  void remove_gpu(uint32_t gpu) override {
    if (gpus_[gpu].module && d_.set_device.fn(gpus_[gpu].dev) == hipSuccess) (void)d_.module_unload.fn(gpus_[gpu].module);
  }

 private:
  struct Gpu {
    int dev = 0;
    hipModule_t module = nullptr;
    hipFunction_t probe = nullptr;
  };
  static void* ptr(uint64_t address) { return reinterpret_cast<void*>(uintptr_t(address)); }
  hipFunction_t probe(uint32_t gpu) const override { return gpus_[gpu].probe; }
  const char* error_name(hipError_t r) const override { return d_.get_error_name.fn ? d_.get_error_name.fn(r) : nullptr; }
  bool load(std::string& error);

  std::vector<Gpu> gpus_;
};

bool HipApi::load(std::string& error) {
  if (!lib_.open("QVET_HIP_LIBRARY", {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"}, error)) return false;
  auto get = [&](auto& entry) {
    if (set(entry, lib_.symbol(entry.name))) return true;
    if (error.empty()) error = lib_.name() + ": no " + entry.name;
    return false;
  };
  return get(d_.get_error_name) & load_shared(get) & get(d_.init) & get(d_.get_device_count) & get(d_.set_device) &
         get(d_.device_pointer) & get(d_.module_load_data) & get(d_.module_unload) & get(d_.module_get_function) &
         get(d_.memcpy_async) & get(d_.wait_value32) & get(d_.wait_value64) & get(d_.write_value32) &
         get(d_.write_value64);
}

bool HipApi::start(int& gpus, std::string& error) {
  if (!kHipProbeCount) return error = "hip: qvet was built without an amdgcn compiler, so it carries no probe kernel", false;
  if (!load(error)) return false;
  // Streams share a GPU's hardware queues (4 by default): a blocked wait would stall the
  // unrelated streams behind it. Set before the runtime starts; a user's value stands.
  setenv("GPU_MAX_HW_QUEUES", "16", 0);
  if (!call(d_.init, 0) || !call(d_.get_device_count, &gpus)) return error = this->error(), false;
  if (gpus == 0) return error = "hip: " + lib_.name() + " loaded, but it reports no AMD GPU", false;
  return true;
}

// The first embedded code object the device accepts (no device-property struct is read: its
// layout changed between ROCm releases).
bool HipApi::load_probe(uint32_t gpu, std::string& error) {
  Gpu& g = gpus_[gpu];
  std::string tried;
  for (size_t i = 0; i < kHipProbeCount && !g.module; ++i) {
    if (d_.module_load_data.fn(&g.module, kHipProbes[i].data) != hipSuccess) g.module = nullptr;
    tried += (tried.empty() ? "" : ", ") + std::string(kHipProbes[i].target);
  }
  if (!g.module) return error = "hip: GPU " + std::to_string(g.dev) + " accepts none of the embedded code objects (" + tried + ")", false;
  if (!call(d_.module_get_function, &g.probe, g.module, "qvet_probe")) return error = this->error(), false;
  return true;
}

}  // namespace

std::unique_ptr<Backend> make_hip_backend() { return make_gpu_stream_backend(std::make_unique<HipApi>()); }

}  // namespace qvet

#endif  // QVET_HAVE_HIP_HEADERS
