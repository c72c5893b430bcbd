#include "devices/cuda/cuda_backend.h"

#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>
#include <type_traits>

#include "devices/dynlib.h"
#include "devices/gpu_host.h"
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
  PFN_cuModuleGetFunction_v2000 ModuleGetFunction;
  PFN_cuLaunchKernel_v4000 LaunchKernel;
  PFN_cuMemcpyAsync_v4000 MemcpyAsync;
  PFN_cuStreamWaitValue32_v11070 StreamWaitValue32;
  PFN_cuStreamWaitValue64_v11070 StreamWaitValue64;
  PFN_cuStreamWriteValue32_v11070 StreamWriteValue32;
  PFN_cuStreamWriteValue64_v11070 StreamWriteValue64;
  PFN_cuGetErrorName_v6000 GetErrorName;
};

class CudaBackend : public Backend {
 public:
  ~CudaBackend() override;
  const char* name() const override { return "cuda"; }
  bool open(const Layout& l, const std::vector<uint32_t>& physical, std::string& error) override;
  Memory memory() override { return block_.mem; }
  void begin_run(uint64_t) override {}
  void probe(uint32_t stream, const Probe& p) override;
  void copy_cells(uint32_t stream, uint32_t first, uint32_t count) override;
  void wait_value(uint32_t stream, uint32_t word, uint64_t value, int width) override;
  void write_value(uint32_t stream, uint32_t word, uint64_t value, int width) override;
  void record(uint32_t stream, uint32_t event) override;
  void wait_event(uint32_t stream, uint32_t event) override;
  uint64_t now() override { return monotonic_ns(); }
  bool host_clock_shared() const override { return false; }
  void pause(uint64_t ns) override { std::this_thread::sleep_for(std::chrono::nanoseconds(ns)); }
  bool idle() override;
  std::string failed() override { return error_; }

 private:
  struct Gpu {
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    CUmodule module = nullptr;
    CUfunction probe = nullptr;
    CUdeviceptr base = 0;  // the host allocation, as this context sees it
    uint64_t shift = 0;    // %globaltimer's lead over the host's clock (probes subtract it)
  };
  bool load(std::string& error);
  bool check(CUresult r, const char* call);
  // Makes `gpu`'s context current (calls alternate between GPUs only with a multi-GPU mapping).
  bool use(uint32_t gpu) {
    if (current_ == gpu) return true;
    if (!check(d_.CtxSetCurrent(gpus_[gpu].ctx), "cuCtxSetCurrent")) return false;
    current_ = gpu;
    return true;
  }
  CUdeviceptr at(uint32_t gpu, const void* host) const {
    return gpus_[gpu].base + CUdeviceptr(static_cast<const char*>(host) - static_cast<const char*>(host_));
  }
  bool launch(uint32_t gpu, CUstream s, const Probe& p, uint64_t* times, uint32_t slot);
  bool calibrate(uint32_t gpu, std::string& error);

  DynamicLibrary lib_;
  Driver d_{};
  std::vector<Gpu> gpus_;               // the physical GPUs used
  std::vector<uint32_t> stream_gpu_;    // per stream: index into gpus_
  std::vector<CUstream> streams_;
  std::map<uint32_t, CUevent> events_;  // created at first record, in the recording stream's context
  std::vector<uint32_t> event_gpu_;
  void* host_ = nullptr;
  HostBlock block_;
  int driver_version_ = 0;
  uint32_t current_ = kNone;  // the GPU whose context is current
  std::string error_;
};

bool CudaBackend::check(CUresult r, const char* call) {
  if (r == CUDA_SUCCESS) return true;
  const char* name = nullptr;
  if (d_.GetErrorName) d_.GetErrorName(r, &name);
  if (error_.empty()) error_ = std::string("cuda: ") + call + " failed: " + (name ? name : "error " + std::to_string(int(r)));
  return false;
}

bool CudaBackend::load(std::string& error) {
  if (!lib_.open({"libcuda.so.1", "libcuda.so"}, error)) return false;
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
         get(d_.ModuleGetFunction, "cuModuleGetFunction", 2000) & get(d_.LaunchKernel, "cuLaunchKernel", 4000) &
         get(d_.MemcpyAsync, "cuMemcpyAsync", 4000) & get(d_.StreamWaitValue32, "cuStreamWaitValue32", 11070) &
         get(d_.StreamWaitValue64, "cuStreamWaitValue64", 11070) &
         get(d_.StreamWriteValue32, "cuStreamWriteValue32", 11070) &
         get(d_.StreamWriteValue64, "cuStreamWriteValue64", 11070);
}

