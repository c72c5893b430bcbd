// A stand-in for NVIDIA's libcuda.so.1 (tests/fake_drivers/fake_gpu.h): the CUDA Driver API entry
// points qvet's cuda back end asks for, reached only through cuGetProcAddress_v2 (CUDA 12) or
// cuGetProcAddress (11.3) at the API versions whose signatures they implement. It checks what a
// driver checks (a current context, handles of that context, aligned and mapped addresses, flags,
// the PTX header) and follows the documented semantics: in-order streams, CU_STREAM_WAIT_VALUE_GEQ
// compares signed ((int64_t)(*addr - value) >= 0), a never-recorded event is waited on at once, an
// illegal address is reported by later calls (a sticky error). %globaltimer runs kClockLead ahead.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/fake_drivers/fake_gpu.h"

static unsigned long long fake_globaltimer();
#define QVET_NOW() fake_globaltimer()
#include "tests/fake_drivers/cpu_probe.h"

namespace fake = qvet::fake;

static unsigned long long fake_globaltimer() {
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return uint64_t(ns) + fake::kClockLead;
}

// The driver's objects. A handle is a pointer to one of these.
struct CUctx_st {
  int device = 0;
  int refs = 0;
};
struct CUstream_st {
  CUctx_st* ctx;
  fake::Stream stream;
};
struct CUevent_st {
  CUctx_st* ctx;
  fake::Marker last;
};
struct CUfunc_st {
  CUmod_st* module;
};
struct CUmod_st {
  CUctx_st* ctx;
  CUfunc_st probe{this};
};

namespace {

bool initialized = false;
std::vector<std::unique_ptr<CUctx_st>> contexts;  // per device: its primary context
thread_local CUctx_st* current = nullptr;
std::atomic<int> sticky{CUDA_SUCCESS};  // an error a launch reported late: every later stream call returns it
std::atomic<uint64_t> streams_made{0};

const std::map<std::string, CUresult>& error_codes() {
  static const std::map<std::string, CUresult> m = {
      {"CUDA_ERROR_INVALID_VALUE", CUDA_ERROR_INVALID_VALUE},       {"CUDA_ERROR_OUT_OF_MEMORY", CUDA_ERROR_OUT_OF_MEMORY},
      {"CUDA_ERROR_NOT_INITIALIZED", CUDA_ERROR_NOT_INITIALIZED},   {"CUDA_ERROR_NO_DEVICE", CUDA_ERROR_NO_DEVICE},
      {"CUDA_ERROR_INVALID_DEVICE", CUDA_ERROR_INVALID_DEVICE},     {"CUDA_ERROR_INVALID_IMAGE", CUDA_ERROR_INVALID_IMAGE},
      {"CUDA_ERROR_INVALID_CONTEXT", CUDA_ERROR_INVALID_CONTEXT},   {"CUDA_ERROR_INVALID_HANDLE", CUDA_ERROR_INVALID_HANDLE},
      {"CUDA_ERROR_NOT_FOUND", CUDA_ERROR_NOT_FOUND},               {"CUDA_ERROR_NOT_READY", CUDA_ERROR_NOT_READY},
      {"CUDA_ERROR_ILLEGAL_ADDRESS", CUDA_ERROR_ILLEGAL_ADDRESS},   {"CUDA_ERROR_MISALIGNED_ADDRESS", CUDA_ERROR_MISALIGNED_ADDRESS},
      {"CUDA_ERROR_LAUNCH_FAILED", CUDA_ERROR_LAUNCH_FAILED},       {"CUDA_ERROR_NOT_SUPPORTED", CUDA_ERROR_NOT_SUPPORTED},
      {"CUDA_ERROR_UNKNOWN", CUDA_ERROR_UNKNOWN}};
  return m;
}

CUresult injected(const char* call, bool* hang = nullptr, CUresult* late = nullptr) {
  return fake::injected(call, error_codes(), CUDA_SUCCESS, CUDA_ERROR_UNKNOWN, CUDA_ERROR_ILLEGAL_ADDRESS, hang, late);
}

bool retained(CUcontext c) { return c && c->refs > 0; }
// A stream call's common checks: the stream belongs to the current context, no sticky error.
CUresult stream_ok(CUstream s) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!retained(current)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!s || s->ctx != current) return CUDA_ERROR_INVALID_HANDLE;
  return CUresult(sticky.load());
}

