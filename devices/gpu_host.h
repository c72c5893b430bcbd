// What the GPU back ends (cuda, hip) share besides the Backend interface: the layout of their one
// pinned host allocation, logical devices mapped onto physical GPUs, and the host clock.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "devices/backend.h"

namespace qvet {

// One host allocation, mapped into every device, carved into what a Layout needs: words, the log's
// times, the calibration probe's two times and its empty descriptor, cells, seen entries, scratch
// cells and the probe descriptors (copied in).
struct HostBlock {
  static size_t bytes(const Layout& l);
  HostBlock() = default;
  HostBlock(void* base, const Layout& l);
  Memory mem;
  uint64_t* calibration = nullptr;  // [0], [1]: times; [2], [3]: zero, the empty descriptor
  uint32_t *scratch = nullptr, *desc = nullptr;
};

// Per logical device (of `logical`), the index into `used` of its physical GPU: `physical[d]`, or
// round robin over the `count` GPUs found. False with `error` for a GPU that does not exist.
bool map_devices(const std::string& api, uint32_t logical, const std::vector<uint32_t>& physical, int count,
                 std::vector<int>& used, std::vector<uint32_t>& gpu_of_logical, std::string& error);

// The host's clock, ns; back ends move it onto their device clock with a calibration probe.
uint64_t monotonic_ns();

}  // namespace qvet
