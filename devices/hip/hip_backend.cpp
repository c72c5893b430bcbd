#include "devices/hip/hip_backend.h"

#include <cstdlib>
#include <type_traits>

#include "devices/dynlib.h"
#include "devices/gpu_stream.h"
#include "devices/probe_code.h"

#ifdef QVET_HAVE_HIP_HEADERS
#include <hip/hip_runtime_api.h>
#endif

namespace qvet {

#ifndef QVET_HAVE_HIP_HEADERS

std::unique_ptr<Backend> make_hip_backend() { return nullptr; }

#else

namespace {

// The entry points, with the signatures of hip_runtime_api.h (stable across HIP 5 and 6).
struct Runtime {
  hipError_t (*Init)(unsigned);
  hipError_t (*GetDeviceCount)(int*);
  hipError_t (*SetDevice)(int);
  const char* (*GetErrorName)(hipError_t);
  hipError_t (*StreamCreateWithFlags)(hipStream_t*, unsigned);
  hipError_t (*StreamDestroy)(hipStream_t);
  hipError_t (*StreamQuery)(hipStream_t);
  hipError_t (*StreamWaitEvent)(hipStream_t, hipEvent_t, unsigned);
  hipError_t (*EventCreateWithFlags)(hipEvent_t*, unsigned);
  hipError_t (*EventRecord)(hipEvent_t, hipStream_t);
  hipError_t (*EventDestroy)(hipEvent_t);
  hipError_t (*HostMalloc)(void**, size_t, unsigned);
  hipError_t (*HostGetDevicePointer)(void**, void*, unsigned);
  hipError_t (*HostFree)(void*);
  hipError_t (*ModuleLoadData)(hipModule_t*, const void*);
  hipError_t (*ModuleUnload)(hipModule_t);
  hipError_t (*ModuleGetFunction)(hipFunction_t*, hipModule_t, const char*);
  hipError_t (*ModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   hipStream_t, void**, void**);
  hipError_t (*MemcpyAsync)(void*, const void*, size_t, hipMemcpyKind, hipStream_t);
  hipError_t (*StreamWaitValue32)(hipStream_t, void*, uint32_t, unsigned, uint32_t);
  hipError_t (*StreamWaitValue64)(hipStream_t, void*, uint64_t, unsigned, uint64_t);
  hipError_t (*StreamWriteValue32)(hipStream_t, void*, uint32_t, unsigned);
  hipError_t (*StreamWriteValue64)(hipStream_t, void*, uint64_t, unsigned);
};

class HipApi : public GpuApi {
 public:
  const char* name() const override { return "hip"; }
  bool clock_counts_ns() const override { return false; }  // s_memrealtime ticks
  bool start(int& gpus, std::string& error) override;
  bool add_gpu(int physical, std::string&) override { return gpus_.push_back({physical}), true; }
  bool make_current(uint32_t gpu) override { return check(r_.SetDevice(gpus_[gpu].dev), "hipSetDevice"); }
  bool load_probe(uint32_t gpu, std::string& error) override;
  void* host_alloc(size_t bytes) override {
    return made<void*>([&](void** p) { return check(r_.HostMalloc(p, bytes, hipHostMallocPortable | hipHostMallocMapped), "hipHostMalloc"); });
  }
  uint64_t device_address(void* host) override {
    void* p = nullptr;
    return check(r_.HostGetDevicePointer(&p, host, 0), "hipHostGetDevicePointer") ? reinterpret_cast<uintptr_t>(p) : 0;
  }
  Handle stream_create() override {
    return made<hipStream_t>([&](hipStream_t* h) { return check(r_.StreamCreateWithFlags(h, hipStreamNonBlocking), "hipStreamCreateWithFlags"); });
  }
  Handle event_create() override {
    return made<hipEvent_t>([&](hipEvent_t* h) { return check(r_.EventCreateWithFlags(h, hipEventDisableTiming), "hipEventCreateWithFlags"); });
  }
  bool launch(uint32_t gpu, Handle s, void** args) override {
    return check(r_.ModuleLaunchKernel(gpus_[gpu].probe, 1, 1, 1, 1, 1, 1, 0, hipStream_t(s), args, nullptr), "hipModuleLaunchKernel");
  }
  bool copy(Handle s, uint64_t dst, uint64_t src, size_t bytes) override {
    return check(r_.MemcpyAsync(ptr(dst), ptr(src), bytes, hipMemcpyDefault, hipStream_t(s)), "hipMemcpyAsync");
  }
  bool wait_value(Handle s, uint64_t address, uint64_t value, int width) override {
    if (width == 64)
      return check(r_.StreamWaitValue64(hipStream_t(s), ptr(address), value, hipStreamWaitValueGte, ~uint64_t(0)), "hipStreamWaitValue64");
    return check(r_.StreamWaitValue32(hipStream_t(s), ptr(address), uint32_t(value), hipStreamWaitValueGte, ~uint32_t(0)),
                 "hipStreamWaitValue32");
  }
  bool write_value(Handle s, uint64_t address, uint64_t value, int width) override {
    if (width == 64) return check(r_.StreamWriteValue64(hipStream_t(s), ptr(address), value, 0), "hipStreamWriteValue64");
    return check(r_.StreamWriteValue32(hipStream_t(s), ptr(address), uint32_t(value), 0), "hipStreamWriteValue32");
  }
  bool event_record(Handle e, Handle s) override { return check(r_.EventRecord(hipEvent_t(e), hipStream_t(s)), "hipEventRecord"); }
  bool wait_event(Handle s, Handle e) override {
    return check(r_.StreamWaitEvent(hipStream_t(s), hipEvent_t(e), 0), "hipStreamWaitEvent");
  }
  int stream_query(Handle s) override {
    hipError_t r = r_.StreamQuery(hipStream_t(s));
    return r == hipErrorNotReady ? 0 : check(r, "hipStreamQuery") ? 1 : -1;
  }
  void stream_destroy(Handle s) override { (void)r_.StreamDestroy(hipStream_t(s)); }
  void event_destroy(Handle e) override { (void)r_.EventDestroy(hipEvent_t(e)); }
  void host_free(void* host) override { (void)r_.HostFree(host); }
  void remove_gpu(uint32_t gpu) override {
    if (gpus_[gpu].module && r_.SetDevice(gpus_[gpu].dev) == hipSuccess) (void)r_.ModuleUnload(gpus_[gpu].module);
  }

