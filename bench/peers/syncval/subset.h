// The programs Vulkan can express, for the comparison with syncval (docs/peers.md):
//   one device, one queue, compute, `ordering overlap` (Vulkan queues order nothing by
//   themselves); commands exec, copy, barrier, memory_barrier, and `signal` (a fence, so its
//   values on each signal rise); host statements submit and `wait` on such a signal, for a
//   value some signal already submitted reaches (vkWaitForFences); no host read/write/signal,
//   no alloc/free, no device wait or timestamp; exec ranges on the device's storage-buffer
//   alignment, and no copy within one buffer whose ranges overlap (Vulkan forbids it).
// And a generator of random programs in that subset.
#pragma once
#include <cstdint>
#include <string>

#include "model/trace.h"

namespace qvet::peers {

// Empty when `t` is in the subset; otherwise the first reason it is not.
std::string outside_subset(const Trace& t, uint64_t alignment);

// A random program of about `commands` commands in the subset (`qvet gen --shape overlap-copies`): 4 buffers of 4 KiB,
// batches of execs (1-2 reads, 1 write, 256-byte aligned ranges) and copies, with barriers,
// memory_barriers, and a signal + host wait every few batches.
std::string random_subset_program(uint64_t seed, uint64_t commands);

}  // namespace qvet::peers
