#include "devices/cuda/cuda_backend.h"

// Built only where the headers were found (cmake/probe.cmake); devices/backends.cpp says so otherwise.
#ifdef QVET_HAVE_CUDA_HEADERS

#include <cstdlib>
#include <vector>
#include <cuda.h>
#include <cudaTypedefs.h>

#include "devices/gpu_driver.h"
#include "devices/probe_code.h"

namespace qvet {
namespace {

// The entry points, each at the API version whose signature the PFN type spells, and the types and
// flags DriverApi uses.
struct Driver : DriverTypes<CUresult, CUstream, CUevent, CUfunction> {
  // DriverApi's entry points.
  Entry<PFN_cuMemHostAlloc_v2020> host_alloc{.name = "cuMemHostAlloc", .version = 2020};
  Entry<PFN_cuMemFreeHost_v2000> host_free{.name = "cuMemFreeHost", .version = 2000};
  Entry<PFN_cuStreamCreate_v2000> stream_create{.name = "cuStreamCreate", .version = 2000};
  Entry<PFN_cuStreamDestroy_v4000> stream_destroy{.name = "cuStreamDestroy", .version = 4000};
  Entry<PFN_cuStreamQuery_v2000> stream_query{.name = "cuStreamQuery", .version = 2000};
  Entry<PFN_cuEventCreate_v2000> event_create{.name = "cuEventCreate", .version = 2000};
  Entry<PFN_cuEventRecord_v2000> event_record{.name = "cuEventRecord", .version = 2000};
  Entry<PFN_cuEventDestroy_v4000> event_destroy{.name = "cuEventDestroy", .version = 4000};
  Entry<PFN_cuStreamWaitEvent_v3020> stream_wait_event{.name = "cuStreamWaitEvent", .version = 3020};
  Entry<PFN_cuLaunchKernel_v4000> launch_kernel{.name = "cuLaunchKernel", .version = 4000};
  // This file's.
  Entry<PFN_cuGetErrorName_v6000> get_error_name{.name = "cuGetErrorName", .version = 6000};
  Entry<PFN_cuInit_v2000> init{.name = "cuInit", .version = 2000};
  Entry<PFN_cuDriverGetVersion_v2020> driver_get_version{.name = "cuDriverGetVersion", .version = 2020};
  Entry<PFN_cuDeviceGetCount_v2000> device_get_count{.name = "cuDeviceGetCount", .version = 2000};
  Entry<PFN_cuDeviceGet_v2000> device_get{.name = "cuDeviceGet", .version = 2000};
  Entry<PFN_cuDeviceGetAttribute_v2000> device_get_attribute{.name = "cuDeviceGetAttribute", .version = 2000};
  Entry<PFN_cuDevicePrimaryCtxRetain_v7000> primary_ctx_retain{.name = "cuDevicePrimaryCtxRetain", .version = 7000};
  Entry<PFN_cuDevicePrimaryCtxRelease_v11000> primary_ctx_release{.name = "cuDevicePrimaryCtxRelease", .version = 11000};
  Entry<PFN_cuCtxSetCurrent_v4000> ctx_set_current{.name = "cuCtxSetCurrent", .version = 4000};
  Entry<PFN_cuMemHostGetDevicePointer_v3020> device_pointer{.name = "cuMemHostGetDevicePointer", .version = 3020};
  Entry<PFN_cuModuleLoadData_v2000> module_load_data{.name = "cuModuleLoadData", .version = 2000};
  Entry<PFN_cuModuleUnload_v2000> module_unload{.name = "cuModuleUnload", .version = 2000};
  Entry<PFN_cuModuleGetFunction_v2000> module_get_function{.name = "cuModuleGetFunction", .version = 2000};
  Entry<PFN_cuMemcpyAsync_v4000> memcpy_async{.name = "cuMemcpyAsync", .version = 4000};
  Entry<PFN_cuStreamWaitValue32_v11070> wait_value32{.name = "cuStreamWaitValue32", .version = 11070};
  Entry<PFN_cuStreamWaitValue64_v11070> wait_value64{.name = "cuStreamWaitValue64", .version = 11070};
  Entry<PFN_cuStreamWriteValue32_v11070> write_value32{.name = "cuStreamWriteValue32", .version = 11070};
  Entry<PFN_cuStreamWriteValue64_v11070> write_value64{.name = "cuStreamWriteValue64", .version = 11070};
  // DriverApi's values.
  static constexpr Result kSuccess = CUDA_SUCCESS, kNotReady = CUDA_ERROR_NOT_READY;
  static constexpr unsigned kHostAllocFlags = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP;
  static constexpr unsigned kStreamFlags = CU_STREAM_NON_BLOCKING, kEventFlags = CU_EVENT_DISABLE_TIMING;
};

class CudaApi : public DriverApi<Driver> {
 public:
  bool add_gpu(int physical, std::string& error) override;
  const char* name() const override { return "cuda"; }
  bool clock_counts_ns() const override { return true; }  // %globaltimer
  bool start(int& gpus, std::string& error) override;
  bool make_current(uint32_t gpu) override { return call(d_.ctx_set_current, gpus_[gpu].ctx); }
  bool load_probe(uint32_t gpu, std::string& error) override;
  uint64_t device_address(void* host) override {
    CUdeviceptr p = 0;
    return call(d_.device_pointer, &p, host, 0) ? p : 0;
  }
  bool copy(Handle s, uint64_t dst, uint64_t src, size_t bytes) override { return call(d_.memcpy_async, dst, src, bytes, stream(s)); }
  bool wait_value(Handle s, uint64_t address, uint64_t value, int width) override {
    if (width == 64) return call(d_.wait_value64, stream(s), address, value, CU_STREAM_WAIT_VALUE_GEQ);
    return call(d_.wait_value32, stream(s), address, cuuint32_t(value), CU_STREAM_WAIT_VALUE_GEQ);
  }
  bool write_value(Handle s, uint64_t address, uint64_t value, int width) override {
    if (width == 64) return call(d_.write_value64, stream(s), address, value, CU_STREAM_WRITE_VALUE_DEFAULT);
    return call(d_.write_value32, stream(s), address, cuuint32_t(value), CU_STREAM_WRITE_VALUE_DEFAULT);
  }
  void remove_gpu(uint32_t gpu) override {
    Gpu& g = gpus_[gpu];
    if (g.module && d_.ctx_set_current.fn(g.ctx) == CUDA_SUCCESS) d_.module_unload.fn(g.module);
    d_.primary_ctx_release.fn(g.dev);
  }

