// The probe kernel, one source for the CUDA build (devices/cuda/probe.cu, compiled to PTX) and
// the HIP build (devices/hip/probe.hip, compiled to AMD code objects). The includer defines
// QVET_GLOBAL (the kernel qualifier), QVET_DEVICE (a device function), QVET_NOW() (the device's
// clock) and QVET_FENCE() (a system-scope fence), and may define QVET_SPIN() (run in every spin
// loop). The simulated back end (devices/sim/backend.cpp) does the same steps; the stand-in drivers
// (tests/fake_drivers/) compile this very kernel for the CPU.
//
// One thread. Its descriptor (devices/plan.h, Probe) lists the cells it stamps and the cells
// whose stamps it records at its start and at its end. In order: read the clock (start); record
// the start reads; spin until `word` holds at least `value` (a spin wait: unsigned, at `width`);
// spin for `duration` ns; stamp its writes; record the end reads; read the clock (end); log both
// times, last, so that a logged end means the probe finished. `hz` (ticks per second) converts clock ticks to ns
// (0: the clock counts ns); `shift` (the device clock's lead over the host's, measured before each run)
// is subtracted from the logged times, so that every device logs on the host's clock.
#pragma once

#ifndef QVET_SPIN
#define QVET_SPIN()  // a GPU thread just spins; the CPU stand-in drivers yield here (tests/fake_drivers/)
#endif

typedef unsigned int qvet_u32;
typedef unsigned long long qvet_u64;

static QVET_DEVICE qvet_u64 qvet_ns(qvet_u64 ticks, qvet_u64 hz) {
  return hz ? ticks / hz * 1000000000ull + ticks % hz * 1000000000ull / hz : ticks;
}

static QVET_DEVICE qvet_u32 qvet_record(const qvet_u32* desc, qvet_u32 i,
                                                                volatile qvet_u32* cells, volatile qvet_u32* seen) {
  qvet_u32 n = desc[i++];
  for (qvet_u32 k = 0; k < n; ++k, i += 3)
    for (qvet_u32 c = desc[i]; c < desc[i + 1]; ++c) seen[desc[i + 2] + c - desc[i]] = cells[c];
  return i;
}

extern "C" QVET_GLOBAL void qvet_probe(qvet_u64* times, qvet_u32 slot, qvet_u32 stamp, qvet_u64 duration,
                                       qvet_u32* cells_, const qvet_u32* desc, qvet_u32 d, qvet_u32* seen_,
                                       qvet_u64* word_, qvet_u64 value, qvet_u32 width, qvet_u64 hz,
                                       qvet_u64 shift) {
  volatile qvet_u32* cells = cells_;
  volatile qvet_u32* seen = seen_;
  volatile qvet_u64* word = word_;
  qvet_u64 t0 = qvet_ns(QVET_NOW(), hz);
  qvet_u32 nw = desc[d];
  qvet_u32 i = qvet_record(desc, d + 1 + 2 * nw, cells, seen);
  if (word) {
    qvet_u64 mask = width >= 64 ? ~0ull : (1ull << width) - 1;
    while ((*word & mask) < value) {
      QVET_SPIN();
    }
  }
  qvet_u64 now = qvet_ns(QVET_NOW(), hz);
  while (now - t0 < duration) {
    QVET_SPIN();
    now = qvet_ns(QVET_NOW(), hz);
  }
  for (qvet_u32 k = 0, j = d + 1; k < nw; ++k, j += 2)
    for (qvet_u32 c = desc[j]; c < desc[j + 1]; ++c) cells[c] = stamp;
  QVET_FENCE();
  qvet_record(desc, i, cells, seen);
  qvet_u64 t1 = qvet_ns(QVET_NOW(), hz);
  QVET_FENCE();
  ((volatile qvet_u64*)times)[2 * slot] = t0 - shift;
  ((volatile qvet_u64*)times)[2 * slot + 1] = t1 - shift;
  QVET_FENCE();
}