 private:
  struct Gpu {
    int dev = 0;
    hipModule_t module = nullptr;
    hipFunction_t probe = nullptr;
  };
  static void* ptr(uint64_t address) { return reinterpret_cast<void*>(uintptr_t(address)); }
  bool load(std::string& error);
  bool check(hipError_t r, const char* call) {
    if (r == hipSuccess) return true;
    const char* name = r_.GetErrorName ? r_.GetErrorName(r) : nullptr;
    return fail(call, name, int(r));
  }

  DynamicLibrary lib_;
  Runtime r_{};
  std::vector<Gpu> gpus_;
};

bool HipApi::load(std::string& error) {
  if (!lib_.open("QVET_HIP_LIBRARY", {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"}, error)) return false;
  auto get = [&](auto& fn, const char* symbol) {
    void* p = lib_.symbol(symbol);
    if (!p && error.empty()) error = lib_.name() + ": no " + symbol;
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    return p != nullptr;
  };
  return get(r_.GetErrorName, "hipGetErrorName") & get(r_.Init, "hipInit") & get(r_.GetDeviceCount, "hipGetDeviceCount") &
         get(r_.SetDevice, "hipSetDevice") & get(r_.StreamCreateWithFlags, "hipStreamCreateWithFlags") &
         get(r_.StreamDestroy, "hipStreamDestroy") & get(r_.StreamQuery, "hipStreamQuery") &
         get(r_.StreamWaitEvent, "hipStreamWaitEvent") & get(r_.EventCreateWithFlags, "hipEventCreateWithFlags") &
         get(r_.EventRecord, "hipEventRecord") & get(r_.EventDestroy, "hipEventDestroy") &
         get(r_.HostMalloc, "hipHostMalloc") & get(r_.HostGetDevicePointer, "hipHostGetDevicePointer") &
         get(r_.HostFree, "hipHostFree") & get(r_.ModuleLoadData, "hipModuleLoadData") &
         get(r_.ModuleUnload, "hipModuleUnload") &
         get(r_.ModuleGetFunction, "hipModuleGetFunction") & get(r_.ModuleLaunchKernel, "hipModuleLaunchKernel") &
         get(r_.MemcpyAsync, "hipMemcpyAsync") & get(r_.StreamWaitValue32, "hipStreamWaitValue32") &
         get(r_.StreamWaitValue64, "hipStreamWaitValue64") & get(r_.StreamWriteValue32, "hipStreamWriteValue32") &
         get(r_.StreamWriteValue64, "hipStreamWriteValue64");
}

bool HipApi::start(int& gpus, std::string& error) {
  if (!kHipProbeCount) return error = "hip: qvet was built without an amdgcn compiler, so it carries no probe kernel", false;
  if (!load(error)) return false;
  // Streams share a GPU's hardware queues (4 by default): a blocked wait would stall the
  // unrelated streams behind it. Set before the runtime starts; a user's value stands.
  setenv("GPU_MAX_HW_QUEUES", "16", 0);
  if (!check(r_.Init(0), "hipInit") || !check(r_.GetDeviceCount(&gpus), "hipGetDeviceCount")) return error = this->error(), false;
  if (gpus == 0) return error = "hip: " + lib_.name() + " loaded, but it reports no AMD GPU", false;
  return true;
}

// The first embedded code object the device accepts (no device-property struct is read: its
// layout changed between ROCm releases).
bool HipApi::load_probe(uint32_t gpu, std::string& error) {
  Gpu& g = gpus_[gpu];
  std::string tried;
  for (size_t i = 0; i < kHipProbeCount && !g.module; ++i) {
    if (r_.ModuleLoadData(&g.module, kHipProbes[i].data) != hipSuccess) g.module = nullptr;
    tried += (tried.empty() ? "" : ", ") + std::string(kHipProbes[i].target);
  }
  if (!g.module) return error = "hip: GPU " + std::to_string(g.dev) + " accepts none of the embedded code objects (" + tried + ")", false;
  if (!check(r_.ModuleGetFunction(&g.probe, g.module, "qvet_probe"), "hipModuleGetFunction")) return error = this->error(), false;
  return true;
}

}  // namespace

std::unique_ptr<Backend> make_hip_backend() { return make_gpu_stream_backend(std::make_unique<HipApi>()); }

#endif

}  // namespace qvet
