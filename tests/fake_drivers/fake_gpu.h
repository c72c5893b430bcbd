// What the stand-in drivers (libcuda.so.1 from fake_cuda.cpp, libamdhip64.so.6 from fake_hip.cpp)
// share: a GPU made of CPU threads. Each stream is a thread that runs its operations in order,
// each after a drawn delay, so that streams really run concurrently and unordered work overlaps;
// pinned memory is ordinary memory whose device address is its host address (unified addressing);
// the probe kernel runs on the CPU from devices/probe_kernel.h itself.
//
// Test knobs (environment, read once):
//   QVET_FAKE_DEVICES=N       how many GPUs the driver reports (default 2)
//   QVET_FAKE_DELAY_US=N      the largest drawn delay before each operation (default 30)
//   QVET_FAKE_FAULT=CALL:WHAT[#K]   the K-th call (default the first) of entry point CALL fails with
//                             error WHAT (a name of the API's error enum), or, with WHAT=hang, is a
//                             wait that never completes by itself (see wait_word)
// At exit, anything created and not released (streams, events, pinned memory, modules, contexts)
// is named on standard error and the process exits 70: the tests' leak check.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace qvet::fake {

// The library's name, for messages ("fake libcuda.so.1").
void set_driver_name(const char* name);

// What QVET_FAKE_FAULT asks of this call of `call` (each call counts).
struct Fault {
  bool hit = false;
  bool hang = false;
  std::string error;  // the error's name, when hit and not hang
};
Fault take_fault(const char* call);

// An entry point's injected fault in its API's terms: the error to return now (`ok` when none),
// `*hang` for an injected hang, and an asynchronous error (`async`: an illegal address) put in
// `*late` instead, for the work to report when it runs. `codes` names the API's errors.
template <typename Err, typename Codes>
Err injected(const char* call, const Codes& codes, Err ok, Err unknown, Err async, bool* hang = nullptr, Err* late = nullptr) {
  Fault f = take_fault(call);
  if (!f.hit) return ok;
  if (f.hang) {
    if (hang) *hang = true;
    return ok;
  }
  auto it = codes.find(f.error);
  Err r = it == codes.end() ? unknown : it->second;
  if (late && r == async) return *late = r, ok;
  return r;
}

int device_count();

// The ledger of live objects by kind ("stream", "event", "pinned memory", "module", "context").
void created(const char* kind);
void released(const char* kind);

// Pinned memory: host memory every device reaches at the same address.
void* pinned_alloc(size_t bytes);
bool pinned_free(void* p);
bool pinned(uint64_t address, size_t bytes);  // whether [address, address+bytes) is pinned memory

class Stream {
 public:
  using Op = std::function<void()>;
  explicit Stream(uint64_t seed);
  ~Stream();  // abandons the work not yet done (see abandoned()), then joins its thread
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  void push(Op op);
  bool idle();

 private:
  void run();
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<Op> ops_;
  bool busy_ = false;
  std::atomic<bool> stop_{false};
  uint64_t rng_;
  std::thread thread_;
};

// An event is the marker its latest record sets when the stream reaches it (none: never recorded,
// and a wait on it passes at once).
using Marker = std::shared_ptr<std::atomic<bool>>;

// For code running on a stream's thread: lets the others run; true when the stream is being
// destroyed and the running operation should stop.
bool spin();
// A stream's wait for an event's marker (none: passes at once).
void wait_marker(const Marker& marker);

// A stream's wait on the word of `bytes` (4 or 8) at `address` until `met(word)`. A deaf wait (an
// injected hang) stops polling: it ignores the word until it holds a new value that meets it and
// that no device wrote (the host's: the watchdog's release), as a wait that missed its wakeup.
void wait_word(uint64_t address, int bytes, const std::function<bool(uint64_t)>& met, bool deaf);
// A stream's write: `bytes` (4 or 8) of `value` at `address`, remembered for deaf waits.
void write_word(uint64_t address, uint64_t value, int bytes);

}  // namespace qvet::fake

namespace qvet::fake {

// qvet_probe's arguments (devices/probe_kernel.h), read from a launch's parameter array (each entry
// points at one argument, as cuLaunchKernel and hipModuleLaunchKernel take them). Copied at launch.
struct ProbeArgs {
  uint64_t times = 0;
  uint32_t slot = 0, stamp = 0;
  uint64_t duration = 0, cells = 0, desc = 0;
  uint32_t d = 0;
  uint64_t seen = 0, word = 0, value = 0;
  uint32_t width = 0;
  uint64_t hz = 0, shift = 0;
};
ProbeArgs probe_args(void** params);
// Whether every address the probe uses is pinned memory (the word aligned for its width).
bool probe_args_valid(const ProbeArgs& a);

}  // namespace qvet::fake
