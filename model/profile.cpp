#include "model/profile.h"

namespace qvet {

const char* mode_name(Mode m) { return m == Mode::Serial ? "serial" : m == Mode::Overlap ? "overlap" : "chained"; }

const Profile& profile_of(Arch a) {
  // nv: QMD chaining on compute, non-pipelined DMA, 64-bit host-class semaphores (copy release 32-bit).
  static const Profile nv{Mode::Chained, Mode::Serial, 64, 64, 64, 32, false, true};
  // amd: CS partial flush after each dispatch, SDMA; WAIT_REG_MEM/POLL_REGMEM/RELEASE_MEM are 32-bit.
  static const Profile amd{Mode::Serial, Mode::Serial, 32, 32, 32, 32, true, false};
  static const Profile strict{Mode::Serial, Mode::Serial, 64, 64, 64, 64, false, false};
  return a == Arch::Nv ? nv : a == Arch::Amd ? amd : strict;
}

Mode queue_mode(const Program& p, uint32_t queue) {
  const Queue& q = p.queues[queue];
  switch (q.ordering) {
    case Ordering::Serial: return Mode::Serial;
    case Ordering::Overlap: return Mode::Overlap;
    case Ordering::Chained: return Mode::Chained;
    case Ordering::Default: break;
  }
  const Profile& pr = profile_of(p.devices[q.device].arch);
  return q.engine == EngineKind::Compute ? pr.compute_mode : pr.copy_mode;
}

int wait_width(const Program& p, uint32_t queue) {
  const Queue& q = p.queues[queue];
  const Profile& pr = profile_of(p.devices[q.device].arch);
  return q.engine == EngineKind::Compute ? pr.wait_width_compute : pr.wait_width_copy;
}

bool circular_waits(const Program& p, uint32_t queue) {
  return profile_of(p.devices[p.queues[queue].device].arch).circular_waits;
}

int signal_width(const Program& p, uint32_t queue) {
  const Queue& q = p.queues[queue];
  const Profile& pr = profile_of(p.devices[q.device].arch);
  return q.engine == EngineKind::Compute ? pr.signal_width_compute : pr.signal_width_copy;
}

}  // namespace qvet
