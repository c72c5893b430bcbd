// A stand-in for AMD's libamdhip64.so.6 (tests/fake_drivers/fake_gpu.h): the HIP runtime calls
// qvet's hip back end uses, with hip_runtime_api.h's signatures. It checks what the runtime checks
// (the current device, handles of that device, mapped addresses, flags) and follows the documented
// semantics: in-order streams, hipStreamWaitValueGte compares unsigned ((*ptr & mask) >= value),
// a never-recorded event is waited on at once, an illegal address is reported by later calls.
// hipModuleLoadData takes an AMD GPU code object (ELF, EM_AMDGPU) for the device's target only
// (QVET_FAKE_GFX, default gfx90a), so the back end's search over its embedded code objects runs.
// s_memrealtime counts at 100 MHz, kClockLead ahead.
#include <hip/hip_runtime_api.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <map>
#include <string>

#include "tests/fake_drivers/fake_gpu.h"

static unsigned long long fake_memrealtime();
#define QVET_NOW() fake_memrealtime()
#include "tests/fake_drivers/cpu_probe.h"

namespace fake = qvet::fake;

static unsigned long long fake_memrealtime() {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return (uint64_t(ns) + fake::kClockLead) / 10;
}

struct ihipStream_t {
  int device;
  fake::Stream stream;
};
struct ihipEvent_t {
  int device;
  fake::Marker last;
};
struct ihipModuleSymbol_t {
  ihipModule_t* module;
};
struct ihipModule_t {
  int device;
  ihipModuleSymbol_t probe{this};
};

namespace {

bool initialized = false;
thread_local int current = 0;
std::atomic<int> sticky{hipSuccess};
std::atomic<uint64_t> streams_made{0};

const std::map<std::string, hipError_t>& error_codes() {
  static const std::map<std::string, hipError_t> m = {
      {"hipErrorInvalidValue", hipErrorInvalidValue},     {"hipErrorOutOfMemory", hipErrorOutOfMemory},
      {"hipErrorNotInitialized", hipErrorNotInitialized}, {"hipErrorNoDevice", hipErrorNoDevice},
      {"hipErrorInvalidDevice", hipErrorInvalidDevice},   {"hipErrorInvalidImage", hipErrorInvalidImage},
      {"hipErrorNoBinaryForGpu", hipErrorNoBinaryForGpu}, {"hipErrorInvalidHandle", hipErrorInvalidHandle},
      {"hipErrorNotFound", hipErrorNotFound},             {"hipErrorNotReady", hipErrorNotReady},
      {"hipErrorIllegalAddress", hipErrorIllegalAddress}, {"hipErrorLaunchFailure", hipErrorLaunchFailure},
      {"hipErrorNotSupported", hipErrorNotSupported},     {"hipErrorInvalidDeviceFunction", hipErrorInvalidDeviceFunction},
      {"hipErrorUnknown", hipErrorUnknown}};
  return m;
}

hipError_t injected(const char* call, bool* hang = nullptr, hipError_t* late = nullptr) {
  return fake::injected(call, error_codes(), hipSuccess, hipErrorUnknown, hipErrorIllegalAddress, hang, late);
}

hipError_t stream_ok(hipStream_t s) {
  if (!initialized) return hipErrorNotInitialized;
  if (!s || s->device != current) return hipErrorInvalidHandle;
  return hipError_t(sticky.load());
}

uint64_t address(const void* p) { return uint64_t(uintptr_t(p)); }

// EF_AMDGPU_MACH of the device's target.
unsigned device_mach() {
  static const std::map<std::string, unsigned> machs = {
      {"gfx908", 0x30}, {"gfx90a", 0x3f}, {"gfx942", 0x4c}, {"gfx1030", 0x36}, {"gfx1100", 0x41}};
  const char* v = std::getenv("QVET_FAKE_GFX");
  auto it = machs.find(v && *v ? v : "gfx90a");
  return it == machs.end() ? 0 : it->second;
}

}  // namespace

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_EXPORT const char* hipGetErrorName(hipError_t e) {
  if (e == hipSuccess) return "hipSuccess";
  for (auto& [n, code] : error_codes())
    if (code == e) return n.c_str();
  return "hipErrorUnknown";
}

FAKE_EXPORT hipError_t hipInit(unsigned int flags) {
  if (hipError_t r = injected("hipInit")) return r;
  if (flags) return hipErrorInvalidValue;
  fake::set_driver_name("fake libamdhip64.so.6");
  initialized = true;
  return hipSuccess;
}

