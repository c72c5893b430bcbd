#include "devices/cuda/cuda_backend.h"

#include <cstdlib>
#include <type_traits>

#include "devices/dynlib.h"
#include "devices/gpu_stream.h"
#include "devices/probe_code.h"

#ifdef QVET_HAVE_CUDA_HEADERS
#include <cuda.h>
#include <cudaTypedefs.h>
#endif

namespace qvet {

#ifndef QVET_HAVE_CUDA_HEADERS

std::unique_ptr<Backend> make_cuda_backend() { return nullptr; }

#else

namespace {

// The entry points, each at the API version whose signature the PFN type spells.
struct Driver {
  PFN_cuInit_v2000 Init;
  PFN_cuDriverGetVersion_v2020 DriverGetVersion;
  PFN_cuDeviceGetCount_v2000 DeviceGetCount;
  PFN_cuDeviceGet_v2000 DeviceGet;
  PFN_cuDeviceGetAttribute_v2000 DeviceGetAttribute;
  PFN_cuDevicePrimaryCtxRetain_v7000 DevicePrimaryCtxRetain;
  PFN_cuDevicePrimaryCtxRelease_v11000 DevicePrimaryCtxRelease;
  PFN_cuCtxSetCurrent_v4000 CtxSetCurrent;
  PFN_cuStreamCreate_v2000 StreamCreate;
  PFN_cuStreamDestroy_v4000 StreamDestroy;
  PFN_cuStreamQuery_v2000 StreamQuery;
  PFN_cuEventCreate_v2000 EventCreate;
  PFN_cuEventRecord_v2000 EventRecord;
  PFN_cuEventDestroy_v4000 EventDestroy;
  PFN_cuStreamWaitEvent_v3020 StreamWaitEvent;
  PFN_cuMemHostAlloc_v2020 MemHostAlloc;
  PFN_cuMemHostGetDevicePointer_v3020 MemHostGetDevicePointer;
  PFN_cuMemFreeHost_v2000 MemFreeHost;
  PFN_cuModuleLoadData_v2000 ModuleLoadData;
  PFN_cuModuleUnload_v2000 ModuleUnload;
  PFN_cuModuleGetFunction_v2000 ModuleGetFunction;
  PFN_cuLaunchKernel_v4000 LaunchKernel;
  PFN_cuMemcpyAsync_v4000 MemcpyAsync;
  PFN_cuStreamWaitValue32_v11070 StreamWaitValue32;
  PFN_cuStreamWaitValue64_v11070 StreamWaitValue64;
  PFN_cuStreamWriteValue32_v11070 StreamWriteValue32;
  PFN_cuStreamWriteValue64_v11070 StreamWriteValue64;
  PFN_cuGetErrorName_v6000 GetErrorName;
};

class CudaApi : public GpuApi {
 public:
  const char* name() const override { return "cuda"; }
  bool clock_counts_ns() const override { return true; }  // %globaltimer
  bool start(int& gpus, std::string& error) override;
  bool add_gpu(int physical, std::string& error) override;
  bool make_current(uint32_t gpu) override { return check(d_.CtxSetCurrent(gpus_[gpu].ctx), "cuCtxSetCurrent"); }
  bool load_probe(uint32_t gpu, std::string& error) override;
  void* host_alloc(size_t bytes) override {
    return made<void*>([&](void** p) { return check(d_.MemHostAlloc(p, bytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP), "cuMemHostAlloc"); });
  }
  uint64_t device_address(void* host) override {
    CUdeviceptr p = 0;
    return check(d_.MemHostGetDevicePointer(&p, host, 0), "cuMemHostGetDevicePointer") ? p : 0;
  }
  Handle stream_create() override {
    return made<CUstream>([&](CUstream* h) { return check(d_.StreamCreate(h, CU_STREAM_NON_BLOCKING), "cuStreamCreate"); });
  }
  Handle event_create() override {
    return made<CUevent>([&](CUevent* h) { return check(d_.EventCreate(h, CU_EVENT_DISABLE_TIMING), "cuEventCreate"); });
  }
  bool launch(uint32_t gpu, Handle s, void** args) override {
    return check(d_.LaunchKernel(gpus_[gpu].probe, 1, 1, 1, 1, 1, 1, 0, CUstream(s), args, nullptr), "cuLaunchKernel");
  }
  bool copy(Handle s, uint64_t dst, uint64_t src, size_t bytes) override {
    return check(d_.MemcpyAsync(dst, src, bytes, CUstream(s)), "cuMemcpyAsync");
  }
  bool wait_value(Handle s, uint64_t address, uint64_t value, int width) override {
    if (width == 64) return check(d_.StreamWaitValue64(CUstream(s), address, value, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue64");
    return check(d_.StreamWaitValue32(CUstream(s), address, cuuint32_t(value), CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue32");
  }
  bool write_value(Handle s, uint64_t address, uint64_t value, int width) override {
    if (width == 64)
      return check(d_.StreamWriteValue64(CUstream(s), address, value, CU_STREAM_WRITE_VALUE_DEFAULT), "cuStreamWriteValue64");
    return check(d_.StreamWriteValue32(CUstream(s), address, cuuint32_t(value), CU_STREAM_WRITE_VALUE_DEFAULT), "cuStreamWriteValue32");
  }
  bool event_record(Handle e, Handle s) override { return check(d_.EventRecord(CUevent(e), CUstream(s)), "cuEventRecord"); }
  bool wait_event(Handle s, Handle e) override { return check(d_.StreamWaitEvent(CUstream(s), CUevent(e), 0), "cuStreamWaitEvent"); }
  int stream_query(Handle s) override {
    CUresult r = d_.StreamQuery(CUstream(s));
    return r == CUDA_ERROR_NOT_READY ? 0 : check(r, "cuStreamQuery") ? 1 : -1;
  }
  void stream_destroy(Handle s) override { d_.StreamDestroy(CUstream(s)); }
  void event_destroy(Handle e) override { d_.EventDestroy(CUevent(e)); }
  void host_free(void* host) override { d_.MemFreeHost(host); }
  void remove_gpu(uint32_t gpu) override {
    Gpu& g = gpus_[gpu];
    if (g.module && d_.CtxSetCurrent(g.ctx) == CUDA_SUCCESS) d_.ModuleUnload(g.module);
    d_.DevicePrimaryCtxRelease(g.dev);
  }

 private:
  struct Gpu {
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    CUmodule module = nullptr;
    CUfunction probe = nullptr;
  };
  bool load(std::string& error);
  bool check(CUresult r, const char* call) {
    if (r == CUDA_SUCCESS) return true;
    const char* name = nullptr;
    if (d_.GetErrorName) d_.GetErrorName(r, &name);
    return fail(call, name, int(r));
  }

  DynamicLibrary lib_;
  Driver d_{};
  std::vector<Gpu> gpus_;
  int driver_version_ = 0;
};

bool CudaApi::load(std::string& error) {
  if (!lib_.open("QVET_CUDA_LIBRARY", {"libcuda.so.1", "libcuda.so"}, error)) return false;
  // cuGetProcAddress_v2 (CUDA 12) reports whether a symbol was found; cuGetProcAddress (11.3) does not.
  auto gpa2 = reinterpret_cast<PFN_cuGetProcAddress_v12000>(lib_.symbol("cuGetProcAddress_v2"));
  auto gpa1 = reinterpret_cast<PFN_cuGetProcAddress_v11030>(lib_.symbol("cuGetProcAddress"));
  if (!gpa2 && !gpa1) return error = lib_.name() + ": no cuGetProcAddress (a driver older than CUDA 11.3)", false;
  auto get = [&](auto& fn, const char* symbol, int version) {
    void* p = nullptr;
    CUdriverProcAddressQueryResult found{};
    CUresult r = gpa2 ? gpa2(symbol, &p, version, CU_GET_PROC_ADDRESS_DEFAULT, &found)
                      : gpa1(symbol, &p, version, CU_GET_PROC_ADDRESS_DEFAULT);
    if (r != CUDA_SUCCESS || !p) {
      if (error.empty()) error = lib_.name() + ": " + symbol + " (API version " + std::to_string(version) + ") not found";
      return false;
    }
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    return true;
  };
  return get(d_.GetErrorName, "cuGetErrorName", 6000) & get(d_.Init, "cuInit", 2000) &
         get(d_.DriverGetVersion, "cuDriverGetVersion", 2020) & get(d_.DeviceGetCount, "cuDeviceGetCount", 2000) &
         get(d_.DeviceGet, "cuDeviceGet", 2000) & get(d_.DeviceGetAttribute, "cuDeviceGetAttribute", 2000) &
         get(d_.DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000) &
         get(d_.DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease", 11000) &
         get(d_.CtxSetCurrent, "cuCtxSetCurrent", 4000) & get(d_.StreamCreate, "cuStreamCreate", 2000) &
         get(d_.StreamDestroy, "cuStreamDestroy", 4000) & get(d_.StreamQuery, "cuStreamQuery", 2000) &
         get(d_.EventCreate, "cuEventCreate", 2000) & get(d_.EventRecord, "cuEventRecord", 2000) &
         get(d_.EventDestroy, "cuEventDestroy", 4000) & get(d_.StreamWaitEvent, "cuStreamWaitEvent", 3020) &
         get(d_.MemHostAlloc, "cuMemHostAlloc", 2020) &
         get(d_.MemHostGetDevicePointer, "cuMemHostGetDevicePointer", 3020) &
         get(d_.MemFreeHost, "cuMemFreeHost", 2000) & get(d_.ModuleLoadData, "cuModuleLoadData", 2000) &
         get(d_.ModuleUnload, "cuModuleUnload", 2000) &
         get(d_.ModuleGetFunction, "cuModuleGetFunction", 2000) & get(d_.LaunchKernel, "cuLaunchKernel", 4000) &
         get(d_.MemcpyAsync, "cuMemcpyAsync", 4000) & get(d_.StreamWaitValue32, "cuStreamWaitValue32", 11070) &
         get(d_.StreamWaitValue64, "cuStreamWaitValue64", 11070) &
         get(d_.StreamWriteValue32, "cuStreamWriteValue32", 11070) &
         get(d_.StreamWriteValue64, "cuStreamWriteValue64", 11070);
}

bool CudaApi::start(int& gpus, std::string& error) {
  if (!kCudaProbe.size) return error = "cuda: qvet was built without nvcc, so it carries no probe kernel", false;
  if (!load(error)) return false;
  // Streams share a GPU's hardware queues (8 by default): a blocked wait would stall the unrelated
  // streams behind it. The variable must be set before the driver starts; a user's value stands.
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  if (!check(d_.Init(0), "cuInit") || !check(d_.DriverGetVersion(&driver_version_), "cuDriverGetVersion") ||
      !check(d_.DeviceGetCount(&gpus), "cuDeviceGetCount"))
    return error = this->error(), false;
  if (gpus == 0) return error = "cuda: " + lib_.name() + " loaded, but it reports no CUDA device", false;
  return true;
}

bool CudaApi::add_gpu(int physical, std::string& error) {
  Gpu g;
  if (!check(d_.DeviceGet(&g.dev, physical), "cuDeviceGet")) return error = this->error(), false;
  for (auto [attr, what] : {std::pair{CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, "64-bit stream memory operations"},
                            {CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, "mapped host memory"},
                            {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, "unified addressing"}}) {
    int v = 0;
    if (!check(d_.DeviceGetAttribute(&v, attr, g.dev), "cuDeviceGetAttribute")) return error = this->error(), false;
    if (!v) return error = "cuda: GPU " + std::to_string(physical) + " does not support " + what, false;
  }
  if (!check(d_.DevicePrimaryCtxRetain(&g.ctx, g.dev), "cuDevicePrimaryCtxRetain")) return error = this->error(), false;
  gpus_.push_back(g);
  return true;
}

bool CudaApi::load_probe(uint32_t gpu, std::string& error) {
  Gpu& g = gpus_[gpu];
  bool ok = check(d_.ModuleLoadData(&g.module, kCudaProbe.data),
                  ("cuModuleLoadData (the probe kernel's PTX, ISA 7.0; driver " + std::to_string(driver_version_) + ")").c_str()) &&
            check(d_.ModuleGetFunction(&g.probe, g.module, "qvet_probe"), "cuModuleGetFunction");
  if (!ok) error = this->error();
  return ok;
}

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() { return make_gpu_stream_backend(std::make_unique<CudaApi>()); }

#endif

}  // namespace qvet