CUresult fake_cuGetErrorName(CUresult error, const char** name) {
  if (!name) return CUDA_ERROR_INVALID_VALUE;
  *name = error == CUDA_SUCCESS ? "CUDA_SUCCESS" : nullptr;
  for (auto& [n, code] : error_codes())
    if (code == error) *name = n.c_str();
  return *name ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult fake_cuInit(unsigned flags) {
  if (CUresult r = injected("cuInit")) return r;
  if (flags) return CUDA_ERROR_INVALID_VALUE;
  fake::set_driver_name("fake libcuda.so.1");
  if (!initialized)
    for (int d = 0; d < fake::device_count(); ++d) contexts.push_back(std::make_unique<CUctx_st>(CUctx_st{d, 0}));
  initialized = true;
  return CUDA_SUCCESS;
}

CUresult fake_cuDriverGetVersion(int* v) {
  if (!v) return CUDA_ERROR_INVALID_VALUE;
  *v = 12080;
  return CUDA_SUCCESS;
}

CUresult fake_cuDeviceGetCount(int* n) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!n) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = injected("cuDeviceGetCount")) return r;
  *n = int(contexts.size());
  return CUDA_SUCCESS;
}

CUresult fake_cuDeviceGet(CUdevice* d, int ordinal) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!d) return CUDA_ERROR_INVALID_VALUE;
  if (ordinal < 0 || ordinal >= int(contexts.size())) return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return CUDA_SUCCESS;
}

CUresult fake_cuDeviceGetAttribute(int* v, CUdevice_attribute attr, CUdevice d) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!v) return CUDA_ERROR_INVALID_VALUE;
  if (d < 0 || d >= int(contexts.size())) return CUDA_ERROR_INVALID_DEVICE;
  *v = attr == CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS || attr == CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY ||
       attr == CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING;
  return CUDA_SUCCESS;
}

CUresult fake_cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  if (d < 0 || d >= int(contexts.size())) return CUDA_ERROR_INVALID_DEVICE;
  if (CUresult r = injected("cuDevicePrimaryCtxRetain")) return r;
  if (contexts[size_t(d)]->refs++ == 0) fake::created("context");
  *c = contexts[size_t(d)].get();
  return CUDA_SUCCESS;
}

CUresult fake_cuDevicePrimaryCtxRelease(CUdevice d) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (d < 0 || d >= int(contexts.size())) return CUDA_ERROR_INVALID_DEVICE;
  CUctx_st& c = *contexts[size_t(d)];
  if (c.refs == 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (--c.refs == 0) fake::released("context");
  if (c.refs == 0 && current == &c) current = nullptr;
  return CUDA_SUCCESS;
}

CUresult fake_cuCtxSetCurrent(CUcontext c) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (c && !retained(c)) return CUDA_ERROR_INVALID_CONTEXT;
  current = c;
  return CUDA_SUCCESS;
}

CUresult fake_cuStreamCreate(CUstream* s, unsigned flags) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!retained(current)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!s || (flags != CU_STREAM_DEFAULT && flags != CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = injected("cuStreamCreate")) return r;
  *s = new CUstream_st{current, fake::Stream(++streams_made)};
  fake::created("stream");
  return CUDA_SUCCESS;
}

CUresult fake_cuStreamDestroy(CUstream s) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!s) return CUDA_ERROR_INVALID_HANDLE;
  delete s;  // abandons what the stream had not done
  fake::released("stream");
  return CUDA_SUCCESS;
}

CUresult fake_cuStreamQuery(CUstream s) {
  if (CUresult r = stream_ok(s)) return r;
  if (CUresult r = injected("cuStreamQuery")) return r;
  return s->stream.idle() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult fake_cuEventCreate(CUevent* e, unsigned flags) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!retained(current)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!e || flags & ~unsigned(CU_EVENT_DISABLE_TIMING | CU_EVENT_BLOCKING_SYNC | CU_EVENT_INTERPROCESS)) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = injected("cuEventCreate")) return r;
  *e = new CUevent_st{current, nullptr};
  fake::created("event");
  return CUDA_SUCCESS;
}

CUresult fake_cuEventDestroy(CUevent e) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  delete e;
  fake::released("event");
  return CUDA_SUCCESS;
}

CUresult fake_cuEventRecord(CUevent e, CUstream s) {
  if (CUresult r = stream_ok(s)) return r;
  if (!e || e->ctx != s->ctx) return CUDA_ERROR_INVALID_HANDLE;  // an event records in its own context
  auto marker = std::make_shared<std::atomic<bool>>(false);
  e->last = marker;
  s->stream.push([marker] { marker->store(true); });
  return CUDA_SUCCESS;
}

CUresult fake_cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
  if (CUresult r = stream_ok(s)) return r;
  if (!e || flags) return !e ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;  // any context's event
  if (auto marker = e->last) s->stream.push([marker] { fake::wait_marker(marker); });
  return CUDA_SUCCESS;
}

CUresult fake_cuMemHostAlloc(void** p, size_t bytes, unsigned flags) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!retained(current)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!p || flags & ~unsigned(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED))
    return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = injected("cuMemHostAlloc")) return r;
  if (!(*p = fake::pinned_alloc(bytes))) return CUDA_ERROR_OUT_OF_MEMORY;
  fake::created("pinned memory");
  return CUDA_SUCCESS;
}