FAKE_EXPORT hipError_t hipGetDeviceCount(int* n) {
  if (!initialized) return hipErrorNotInitialized;
  if (!n) return hipErrorInvalidValue;
  if (hipError_t r = injected("hipGetDeviceCount")) return r;
  *n = fake::device_count();
  return *n ? hipSuccess : hipErrorNoDevice;
}

FAKE_EXPORT hipError_t hipSetDevice(int d) {
  if (!initialized) return hipErrorNotInitialized;
  if (d < 0 || d >= fake::device_count()) return hipErrorInvalidDevice;
  current = d;
  return hipSuccess;
}

FAKE_EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t* s, unsigned int flags) {
  if (!initialized) return hipErrorNotInitialized;
  if (!s || (flags != hipStreamDefault && flags != hipStreamNonBlocking)) return hipErrorInvalidValue;
  if (hipError_t r = injected("hipStreamCreateWithFlags")) return r;
  *s = new ihipStream_t{current, fake::Stream(++streams_made)};
  fake::created("stream");
  return hipSuccess;
}

FAKE_EXPORT hipError_t hipStreamDestroy(hipStream_t s) {
  if (!initialized) return hipErrorNotInitialized;
  if (!s) return hipErrorInvalidHandle;
  delete s;
  fake::released("stream");
  return hipSuccess;
}

FAKE_EXPORT hipError_t hipStreamQuery(hipStream_t s) {
  if (hipError_t r = stream_ok(s)) return r;
  if (hipError_t r = injected("hipStreamQuery")) return r;
  return s->stream.idle() ? hipSuccess : hipErrorNotReady;
}

FAKE_EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t* e, unsigned flags) {
  if (!initialized) return hipErrorNotInitialized;
  if (!e || flags & ~unsigned(hipEventDisableTiming | hipEventBlockingSync | hipEventInterprocess)) return hipErrorInvalidValue;
  if (hipError_t r = injected("hipEventCreateWithFlags")) return r;
  *e = new ihipEvent_t{current, nullptr};
  fake::created("event");
  return hipSuccess;
}

FAKE_EXPORT hipError_t hipEventDestroy(hipEvent_t e) {
  if (!initialized) return hipErrorNotInitialized;
  if (!e) return hipErrorInvalidHandle;
  delete e;
  fake::released("event");
  return hipSuccess;
}

FAKE_EXPORT hipError_t hipEventRecord(hipEvent_t e, hipStream_t s) {
  if (hipError_t r = stream_ok(s)) return r;
  if (!e || e->device != s->device) return hipErrorInvalidHandle;
  auto marker = std::make_shared<std::atomic<bool>>(false);
  e->last = marker;
  s->stream.push([marker] { marker->store(true); });
  return hipSuccess;
}

FAKE_EXPORT hipError_t hipStreamWaitEvent(hipStream_t s, hipEvent_t e, unsigned int flags) {
  if (hipError_t r = stream_ok(s)) return r;
  if (!e) return hipErrorInvalidHandle;
  if (flags) return hipErrorInvalidValue;
  if (auto marker = e->last) s->stream.push([marker] { fake::wait_marker(marker); });
  return hipSuccess;
}

FAKE_EXPORT hipError_t hipHostMalloc(void** p, size_t bytes, unsigned int flags) {
  if (!initialized) return hipErrorNotInitialized;
  if (!p || flags & ~unsigned(hipHostMallocPortable | hipHostMallocMapped | hipHostMallocWriteCombined | hipHostMallocCoherent))
    return hipErrorInvalidValue;
  if (hipError_t r = injected("hipHostMalloc")) return r;
  if (!(*p = fake::pinned_alloc(bytes))) return hipErrorOutOfMemory;
  fake::created("pinned memory");
  return hipSuccess;
}

FAKE_EXPORT hipError_t hipHostGetDevicePointer(void** d, void* p, unsigned int flags) {
  if (!initialized) return hipErrorNotInitialized;
  if (!d || flags || !fake::pinned(address(p), 1)) return hipErrorInvalidValue;
  *d = p;
  return hipSuccess;
}

FAKE_EXPORT hipError_t hipHostFree(void* p) {
  if (!initialized) return hipErrorNotInitialized;
  if (!fake::pinned_free(p)) return hipErrorInvalidValue;
  fake::released("pinned memory");
  return hipSuccess;
}

