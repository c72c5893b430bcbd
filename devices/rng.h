// splitmix64: small, fast, and the same sequence everywhere (runs must replay from a seed).
// Shared by the simulator, the replay plan's drawn durations and the simulated back end.
#pragma once
#include <cstdint>

namespace qvet {

struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  uint64_t range(uint64_t lo, uint64_t hi) { return lo + below(hi - lo + 1); }
};

// A value drawn from (h, v): the same pair gives the same value.
inline uint64_t mix(uint64_t h, uint64_t v) {
  Rng r{h ^ (v * 0xff51afd7ed558ccdull)};
  return r.next();
}

}  // namespace qvet
