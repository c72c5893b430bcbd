// Device profiles (semantics.md, "Profiles"): per architecture, how each engine orders its
// queue, how wide wait and signal operations are, and whether cross-agent reads need an acquire.
// Everything that depends on the architecture is read from here.
#pragma once
#include <cstdint>

#include "core/ir.h"

namespace qvet {

enum class Mode : uint8_t { Serial, Overlap, Chained };
const char* mode_name(Mode m);

struct Profile {
  Mode compute_mode, copy_mode;
  int wait_width_compute, wait_width_copy;
  int signal_width_compute, signal_width_copy;
  bool reads_need_acquire;  // cross-agent data needs a memory_barrier before a device read
  bool circular_waits;      // waits compare circularly ((word - v) mod 2^64 < 2^63): values stay below 2^63
};

const Profile& profile_of(Arch a);

constexpr int kHostWidth = 64;  // the host reads and stores whole 64-bit words

// The ordering mode a queue runs in: its `ordering` override, else its profile's.
Mode queue_mode(const Program& p, uint32_t queue);
int wait_width(const Program& p, uint32_t queue);
int signal_width(const Program& p, uint32_t queue);
// Whether `queue`'s waits compare circularly (NVIDIA's ACQ_CIRC_GEQ, CUDA's signed GEQ).
bool circular_waits(const Program& p, uint32_t queue);
// Below this bound, a circular compare agrees with `>=` (semantics.md, "Profiles").
constexpr int kCircularBits = 63;
constexpr uint64_t width_mask(int w) { return w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1; }
// A 32-bit wait compares the low half of the word; a 32-bit write replaces it and keeps the high half.
constexpr uint64_t kLowHalf = width_mask(32);
constexpr uint64_t kHighHalf = ~kLowHalf;
// The word after a write of `value` at `width` to a word holding `word`.
constexpr uint64_t written_word(uint64_t word, uint64_t value, int width) {
  return width >= 64 ? value : (word & kHighHalf) | (value & kLowHalf);
}
// What a wait waits for: `signal`'s word, compared at the wait's width (`mask`), >= `threshold`.
struct WaitCond {
  uint32_t signal;
  uint64_t threshold;  // already masked
  uint64_t mask;       // the wait's width
  bool met_by(uint64_t word) const { return (word & mask) >= threshold; }
  bool narrow() const { return mask == kLowHalf; }  // a 32-bit wait compares the low half
};

// A chained (QMD) exec carries at most this many release signals (semantics.md, "Order inside a queue").
constexpr int kReleaseSlots = 2;

}  // namespace qvet