// An AMD GPU code object for this device's target; anything else is refused.
FAKE_EXPORT hipError_t hipModuleLoadData(hipModule_t* m, const void* image) {
  if (!initialized) return hipErrorNotInitialized;
  if (!m || !image) return hipErrorInvalidValue;
  if (hipError_t r = injected("hipModuleLoadData")) return r;
  Elf64_Ehdr h;
  std::memcpy(&h, image, sizeof h);
  if (std::memcmp(h.e_ident, ELFMAG, SELFMAG) != 0 || h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_machine != EM_AMDGPU)
    return hipErrorInvalidImage;
  if ((h.e_flags & 0xff) != device_mach()) return hipErrorNoBinaryForGpu;
  size_t size = h.e_shoff + size_t(h.e_shnum) * h.e_shentsize;
  if (!memmem(image, size, "qvet_probe", 10)) return hipErrorInvalidImage;
  *m = new ihipModule_t{current};
  fake::created("module");
  return hipSuccess;
}

FAKE_EXPORT hipError_t hipModuleUnload(hipModule_t m) {
  if (!initialized) return hipErrorNotInitialized;
  if (!m) return hipErrorInvalidHandle;
  delete m;
  fake::released("module");
  return hipSuccess;
}

FAKE_EXPORT hipError_t hipModuleGetFunction(hipFunction_t* f, hipModule_t m, const char* name) {
  if (!initialized) return hipErrorNotInitialized;
  if (!f || !m || !name) return hipErrorInvalidValue;
  if (std::strcmp(name, "qvet_probe") != 0) return hipErrorNotFound;
  *f = &m->probe;
  return hipSuccess;
}

FAKE_EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                             unsigned int by, unsigned int bz, unsigned int shared, hipStream_t s, void** params,
                                             void** extra) {
  if (hipError_t r = stream_ok(s)) return r;
  if (!f || f->module->device != s->device) return hipErrorInvalidDeviceFunction;
  if (gx * gy * gz != 1 || bx * by * bz != 1 || shared || !params || extra) return hipErrorInvalidValue;
  hipError_t late = hipSuccess;
  if (hipError_t r = injected("hipModuleLaunchKernel", nullptr, &late)) return r;
  fake::ProbeArgs a = fake::probe_args(params);
  if (!fake::probe_args_valid(a)) return hipErrorInvalidValue;
  s->stream.push([a, late] {
    if (late) return void(sticky = late);
    fake::run_probe(a);
  });
  return hipSuccess;
}

FAKE_EXPORT hipError_t hipMemcpyAsync(void* dst, const void* src, size_t bytes, hipMemcpyKind kind, hipStream_t s) {
  if (hipError_t r = stream_ok(s)) return r;
  if (kind != hipMemcpyDefault || !fake::pinned(address(dst), bytes) || !fake::pinned(address(src), bytes)) return hipErrorInvalidValue;
  s->stream.push([=] { std::memmove(dst, src, bytes); });
  return hipSuccess;
}

template <typename T>
hipError_t wait_value(const char* call, hipStream_t s, void* ptr, T value, unsigned flags, T mask) {
  if (hipError_t r = stream_ok(s)) return r;
  if (flags != hipStreamWaitValueGte) return hipErrorNotSupported;
  if (address(ptr) % sizeof(T) || !fake::pinned(address(ptr), sizeof(T))) return hipErrorInvalidValue;
  bool hang = false;
  if (hipError_t r = injected(call, &hang)) return r;
  s->stream.push([=] { fake::wait_word(address(ptr), sizeof(T), [=](uint64_t w) { return T(T(w) & mask) >= value; }, hang); });
  return hipSuccess;
}

template <typename T>
hipError_t write_value(const char* call, hipStream_t s, void* ptr, T value, unsigned flags) {
  if (hipError_t r = stream_ok(s)) return r;
  if (flags || address(ptr) % sizeof(T) || !fake::pinned(address(ptr), sizeof(T))) return hipErrorInvalidValue;
  if (hipError_t r = injected(call)) return r;
  s->stream.push([=] { fake::write_word(address(ptr), value, sizeof(T)); });
  return hipSuccess;
}

FAKE_EXPORT hipError_t hipStreamWaitValue32(hipStream_t s, void* p, uint32_t v, unsigned int f, uint32_t mask) {
  return wait_value("hipStreamWaitValue32", s, p, v, f, mask);
}
FAKE_EXPORT hipError_t hipStreamWaitValue64(hipStream_t s, void* p, uint64_t v, unsigned int f, uint64_t mask) {
  return wait_value("hipStreamWaitValue64", s, p, v, f, mask);
}
FAKE_EXPORT hipError_t hipStreamWriteValue32(hipStream_t s, void* p, uint32_t v, unsigned int f) {
  return write_value("hipStreamWriteValue32", s, p, v, f);
}
FAKE_EXPORT hipError_t hipStreamWriteValue64(hipStream_t s, void* p, uint64_t v, unsigned int f) {
  return write_value("hipStreamWriteValue64", s, p, v, f);
}
