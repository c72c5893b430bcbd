#include "devices/hip/hip_backend.h"

#include <chrono>
#include <cstdlib>
#include <map>
#include <thread>
#include <type_traits>

#include "devices/dynlib.h"
#include "devices/gpu_host.h"
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
  hipError_t (*ModuleGetFunction)(hipFunction_t*, hipModule_t, const char*);
  hipError_t (*ModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   hipStream_t, void**, void**);
  hipError_t (*MemcpyAsync)(void*, const void*, size_t, hipMemcpyKind, hipStream_t);
  hipError_t (*StreamWaitValue32)(hipStream_t, void*, uint32_t, unsigned, uint32_t);
  hipError_t (*StreamWaitValue64)(hipStream_t, void*, uint64_t, unsigned, uint64_t);
  hipError_t (*StreamWriteValue32)(hipStream_t, void*, uint32_t, unsigned);
  hipError_t (*StreamWriteValue64)(hipStream_t, void*, uint64_t, unsigned);
};

class HipBackend : public Backend {
 public:
  ~HipBackend() override;
  const char* name() const override { return "hip"; }
  bool open(const Layout& l, const std::vector<uint32_t>& physical, std::string& error) override;
  Memory memory() override { return block_.mem; }
  void begin_run(uint64_t) override {}
  void probe(uint32_t stream, const Probe& p) override { launch(stream_gpu_[stream], streams_[stream], p, block_.mem.times, p.slot); }
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
    int dev = 0;
    hipModule_t module = nullptr;
    hipFunction_t probe = nullptr;
    char* base = nullptr;  // the host allocation, as the device sees it
    uint64_t khz = 0;      // s_memrealtime ticks per millisecond
    uint64_t shift = 0;    // the device clock's lead over the host's, in ns (probes subtract it)
  };
  bool load(std::string& error);
  bool check(hipError_t r, const char* call);
  // Makes `gpu` the current device (calls alternate between GPUs only with a multi-GPU mapping).
  bool use(uint32_t gpu) {
    if (current_ == gpu) return true;
    if (!check(r_.SetDevice(gpus_[gpu].dev), "hipSetDevice")) return false;
    current_ = gpu;
    return true;
  }
  void* at(uint32_t gpu, const void* host) const {
    return gpus_[gpu].base + (static_cast<const char*>(host) - static_cast<const char*>(host_));
  }
  bool launch(uint32_t gpu, hipStream_t s, const Probe& p, uint64_t* times, uint32_t slot);
  bool calibrate(uint32_t gpu, std::string& error);
  bool calibration_probe(uint32_t gpu, hipStream_t s, uint64_t& device, uint64_t& host);

  DynamicLibrary lib_;
  Runtime r_{};
  std::vector<Gpu> gpus_;
  std::vector<uint32_t> stream_gpu_;
  std::vector<hipStream_t> streams_;
  std::map<uint32_t, hipEvent_t> events_;
  void* host_ = nullptr;
  HostBlock block_;
  uint32_t current_ = kNone;  // the GPU that is the current device
  std::string error_;
};

bool HipBackend::check(hipError_t r, const char* call) {
  if (r == hipSuccess) return true;
  const char* name = r_.GetErrorName ? r_.GetErrorName(r) : nullptr;
  if (error_.empty()) error_ = std::string("hip: ") + call + " failed: " + (name ? name : "error " + std::to_string(int(r)));
  return false;
}

bool HipBackend::load(std::string& error) {
  if (!lib_.open({"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"}, error)) return false;
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
         get(r_.ModuleGetFunction, "hipModuleGetFunction") & get(r_.ModuleLaunchKernel, "hipModuleLaunchKernel") &
         get(r_.MemcpyAsync, "hipMemcpyAsync") & get(r_.StreamWaitValue32, "hipStreamWaitValue32") &
         get(r_.StreamWaitValue64, "hipStreamWaitValue64") & get(r_.StreamWriteValue32, "hipStreamWriteValue32") &
         get(r_.StreamWriteValue64, "hipStreamWriteValue64");
}

