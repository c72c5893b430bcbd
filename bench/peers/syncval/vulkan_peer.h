// VulkanPeer: runs a Trace that Vulkan can express (subset.h) on one Vulkan device, optionally
// under the Khronos validation layer's synchronization validation (syncval), and collects the
// hazards syncval reports, each mapped back to the trace commands it names.
//
// Lowering (docs/peers.md): one command buffer per run of a batch between signals, syncval's
// queue-submit check on (it finds hazards between command buffers); an exec is a
// dispatch of a small compute shader whose storage-buffer bindings are exactly its read ranges
// (readonly) and write ranges (writeonly), pushed with VK_KHR_push_descriptor; a copy is
// vkCmdCopyBuffer; `barrier` is a full compute+transfer pipeline barrier with a global memory
// barrier; `memory_barrier` is a pipeline barrier whose first scope is empty (in `overlap` mode it
// orders nothing between earlier and later commands); a `signal` ends the command buffer, which is
// submitted with a fence, and a host `wait` is vkWaitForFences on the fence of the first signal
// that satisfies it.
//
// Not thread-safe; one instance per thread. Errors are values (open() returns a message).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/trace.h"

namespace qvet::peers {

// One hazard message of syncval, and the commands it names (trace command ids, kNone where the
// message could not be mapped).
struct Hazard {
  std::string kind;  // "SYNC-HAZARD-READ-AFTER-WRITE", ...
  uint32_t cmd = kNone, prior = kNone;
  bool at_submit = false;  // found by the check at vkQueueSubmit (between command buffers)
  std::string message;
};

struct PeerRun {
  std::vector<Hazard> hazards;
  double seconds = 0;  // record + submit + wait idle, wall
  std::vector<uint32_t> cb_of;  // per trace command: the command buffer it was recorded in
  std::string skipped;  // non-empty: the program cannot run (the reason)
};

class VulkanPeer {
 public:
  explicit VulkanPeer(bool syncval);
  ~VulkanPeer();
  // Creates the instance (with the layer when syncval), the device and the queue. Returns "" or
  // why not (no Vulkan driver, no layer, no glslangValidator).
  std::string open();
  // The storage-buffer offset alignment of the device (exec ranges must start on it).
  uint64_t storage_alignment() const;
  PeerRun run(const Trace& t);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace qvet::peers