 private:
  struct Gpu {
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    CUmodule module = nullptr;
    CUfunction probe = nullptr;
  };
  CUfunction probe(uint32_t gpu) const override { return gpus_[gpu].probe; }
  const char* error_name(CUresult r) const override {
    const char* name = nullptr;
    if (d_.get_error_name.fn) d_.get_error_name.fn(r, &name);
    return name;
  }
  bool load(std::string& error);

  std::vector<Gpu> gpus_;
  int driver_version_ = 0;
};

bool CudaApi::load(std::string& error) {
  if (!lib_.open("QVET_CUDA_LIBRARY", {"libcuda.so.1", "libcuda.so"}, error)) return false;
  // cuGetProcAddress_v2 (CUDA 12) reports whether a symbol was found; cuGetProcAddress (11.3) does not.
  auto gpa2 = reinterpret_cast<PFN_cuGetProcAddress_v12000>(lib_.symbol("cuGetProcAddress_v2"));
  auto gpa1 = reinterpret_cast<PFN_cuGetProcAddress_v11030>(lib_.symbol("cuGetProcAddress"));
  if (!gpa2 && !gpa1) return error = lib_.name() + ": no cuGetProcAddress (a driver older than CUDA 11.3)", false;
  auto get = [&](auto& entry) {
    void* p = nullptr;
    CUdriverProcAddressQueryResult found{};
    CUresult r = gpa2 ? gpa2(entry.name, &p, entry.version, CU_GET_PROC_ADDRESS_DEFAULT, &found)
                      : gpa1(entry.name, &p, entry.version, CU_GET_PROC_ADDRESS_DEFAULT);
    if (r == CUDA_SUCCESS && set(entry, p)) return true;
    if (error.empty()) error = lib_.name() + ": " + entry.name + " (API version " + std::to_string(entry.version) + ") not found";
    return false;
  };
  return get(d_.get_error_name) & load_shared(get) & get(d_.init) & get(d_.driver_get_version) &
         get(d_.device_get_count) & get(d_.device_get) & get(d_.device_get_attribute) & get(d_.primary_ctx_retain) &
         get(d_.primary_ctx_release) & get(d_.ctx_set_current) & get(d_.device_pointer) & get(d_.module_load_data) &
         get(d_.module_unload) & get(d_.module_get_function) & get(d_.memcpy_async) & get(d_.wait_value32) &
         get(d_.wait_value64) & get(d_.write_value32) & get(d_.write_value64);
}

bool CudaApi::start(int& gpus, std::string& error) {
  if (!kCudaProbe.size) return error = "cuda: qvet was built without nvcc, so it carries no probe kernel", false;
  if (!load(error)) return false;
  // Streams share a GPU's hardware queues (8 by default): a blocked wait would stall the unrelated
  // streams behind it. The variable must be set before the driver starts; a user's value stands.
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  if (!call(d_.init, 0) || !call(d_.driver_get_version, &driver_version_) || !call(d_.device_get_count, &gpus))
    return error = this->error(), false;
  if (gpus == 0) return error = "cuda: " + lib_.name() + " loaded, but it reports no CUDA device", false;
  return true;
}

bool CudaApi::add_gpu(int physical, std::string& error) {
  Gpu g;
  if (!call(d_.device_get, &g.dev, physical)) return error = this->error(), false;
  for (auto [attr, what] : {std::pair{CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, "64-bit stream memory operations"},
                            {CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, "mapped host memory"},
                            {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, "unified addressing"}}) {
    int v = 0;
    if (!call(d_.device_get_attribute, &v, attr, g.dev)) return error = this->error(), false;
    if (!v) return error = "cuda: GPU " + std::to_string(physical) + " does not support " + what, false;
  }
  if (!call(d_.primary_ctx_retain, &g.ctx, g.dev)) return error = this->error(), false;
  gpus_.push_back(g);
  return true;
}

bool CudaApi::load_probe(uint32_t gpu, std::string& error) {
  Gpu& g = gpus_[gpu];
  std::string what = "cuModuleLoadData (the probe kernel's PTX, ISA 7.0; driver " + std::to_string(driver_version_) + ")";
  bool ok = check(d_.module_load_data.fn(&g.module, kCudaProbe.data), what.c_str()) &&
            call(d_.module_get_function, &g.probe, g.module, "qvet_probe");
  if (!ok) error = this->error();
  return ok;
}

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() { return make_gpu_stream_backend(std::make_unique<CudaApi>()); }

}  // namespace qvet

#endif  // QVET_HAVE_CUDA_HEADERS
