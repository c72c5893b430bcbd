// The GPU API a replay plan drives (devices/plan.h): streams, 64-bit signal words, stamp cells,
// probe kernel launches, copies, waits and writes on words, and events. Three implementations:
// `cuda` (devices/cuda/), `hip` (devices/hip/) and `sim` (devices/sim/backend.h, an in-process
// machine with the same stream semantics, so the whole replay path runs without a GPU).
//
// Memory is host-visible on every back end (pinned and mapped into every device): the host reads
// and writes words, cells and the probes' log through Memory's pointers while the devices run,
// which is how host waits and host signals work and how the watchdog releases a hung wait.
//
// Calls only enqueue; nothing blocks but `wait_idle`. A back end is used by one thread.
// Errors are values: `open` says why the device is not available; a call that fails later
// makes `failed` return its message.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "devices/plan.h"

namespace qvet {

struct Memory {
  uint64_t* words = nullptr;  // Layout::words
  uint32_t* cells = nullptr;  // Layout::cells
  uint64_t* times = nullptr;  // 2 * Layout::slots: start and end of every probe, host marks
  uint32_t* seen = nullptr;   // Layout::seen
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  // Loads the driver, picks the devices (`physical[logical device]`, or round robin when empty),
  // creates the streams, events and memory `l` needs, and loads the probe kernel. False, with a
  // one-line `error` naming the library and the error, when the device is not available.
  virtual bool open(const Layout& l, const std::vector<uint32_t>& physical, std::string& error) = 0;
  // Host-visible memory; valid after open.
  virtual Memory memory() = 0;
  // Per run: a fresh start (`seed` draws the sim back end's schedule; the GPUs have their own).
  virtual void begin_run(uint64_t seed) = 0;

  // Enqueued on `stream`, in order.
  virtual void probe(uint32_t stream, const Probe& p) = 0;
  virtual void copy_cells(uint32_t stream, uint32_t first, uint32_t count) = 0;  // to the scratch cells
  virtual void wait_value(uint32_t stream, uint32_t word, uint64_t value, int width) = 0;
  virtual void write_value(uint32_t stream, uint32_t word, uint64_t value, int width) = 0;
  virtual void record(uint32_t stream, uint32_t event) = 0;
  virtual void wait_event(uint32_t stream, uint32_t event) = 0;

  // The clock probes log (ns). Host marks are read from it too.
  virtual uint64_t now() = 0;
  // Whether now() is the devices' own clock, so host marks order against probe times (sim), or
  // only an estimate of it (a GPU: the host reads its own clock).
  virtual bool host_clock_shared() const = 0;
  // Lets the devices run for about `ns` (the host is polling).
  virtual void pause(uint64_t ns) = 0;
  // Whether every stream has finished all its work.
  virtual bool idle() = 0;
  // How far two devices' logged times may be off against each other in this run (0: they share
  // one clock); valid after begin_run.
  virtual uint64_t device_skew_ns() { return 0; }
  // The first error a call or the device reported since open (empty: none).
  virtual std::string failed() = 0;
};

}  // namespace qvet

namespace qvet {

// The back end called `name` (sim, cuda, hip); null with `error` for an unknown name, or one this
// build does not carry (built without the vendor's headers).
std::unique_ptr<Backend> make_backend(const std::string& name, std::string& error);

}  // namespace qvet
