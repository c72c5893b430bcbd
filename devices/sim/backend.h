// The `sim` back end: an in-process machine with the stream semantics of CUDA and HIP, so that a
// replay plan (devices/plan.h) runs end to end, through devices/replay.h, without a GPU.
//
// Each stream runs its calls in order. A call starts a drawn latency after the previous one ended
// (or after it was enqueued); a probe spins for its duration, with drawn jitter, logging its start
// and end on the virtual clock and stamping and recording cells as the GPU kernel does; a wait
// polls its word; a wait-event waits for the event's record to be reached. The host's polling
// advances the virtual clock. It is not the trace simulator (sim.h): that one executes the
// semantics of a Trace; this one executes what the plan made of it, so comparing its runs with
// the prediction checks the plan.
#pragma once
#include <cstdint>
#include <memory>

#include "devices/backend.h"

namespace qvet {

class SimBackend : public Backend {
 public:
  SimBackend();
  ~SimBackend() override;
  const char* name() const override { return "sim"; }
  bool open(const Layout& l, const std::vector<uint32_t>& physical, std::string& error) override;
  Memory memory() override;
  void begin_run(uint64_t seed) override;
  void probe(uint32_t stream, const Probe& p) override;
  void copy_cells(uint32_t stream, uint32_t first, uint32_t count) override;
  void wait_value(uint32_t stream, uint32_t word, uint64_t value, int width) override;
  void write_value(uint32_t stream, uint32_t word, uint64_t value, int width) override;
  void record(uint32_t stream, uint32_t event) override;
  void wait_event(uint32_t stream, uint32_t event) override;
  uint64_t now() override;
  bool host_clock_shared() const override { return true; }
  void pause(uint64_t ns) override;
  bool idle() override;
  std::string failed() override;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace qvet