bool HipBackend::open(const Layout& l, const std::vector<uint32_t>& physical, std::string& error) {
  if (!kHipProbeCount) return error = "hip: qvet was built without an amdgcn compiler, so it carries no probe kernel", false;
  if (!load(error)) return false;
  auto fail = [&]() { return error = error_, false; };
  // Streams share a GPU's hardware queues (4 by default): a blocked wait would stall the
  // unrelated streams behind it. Set before the runtime starts; a user's value stands.
  setenv("GPU_MAX_HW_QUEUES", "16", 0);
  if (!check(r_.Init(0), "hipInit")) return fail();
  int count = 0;
  if (!check(r_.GetDeviceCount(&count), "hipGetDeviceCount")) return fail();
  if (count == 0) return error = "hip: " + lib_.name() + " loaded, but it reports no AMD GPU", false;
  std::vector<int> used;
  std::vector<uint32_t> logical;
  if (!map_devices("hip", l.devices, physical, count, used, logical, error)) return false;
  for (int ph : used) gpus_.push_back({ph});
  if (!use(0) || !check(r_.HostMalloc(&host_, HostBlock::bytes(l), hipHostMallocPortable | hipHostMallocMapped), "hipHostMalloc"))
    return fail();
  block_ = HostBlock(host_, l);
  for (uint32_t gi = 0; gi < gpus_.size(); ++gi) {
    Gpu& g = gpus_[gi];
    void* base = nullptr;
    if (!use(gi) || !check(r_.HostGetDevicePointer(&base, host_, 0), "hipHostGetDevicePointer"))
      return fail();
    g.base = static_cast<char*>(base);
    std::string tried;
    for (size_t i = 0; i < kHipProbeCount && !g.module; ++i) {  // the code object the device accepts
      if (r_.ModuleLoadData(&g.module, kHipProbes[i].data) != hipSuccess) g.module = nullptr;
      tried += (tried.empty() ? "" : ", ") + std::string(kHipProbes[i].target);
    }
    if (!g.module) return error = "hip: GPU " + std::to_string(g.dev) + " accepts none of the embedded code objects (" + tried + ")", false;
    if (!check(r_.ModuleGetFunction(&g.probe, g.module, "qvet_probe"), "hipModuleGetFunction")) return fail();
  }
  for (uint32_t dev : l.stream_device) {
    uint32_t g = dev < logical.size() ? logical[dev] : 0;
    hipStream_t s = nullptr;
    if (!use(g) || !check(r_.StreamCreateWithFlags(&s, hipStreamNonBlocking), "hipStreamCreateWithFlags")) return fail();
    streams_.push_back(s);
    stream_gpu_.push_back(g);
  }
  for (uint32_t g = 0; g < gpus_.size(); ++g)
    if (!calibrate(g, error)) return false;
  return true;
}