bool CudaBackend::open(const Layout& l, const std::vector<uint32_t>& physical, std::string& error) {
  if (!kCudaProbe.size) return error = "cuda: qvet was built without nvcc, so it carries no probe kernel", false;
  if (!load(error)) return false;
  auto fail = [&]() { return error = error_, false; };
  // Streams share a GPU's hardware queues (8 by default): a blocked wait would stall the unrelated
  // streams behind it. The variable must be set before the driver starts; a user's value stands.
  setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
  if (!check(d_.Init(0), "cuInit")) return fail();
  d_.DriverGetVersion(&driver_version_);
  int count = 0;
  if (!check(d_.DeviceGetCount(&count), "cuDeviceGetCount")) return fail();
  if (count == 0) return error = "cuda: " + lib_.name() + " loaded, but it reports no CUDA device", false;
  std::vector<int> used;
  std::vector<uint32_t> logical;
  if (!map_devices("cuda", l.devices, physical, count, used, logical, error)) return false;
  for (int ph : used) {
    Gpu& g = gpus_.emplace_back();
    if (!check(d_.DeviceGet(&g.dev, ph), "cuDeviceGet")) return fail();
    for (auto [attr, what] : {std::pair{CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS, "64-bit stream memory operations"},
                              {CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, "mapped host memory"},
                              {CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, "unified addressing"}}) {
      int v = 0;
      if (!check(d_.DeviceGetAttribute(&v, attr, g.dev), "cuDeviceGetAttribute")) return fail();
      if (!v) return error = "cuda: GPU " + std::to_string(ph) + " does not support " + what, false;
    }
    if (!check(d_.DevicePrimaryCtxRetain(&g.ctx, g.dev), "cuDevicePrimaryCtxRetain")) return fail();
  }
  if (!use(0) || !check(d_.MemHostAlloc(&host_, HostBlock::bytes(l), CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP),
                        "cuMemHostAlloc"))
    return fail();
  block_ = HostBlock(host_, l);
  for (uint32_t gi = 0; gi < gpus_.size(); ++gi) {
    Gpu& g = gpus_[gi];
    if (!use(gi) ||
        !check(d_.MemHostGetDevicePointer(&g.base, host_, 0), "cuMemHostGetDevicePointer") ||
        !check(d_.ModuleLoadData(&g.module, kCudaProbe.data),
               ("cuModuleLoadData (the probe kernel's PTX, ISA 7.0; driver " + std::to_string(driver_version_) + ")").c_str()) ||
        !check(d_.ModuleGetFunction(&g.probe, g.module, "qvet_probe"), "cuModuleGetFunction"))
      return fail();
  }
  for (uint32_t dev : l.stream_device) {
    uint32_t g = dev < logical.size() ? logical[dev] : 0;
    CUstream s = nullptr;
    if (!use(g) || !check(d_.StreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate")) return fail();
    streams_.push_back(s);
    stream_gpu_.push_back(g);
  }
  for (uint32_t g = 0; g < gpus_.size(); ++g)
    if (!calibrate(g, error)) return false;
  return true;
}

// One GPU's %globaltimer against the host's clock: a warm-up probe, then one bracketed by host
// reads (GPUs need not agree with each other, so each gets its own shift).
bool CudaBackend::calibrate(uint32_t gpu, std::string& error) {
  CUstream s = nullptr;
  if (!use(gpu) || !check(d_.StreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate")) return error = error_, false;
  Probe p{0, 0, 0, 0};
  gpus_[gpu].shift = 0;
  uint64_t h0 = 0;
  bool ok = true;
  for (int k = 0; k < 2 && ok; ++k) {
    h0 = monotonic_ns();
    block_.calibration[0] = block_.calibration[1] = UINT64_MAX;
    ok = launch(gpu, s, p, block_.calibration, 0);
    while (ok && d_.StreamQuery(s) == CUDA_ERROR_NOT_READY) std::this_thread::yield();
  }
  uint64_t h1 = monotonic_ns();
  d_.StreamDestroy(s);
  if (!ok || block_.calibration[0] == UINT64_MAX) return error = error_.empty() ? "cuda: the calibration probe did not run" : error_, false;
  gpus_[gpu].shift = block_.calibration[0] - (h0 + h1) / 2;
  return true;
}

bool CudaBackend::launch(uint32_t gpu, CUstream s, const Probe& p, uint64_t* times, uint32_t slot) {
  const Gpu& g = gpus_[gpu];
  CUdeviceptr t = at(gpu, times), cells = at(gpu, block_.mem.cells), seen = at(gpu, block_.mem.seen);
  // The calibration probe (times outside the log) reads the all-zero descriptor after its times.
  CUdeviceptr desc = times == block_.calibration ? at(gpu, block_.calibration + 2) : at(gpu, block_.desc);
  uint32_t d = times == block_.calibration ? 0 : p.desc;
  CUdeviceptr word = p.word == kNone ? 0 : at(gpu, block_.mem.words + p.word);
  uint32_t width = p.width, stamp = p.stamp;
  uint64_t duration = p.duration, value = p.value, khz = 0, shift = g.shift;
  void* args[] = {&t, &slot, &stamp, &duration, &cells, &desc, &d, &seen, &word, &value, &width, &khz, &shift};
  return use(gpu) && check(d_.LaunchKernel(g.probe, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr), "cuLaunchKernel");
}

void CudaBackend::probe(uint32_t s, const Probe& p) { launch(stream_gpu_[s], streams_[s], p, block_.mem.times, p.slot); }

void CudaBackend::copy_cells(uint32_t s, uint32_t first, uint32_t count) {
  uint32_t g = stream_gpu_[s];
  if (use(g)) check(d_.MemcpyAsync(at(g, block_.scratch), at(g, block_.mem.cells + first), 4 * size_t(count), streams_[s]), "cuMemcpyAsync");
}

void CudaBackend::wait_value(uint32_t s, uint32_t word, uint64_t value, int width) {
  uint32_t g = stream_gpu_[s];
  if (!use(g)) return;
  CUdeviceptr a = at(g, block_.mem.words + word);  // a 32-bit wait compares the low half (little-endian)
  if (width == 64) check(d_.StreamWaitValue64(streams_[s], a, value, CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue64");
  else check(d_.StreamWaitValue32(streams_[s], a, cuuint32_t(value), CU_STREAM_WAIT_VALUE_GEQ), "cuStreamWaitValue32");
}

void CudaBackend::write_value(uint32_t s, uint32_t word, uint64_t value, int width) {
  uint32_t g = stream_gpu_[s];
  if (!use(g)) return;
  CUdeviceptr a = at(g, block_.mem.words + word);  // a 32-bit write replaces the low half
  if (width == 64) check(d_.StreamWriteValue64(streams_[s], a, value, CU_STREAM_WRITE_VALUE_DEFAULT), "cuStreamWriteValue64");
  else check(d_.StreamWriteValue32(streams_[s], a, cuuint32_t(value), CU_STREAM_WRITE_VALUE_DEFAULT), "cuStreamWriteValue32");
}

void CudaBackend::record(uint32_t s, uint32_t event) {
  if (!use(stream_gpu_[s])) return;
  auto it = events_.find(event);
  if (it == events_.end()) {
    CUevent e = nullptr;
    if (!check(d_.EventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate")) return;
    it = events_.insert({event, e}).first;
  }
  check(d_.EventRecord(it->second, streams_[s]), "cuEventRecord");
}

void CudaBackend::wait_event(uint32_t s, uint32_t event) {
  auto it = events_.find(event);
  if (it == events_.end()) return void(error_ = error_.empty() ? "cuda: an event was waited before it was recorded" : error_);
  if (use(stream_gpu_[s])) check(d_.StreamWaitEvent(streams_[s], it->second, 0), "cuStreamWaitEvent");
}

bool CudaBackend::idle() {
  for (uint32_t s = 0; s < streams_.size(); ++s) {
    if (!use(stream_gpu_[s])) return true;
    CUresult r = d_.StreamQuery(streams_[s]);
    if (r == CUDA_ERROR_NOT_READY) return false;
    if (!check(r, "cuStreamQuery")) return true;
  }
  return true;
}

CudaBackend::~CudaBackend() {
  if (!d_.CtxSetCurrent) return;
  // Only an idle device is taken apart: streams still running would read freed memory. (The
  // replay driver drains every run; a device left busy by a failure is left to process exit.)
  if (!idle()) return;
  for (uint32_t s = 0; s < streams_.size(); ++s)
    if (use(stream_gpu_[s])) d_.StreamDestroy(streams_[s]);
  for (auto& [id, e] : events_) d_.EventDestroy(e);
  if (host_ && !gpus_.empty() && use(0)) d_.MemFreeHost(host_);
  for (Gpu& g : gpus_)
    if (g.ctx) d_.DevicePrimaryCtxRelease(g.dev);
}

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

#endif

}  // namespace qvet
