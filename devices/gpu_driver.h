// The GpuApi calls that CUDA's driver API and HIP's runtime spell alike but for names: pinned memory,
// streams, events and the probe launch, each one driver call, written once over `Driver`, one API's
// table of entry points with its types and flags. devices/cuda/ and devices/hip/ derive from
// DriverApi<TheirTable> and write only what differs: loading and starting, GPUs and contexts, the
// probe's module, copies and value waits and writes (HIP takes pointers, a copy kind and a mask),
// and how an error is named. One thread uses it (GpuApi's contract).
#pragma once
#include <cstdint>

#include "devices/dynlib.h"
#include "devices/gpu_stream.h"

namespace qvet {

// One entry point: its address once loaded, the symbol its errors name, and the API version whose
// signature `Fn` spells (what CUDA's cuGetProcAddress asks for; 0 where the API has none).
template <class Fn> struct Entry {
  Fn fn = nullptr;
  const char* name = "";
  int version = 0;
};

// The handle and result types of one API, which its table derives from.
template <class R, class S, class E, class F> struct DriverTypes {
  using Result = R;
  using Stream = S;
  using Event = E;
  using Function = F;
};

// `Driver` (a DriverTypes) gives the values kSuccess, kNotReady, kHostAllocFlags, kStreamFlags,
// kEventFlags and the entries below (named as in `load_shared`).
template <class Driver> class DriverApi : public GpuApi {
 public:
  void* host_alloc(size_t bytes) override {
    return made<void*>([&](void** p) { return call(d_.host_alloc, p, bytes, Driver::kHostAllocFlags); });
  }
  Handle stream_create() override {
    return made<typename Driver::Stream>([&](auto* h) { return call(d_.stream_create, h, Driver::kStreamFlags); });
  }
  Handle event_create() override {
    return made<typename Driver::Event>([&](auto* h) { return call(d_.event_create, h, Driver::kEventFlags); });
  }
  bool launch(uint32_t gpu, Handle s, void** args) override {
    return call(d_.launch_kernel, probe(gpu), 1, 1, 1, 1, 1, 1, 0, stream(s), args, nullptr);
  }
  bool event_record(Handle e, Handle s) override { return call(d_.event_record, event(e), stream(s)); }
  bool wait_event(Handle s, Handle e) override { return call(d_.stream_wait_event, stream(s), event(e), 0); }
  int stream_query(Handle s) override {
    auto r = d_.stream_query.fn(stream(s));
    return r == Driver::kNotReady ? 0 : check(r, d_.stream_query.name) ? 1 : -1;
  }
  void stream_destroy(Handle s) override { (void)d_.stream_destroy.fn(stream(s)); }
  void event_destroy(Handle e) override { (void)d_.event_destroy.fn(event(e)); }
  void host_free(void* host) override { (void)d_.host_free.fn(host); }

 protected:
  using Result = typename Driver::Result;
  static typename Driver::Stream stream(Handle s) { return static_cast<typename Driver::Stream>(s); }
  static typename Driver::Event event(Handle e) { return static_cast<typename Driver::Event>(e); }

  // GPU `gpu`'s loaded probe kernel.
  virtual typename Driver::Function probe(uint32_t gpu) const = 0;
  // The error's name ("CUDA_ERROR_LAUNCH_FAILED"), or null.
  virtual const char* error_name(Result r) const = 0;

  // True on success; otherwise keeps "API: CALL failed: NAME" as the first failure.
  bool check(Result r, const char* call) { return r == Driver::kSuccess || fail(call, error_name(r), int(r)); }
  template <class Fn, class... Args> bool call(const Entry<Fn>& e, Args... args) { return check(e.fn(args...), e.name); }

  // Looks up the entries this file uses with `get(entry)`, which reports the first one missing; all
  // are tried.
  template <class Get> bool load_shared(Get get) {
    return get(d_.host_alloc) & get(d_.host_free) & get(d_.stream_create) & get(d_.stream_destroy) &
           get(d_.stream_query) & get(d_.event_create) & get(d_.event_record) & get(d_.event_destroy) &
           get(d_.stream_wait_event) & get(d_.launch_kernel);
  }
  // Sets `entry` from a symbol's address (null: missing).
  template <class Fn> static bool set(Entry<Fn>& entry, void* address) {
    entry.fn = reinterpret_cast<Fn>(address);
    return address != nullptr;
  }

  DynamicLibrary lib_;  // loaded by the derived class
  Driver d_{};
};

}  // namespace qvet