// One GPU's s_memrealtime: its rate from two raw probes 20 ms apart (after a warm-up launch, whose
// latency would skew the first), and its lead over the host's clock (each GPU counts from its own
// origin).
bool HipBackend::calibrate(uint32_t gpu, std::string& error) {
  hipStream_t s = nullptr;
  uint64_t d0, h0, d1, h1;
  if (!use(gpu) || !check(r_.StreamCreateWithFlags(&s, hipStreamNonBlocking), "hipStreamCreateWithFlags"))
    return error = error_, false;
  bool ok = calibration_probe(gpu, s, d0, h0) && calibration_probe(gpu, s, d0, h0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ok = ok && calibration_probe(gpu, s, d1, h1);
  (void)r_.StreamDestroy(s);
  if (!ok || d1 <= d0 || h1 <= h0) return error = error_.empty() ? "hip: the clock calibration probes did not run" : error_, false;
  Gpu& g = gpus_[gpu];
  g.khz = (d1 - d0) * 1'000'000 / (h1 - h0);
  if (!g.khz) return error = "hip: the device clock does not advance", false;
  g.shift = (d1 / g.khz * 1'000'000 + d1 % g.khz * 1'000'000 / g.khz) - h1;
  return true;
}

// A raw probe (ticks, no shift): the device's time and the host's midpoint around it.
bool HipBackend::calibration_probe(uint32_t gpu, hipStream_t s, uint64_t& device, uint64_t& host) {
  block_.calibration[0] = block_.calibration[1] = UINT64_MAX;
  uint64_t h0 = monotonic_ns();
  if (!launch(gpu, s, Probe{0, 0, 0, 0}, block_.calibration, 0)) return false;
  while (r_.StreamQuery(s) == hipErrorNotReady) std::this_thread::yield();
  host = (h0 + monotonic_ns()) / 2;
  device = block_.calibration[0];
  return device != UINT64_MAX;
}

bool HipBackend::launch(uint32_t gpu, hipStream_t s, const Probe& p, uint64_t* times, uint32_t slot) {
  const Gpu& g = gpus_[gpu];
  void *t = at(gpu, times), *cells = at(gpu, block_.mem.cells), *seen = at(gpu, block_.mem.seen);
  void* desc = times == block_.calibration ? at(gpu, block_.calibration + 2) : at(gpu, block_.desc);
  uint32_t d = times == block_.calibration ? 0 : p.desc;
  void* word = p.word == kNone ? nullptr : at(gpu, block_.mem.words + p.word);
  uint32_t width = p.width, stamp = p.stamp;
  bool raw = times == block_.calibration;  // calibration logs raw ticks
  uint64_t duration = p.duration, value = p.value, khz = raw ? 0 : g.khz, shift = raw ? 0 : g.shift;
  void* args[] = {&t, &slot, &stamp, &duration, &cells, &desc, &d, &seen, &word, &value, &width, &khz, &shift};
  return use(gpu) && check(r_.ModuleLaunchKernel(g.probe, 1, 1, 1, 1, 1, 1, 0, s, args, nullptr), "hipModuleLaunchKernel");
}

void HipBackend::copy_cells(uint32_t s, uint32_t first, uint32_t count) {
  uint32_t g = stream_gpu_[s];
  if (use(g))
    check(r_.MemcpyAsync(at(g, block_.scratch), at(g, block_.mem.cells + first), 4 * size_t(count), hipMemcpyDefault, streams_[s]),
          "hipMemcpyAsync");
}

void HipBackend::wait_value(uint32_t s, uint32_t word, uint64_t value, int width) {
  uint32_t g = stream_gpu_[s];
  if (!use(g)) return;
  void* a = at(g, block_.mem.words + word);
  if (width == 64) check(r_.StreamWaitValue64(streams_[s], a, value, hipStreamWaitValueGte, ~uint64_t(0)), "hipStreamWaitValue64");
  else check(r_.StreamWaitValue32(streams_[s], a, uint32_t(value), hipStreamWaitValueGte, ~uint32_t(0)), "hipStreamWaitValue32");
}

void HipBackend::write_value(uint32_t s, uint32_t word, uint64_t value, int width) {
  uint32_t g = stream_gpu_[s];
  if (!use(g)) return;
  void* a = at(g, block_.mem.words + word);
  if (width == 64) check(r_.StreamWriteValue64(streams_[s], a, value, 0), "hipStreamWriteValue64");
  else check(r_.StreamWriteValue32(streams_[s], a, uint32_t(value), 0), "hipStreamWriteValue32");
}

void HipBackend::record(uint32_t s, uint32_t event) {
  if (!use(stream_gpu_[s])) return;
  auto it = events_.find(event);
  if (it == events_.end()) {
    hipEvent_t e = nullptr;
    if (!check(r_.EventCreateWithFlags(&e, hipEventDisableTiming), "hipEventCreateWithFlags")) return;
    it = events_.insert({event, e}).first;
  }
  check(r_.EventRecord(it->second, streams_[s]), "hipEventRecord");
}

void HipBackend::wait_event(uint32_t s, uint32_t event) {
  auto it = events_.find(event);
  if (it == events_.end()) return void(error_ = error_.empty() ? "hip: an event was waited before it was recorded" : error_);
  if (use(stream_gpu_[s])) check(r_.StreamWaitEvent(streams_[s], it->second, 0), "hipStreamWaitEvent");
}

bool HipBackend::idle() {
  for (uint32_t s = 0; s < streams_.size(); ++s) {
    if (!use(stream_gpu_[s])) return true;
    hipError_t r = r_.StreamQuery(streams_[s]);
    if (r == hipErrorNotReady) return false;
    if (!check(r, "hipStreamQuery")) return true;
  }
  return true;
}

HipBackend::~HipBackend() {
  if (!r_.SetDevice || gpus_.empty()) return;
  if (!idle()) return;  // streams still running would read freed memory: left to process exit
  for (uint32_t s = 0; s < streams_.size(); ++s)
    if (use(stream_gpu_[s])) (void)r_.StreamDestroy(streams_[s]);
  for (auto& [id, e] : events_) (void)r_.EventDestroy(e);
  if (host_) (void)r_.HostFree(host_);
}

}  // namespace

std::unique_ptr<Backend> make_hip_backend() { return std::make_unique<HipBackend>(); }

#endif

}  // namespace qvet
