// What one execution of a Trace observed, whichever back end produced it (the simulator today,
// replay on a GPU next): when each command started and ended, when each host statement ran,
// which versions of memory each read saw, which conflicting accesses overlapped, which waits
// were still pending when the run stopped, and the final value of every signal.
//
// Times come in two kinds. `order` is the run's total order of events (every start, end and host
// statement gets the next number; a chained exec's releases follow its end): every comparison
// of predicted against observed ordering uses it. `time` is the back end's clock (simulated
// nanoseconds), for traces and timelines only.
#pragma once
#include <cstdint>
#include <vector>

#include "model/engine.h"

namespace qvet {

constexpr uint64_t kNever = UINT64_MAX;  // an event that did not happen in the run

// Which event wrote a byte's current version: a device command, a host `write`, or nobody
// (the contents the buffer had before the program touched it).
struct Version {
  static constexpr uint32_t kInitial = UINT32_MAX;
  uint32_t code = kInitial;  // bit 31: host event; else command id
  static Version of(EventRef e) { return {e.host ? (e.id | 0x80000000u) : e.id}; }
  bool initial() const { return code == kInitial; }
  EventRef event() const { return {(code & 0x80000000u) != 0, code & 0x7fffffffu}; }
  friend bool operator==(const Version&, const Version&) = default;
};

// The versions a read access saw on bytes [lo, hi), at its start or at its end.
struct SeenVersion {
  uint32_t access;  // Trace::accesses index (a read)
  uint64_t lo, hi;
  Version version;
  bool at_end = false;
};

// Two conflicting accesses that were in progress at once (a host access is an instant).
struct Overlap {
  uint32_t a, b;  // Trace::accesses indices; a's event started first
};

// The write that satisfied a wait (for flow arrows); `writer` is kNone-id when the initial value did.
struct Release {
  EventRef wait, writer;
};

// A wait still pending when nothing could move. `missed`: the word held a value that satisfies
// it at some moment before the wait began, and a later write replaced it before it began.
struct Hang {
  EventRef wait;
  bool missed = false;
};

// An exec on a device whose profile needs an acquire (amd) read bytes another agent wrote, with
// no memory_barrier of its queue between that write's end and the read's start: it may have read
// stale cached data (the `visibility` rule).
struct Unacquired {
  uint32_t access;  // the read
  Version version;  // the other agent's write it saw
};

struct ObservedRun {
  std::vector<uint64_t> cmd_start, cmd_end;      // order numbers, per command (kNever: did not happen)
  std::vector<uint64_t> cmd_t0, cmd_t1;          // back-end time, per command
  std::vector<uint64_t> host_order, host_time;   // per host statement
  std::vector<Hang> hung;                        // waits still pending when nothing could move
  std::vector<uint64_t> final_value;             // per signal: the word at the end of the run
  std::vector<Overlap> overlaps;
  std::vector<SeenVersion> seen;                 // every read's versions (when recorded)
  std::vector<Unacquired> unacquired;
  std::vector<Release> releases;
  // Per command: the exec whose end fired it (a chained release ends with its exec), or kNone.
  std::vector<uint32_t> fired_by;
  // Per read access: a fingerprint of the versions it saw (start and end); 0 for writes.
  std::vector<uint64_t> read_digest;
  // Replay on a GPU (devices/replay.h): per command, whether its times are only a mark's after it
  // (waits and signals made by the API, which logs no time): it ran, but its position in `order`
  // is not its own. Empty: every time is exact (the simulator). `host_timed`: host statements'
  // times are on the devices' clock.
  std::vector<uint8_t> untimed;
  bool host_timed = true;
  // Replay on several GPUs: how far two devices' times may be off against each other (each GPU's
  // clock is the host's only as well as calibration measured it); orders and overlaps between
  // commands of different devices count only beyond it. 0: one clock.
  uint64_t device_skew = 0;

  bool timed(EventRef e) const { return e.host ? host_timed : untimed.empty() || !untimed[e.id]; }
  bool ran(EventRef e) const { return e.host ? host_order[e.id] != kNever : cmd_end[e.id] != kNever; }
  uint64_t start(EventRef e) const { return e.host ? host_order[e.id] : cmd_start[e.id]; }
  uint64_t end(EventRef e) const { return e.host ? host_order[e.id] : cmd_end[e.id]; }
};

}  // namespace qvet
