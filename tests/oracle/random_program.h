// Random small `.hcq` programs for the differential test: several devices of every profile,
// every queue mode, loops, command lists, views, frees and allocs, host waits and signals, waits
// on values that are and are not written, 32-bit wraps. Deterministic in the seed; always valid
// input (the generator tracks liveness so frees and allocs are legal).
#pragma once
#include <cstdint>
#include <string>

namespace qvet::oracle {

std::string random_program(uint64_t seed);

}  // namespace qvet::oracle