CUresult fake_cuMemHostGetDevicePointer(CUdeviceptr* d, void* p, unsigned flags) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!retained(current)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!d || flags || !fake::pinned(uint64_t(uintptr_t(p)), 1)) return CUDA_ERROR_INVALID_VALUE;
  *d = CUdeviceptr(uintptr_t(p));  // unified addressing
  return CUDA_SUCCESS;
}

CUresult fake_cuMemFreeHost(void* p) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!fake::pinned_free(p)) return CUDA_ERROR_INVALID_VALUE;
  fake::released("pinned memory");
  return CUDA_SUCCESS;
}

// PTX text that declares its ISA and target and defines qvet_probe; anything else is not an image
// this driver takes.
CUresult fake_cuModuleLoadData(CUmodule* m, const void* image) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!retained(current)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!m || !image) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = injected("cuModuleLoadData")) return r;
  std::string ptx(static_cast<const char*>(image), strnlen(static_cast<const char*>(image), 1 << 20));
  if (ptx.find(".version ") == std::string::npos || ptx.find(".target sm_") == std::string::npos ||
      ptx.find(".entry qvet_probe(") == std::string::npos)
    return CUDA_ERROR_INVALID_IMAGE;
  *m = new CUmod_st{current};
  fake::created("module");
  return CUDA_SUCCESS;
}

CUresult fake_cuModuleUnload(CUmodule m) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!m) return CUDA_ERROR_INVALID_HANDLE;
  if (m->ctx != current) return CUDA_ERROR_INVALID_CONTEXT;
  delete m;
  fake::released("module");
  return CUDA_SUCCESS;
}

CUresult fake_cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name) {
  if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
  if (!f || !m || !name) return CUDA_ERROR_INVALID_VALUE;
  if (std::strcmp(name, "qvet_probe") != 0) return CUDA_ERROR_NOT_FOUND;
  *f = &m->probe;
  return CUDA_SUCCESS;
}

CUresult fake_cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                             unsigned shared, CUstream s, void** params, void** extra) {
  if (CUresult r = stream_ok(s)) return r;
  if (!f || f->module->ctx != current) return CUDA_ERROR_INVALID_HANDLE;
  if (gx * gy * gz != 1 || bx * by * bz != 1 || shared || !params || extra) return CUDA_ERROR_INVALID_VALUE;
  CUresult late = CUDA_SUCCESS;
  if (CUresult r = injected("cuLaunchKernel", nullptr, &late)) return r;
  fake::ProbeArgs a = fake::probe_args(params);
  if (!fake::probe_args_valid(a)) return CUDA_ERROR_INVALID_VALUE;
  s->stream.push([a, late] {
    if (late) return void(sticky = late);
    fake::run_probe(a);
  });
  return CUDA_SUCCESS;
}

