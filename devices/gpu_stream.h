// The one back end for GPU stream APIs (CUDA's driver API, HIP's runtime): what replay needs from a
// GPU written once, over `GpuApi`, the small set of calls in which the two APIs differ only in
// spelling. devices/cuda/ and devices/hip/ each implement GpuApi and nothing else.
//
// Per replay (Backend::open): logical devices map onto physical GPUs (several may share one); one
// pinned, portable, mapped host allocation holds the words, cells, probe log and descriptors, and
// every GPU and the host reach it; one stream per queue lane, on its device's GPU; events are
// created at their first record, on the recording stream's GPU; the embedded probe kernel is loaded
// into every GPU. Each GPU's clock is calibrated against the host's (CLOCK_MONOTONIC): a warm-up
// probe, then two raw probes 20 ms apart give its rate (unless it counts ns) and its lead, which
// every later probe subtracts, so all probes log on the host's clock.
//
// Errors are values: the first failing call's message ("cuda: cuLaunchKernel failed:
// CUDA_ERROR_LAUNCH_FAILED") is kept and returned by `failed()`. Closing takes apart an idle
// device (streams, events, memory, modules, GPUs); a device still busy (a failure left work that
// may read the memory) is left to process exit. One thread uses a back end.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "devices/backend.h"

namespace qvet {

class GpuApi {
 public:
  using Handle = void*;  // a stream or an event (CUstream, hipEvent_t, ...)
  virtual ~GpuApi() = default;
  virtual const char* name() const = 0;  // "cuda", "hip"
  // Whether the probe's clock counts nanoseconds (%globaltimer), or ticks at a rate measured at open
  // (s_memrealtime).
  virtual bool clock_counts_ns() const = 0;

  // Loads the library (QVET_<API>_LIBRARY names another one, for tests), starts the API and counts
  // the GPUs. False with a one-line `error` naming the library or the call.
  virtual bool start(int& gpus, std::string& error) = 0;
  // Checks physical GPU `physical`'s capabilities and keeps it as the next GPU (0, 1, ...).
  virtual bool add_gpu(int physical, std::string& error) = 0;
  // Makes GPU `gpu` the one later calls act on (a context, a device).
  virtual bool make_current(uint32_t gpu) = 0;
  // Loads the embedded probe kernel into the current GPU, `gpu`.
  virtual bool load_probe(uint32_t gpu, std::string& error) = 0;
  // Each of these returns null (0) when it fails.
  virtual void* host_alloc(size_t bytes) = 0;           // pinned, portable, mapped into every GPU
  virtual uint64_t device_address(void* host) = 0;      // as the current GPU sees it
  virtual Handle stream_create() = 0;                   // on the current GPU, non-blocking
  virtual Handle event_create() = 0;                    // on the current GPU, no timing
  // Enqueued on `s`, which belongs to the current GPU.
  virtual bool launch(uint32_t gpu, Handle s, void** args) = 0;  // the probe kernel, one thread
  virtual bool copy(Handle s, uint64_t dst, uint64_t src, size_t bytes) = 0;
  virtual bool wait_value(Handle s, uint64_t address, uint64_t value, int width) = 0;  // >= at `width`
  virtual bool write_value(Handle s, uint64_t address, uint64_t value, int width) = 0;
  virtual bool event_record(Handle e, Handle s) = 0;
  virtual bool wait_event(Handle s, Handle e) = 0;
  // 1: `s` finished its work; 0: it is still running; -1: it failed (error() says why).
  virtual int stream_query(Handle s) = 0;

  // Teardown, on the current GPU; failures are ignored.
  virtual void stream_destroy(Handle s) = 0;
  virtual void event_destroy(Handle e) = 0;
  virtual void host_free(void* host) = 0;
  // Unloads GPU `gpu`'s probe kernel and lets the GPU go (current or not), last.
  virtual void remove_gpu(uint32_t gpu) = 0;

  // The first failure: "cuda: CALL failed: ERROR_NAME".
  const std::string& error() const { return error_; }

 protected:
  // Keeps the first failure (`error_name` null: the error's number) and returns false.
  bool fail(const char* call, const char* error_name, int code) {
    if (error_.empty())
      error_ = std::string(name()) + ": " + call + " failed: " + (error_name ? error_name : "error " + std::to_string(code));
    return false;
  }
  // The handle that `create(&h)` made, or null when it failed.
  template <class H, class Create> static Handle made(Create create) {
    H h{};
    return create(&h) ? Handle(h) : nullptr;
  }

 private:
  std::string error_;
};

std::unique_ptr<Backend> make_gpu_stream_backend(std::unique_ptr<GpuApi> api);

}  // namespace qvet