CUresult fake_cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s) {
  if (CUresult r = stream_ok(s)) return r;
  if (!fake::pinned(dst, bytes) || !fake::pinned(src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  s->stream.push([=] { std::memmove(reinterpret_cast<void*>(uintptr_t(dst)), reinterpret_cast<void*>(uintptr_t(src)), bytes); });
  return CUDA_SUCCESS;
}

template <typename T>
CUresult wait_value(const char* call, CUstream s, CUdeviceptr addr, T value, unsigned flags) {
  if (CUresult r = stream_ok(s)) return r;
  if ((flags & ~unsigned(CU_STREAM_WAIT_VALUE_FLUSH)) != CU_STREAM_WAIT_VALUE_GEQ) return CUDA_ERROR_NOT_SUPPORTED;
  if (addr % sizeof(T) || !fake::pinned(addr, sizeof(T))) return CUDA_ERROR_INVALID_VALUE;
  bool hang = false;
  if (CUresult r = injected(call, &hang)) return r;
  using Signed = std::make_signed_t<T>;
  s->stream.push([=] { fake::wait_word(addr, sizeof(T), [=](uint64_t w) { return Signed(T(w) - value) >= 0; }, hang); });
  return CUDA_SUCCESS;
}

template <typename T>
CUresult write_value(const char* call, CUstream s, CUdeviceptr addr, T value, unsigned flags) {
  if (CUresult r = stream_ok(s)) return r;
  if (flags & ~unsigned(CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER)) return CUDA_ERROR_INVALID_VALUE;
  if (addr % sizeof(T) || !fake::pinned(addr, sizeof(T))) return CUDA_ERROR_INVALID_VALUE;
  if (CUresult r = injected(call)) return r;
  s->stream.push([=] { fake::write_word(addr, value, sizeof(T)); });
  return CUDA_SUCCESS;
}

CUresult fake_cuStreamWaitValue32(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f) { return wait_value("cuStreamWaitValue32", s, a, v, f); }
CUresult fake_cuStreamWaitValue64(CUstream s, CUdeviceptr a, cuuint64_t v, unsigned f) { return wait_value("cuStreamWaitValue64", s, a, v, f); }
CUresult fake_cuStreamWriteValue32(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f) { return write_value("cuStreamWriteValue32", s, a, v, f); }
CUresult fake_cuStreamWriteValue64(CUstream s, CUdeviceptr a, cuuint64_t v, unsigned f) { return write_value("cuStreamWriteValue64", s, a, v, f); }

// Entry points by name: the first API version whose signature the implementation has. A request
// for an older version gets CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT (this driver has no older
// variants), so a back end that asks for the wrong version fails here, not on a GPU.
struct Entry {
  const char* name;
  int version;
  void* fn;
};
template <typename F>
void* fp(F f) {
  return reinterpret_cast<void*>(f);
}
const Entry kEntries[] = {
    {"cuGetErrorName", 6000, fp(fake_cuGetErrorName)},
    {"cuInit", 2000, fp(fake_cuInit)},
    {"cuDriverGetVersion", 2020, fp(fake_cuDriverGetVersion)},
    {"cuDeviceGetCount", 2000, fp(fake_cuDeviceGetCount)},
    {"cuDeviceGet", 2000, fp(fake_cuDeviceGet)},
    {"cuDeviceGetAttribute", 2000, fp(fake_cuDeviceGetAttribute)},
    {"cuDevicePrimaryCtxRetain", 7000, fp(fake_cuDevicePrimaryCtxRetain)},
    {"cuDevicePrimaryCtxRelease", 11000, fp(fake_cuDevicePrimaryCtxRelease)},
    {"cuCtxSetCurrent", 4000, fp(fake_cuCtxSetCurrent)},
    {"cuStreamCreate", 2000, fp(fake_cuStreamCreate)},
    {"cuStreamDestroy", 4000, fp(fake_cuStreamDestroy)},
    {"cuStreamQuery", 2000, fp(fake_cuStreamQuery)},
    {"cuEventCreate", 2000, fp(fake_cuEventCreate)},
    {"cuEventRecord", 2000, fp(fake_cuEventRecord)},
    {"cuEventDestroy", 4000, fp(fake_cuEventDestroy)},
    {"cuStreamWaitEvent", 3020, fp(fake_cuStreamWaitEvent)},
    {"cuMemHostAlloc", 2020, fp(fake_cuMemHostAlloc)},
    {"cuMemHostGetDevicePointer", 3020, fp(fake_cuMemHostGetDevicePointer)},
    {"cuMemFreeHost", 2000, fp(fake_cuMemFreeHost)},
    {"cuModuleLoadData", 2000, fp(fake_cuModuleLoadData)},
    {"cuModuleUnload", 2000, fp(fake_cuModuleUnload)},
    {"cuModuleGetFunction", 2000, fp(fake_cuModuleGetFunction)},
    {"cuLaunchKernel", 4000, fp(fake_cuLaunchKernel)},
    {"cuMemcpyAsync", 4000, fp(fake_cuMemcpyAsync)},
    {"cuStreamWaitValue32", 11070, fp(fake_cuStreamWaitValue32)},
    {"cuStreamWaitValue64", 11070, fp(fake_cuStreamWaitValue64)},
    {"cuStreamWriteValue32", 11070, fp(fake_cuStreamWriteValue32)},
    {"cuStreamWriteValue64", 11070, fp(fake_cuStreamWriteValue64)},
};

CUresult lookup(const char* symbol, void** pfn, int version, cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
  if (!symbol || !pfn || flags != CU_GET_PROC_ADDRESS_DEFAULT) return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  for (const Entry& e : kEntries)
    if (std::strcmp(e.name, symbol) == 0) {
      st = version >= e.version ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
      if (st == CU_GET_PROC_ADDRESS_SUCCESS) *pfn = e.fn;
    }
  if (status) *status = st;
  return st == CU_GET_PROC_ADDRESS_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

}  // namespace

// The two exported symbols (every other entry point is reached through them).
extern "C" __attribute__((visibility("default"))) CUresult
fake_cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags, CUdriverProcAddressQueryResult* status)
    __asm__("cuGetProcAddress_v2");
extern "C" __attribute__((visibility("default"))) CUresult
fake_cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) __asm__("cuGetProcAddress");

CUresult fake_cuGetProcAddress_v2(const char* symbol, void** pfn, int version, cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
  return lookup(symbol, pfn, version, flags, status);
}
CUresult fake_cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  return lookup(symbol, pfn, version, flags, nullptr);
}
