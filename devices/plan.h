// A replay plan: a Trace lowered to the calls a GPU API makes (devices/backend.h), in the order
// the host makes them. Planning is a pure function of the Trace and PlanOptions; every back end
// (cuda, hip, sim) executes the same plan, and devices/replay.h reads what the probes logged back
// into an ObservedRun.
//
// How queues become streams (docs/replay.md has the reasons):
// - a `serial` queue is one stream: a stream runs its work in order.
// - an `overlap` or `chained` queue is a pool of lane streams for exec and copy, a control stream
//   for what blocks its front end (wait, barrier, memory_barrier, and chained WFI signals), and a
//   release stream for overlap signals and timestamps; events join them where the semantics
//   orders them. A chained exec runs on the lane of the exec it chains to, and its (at most two)
//   release signals right after it there: CUDA and HIP expose neither QMD chaining nor release
//   slots, so this is their ordering rebuilt from streams, not the hardware's mechanism.
// - an exec is one probe kernel: it logs its start and end time, records the stamps its reads
//   see at its start and at its end, spins for its drawn duration, and stamps its writes with its
//   id. A copy is an API copy bracketed by two zero-length probes. Every other command is followed
//   by a zero-length mark probe, so the run knows it got past it.
// - memory is stamp cells: each base buffer is cut at every access bound, one 32-bit cell per piece.
// - a wait uses the API's wait (`>=`, which CUDA compares as a signed difference) when every
//   value the word can hold is within half the range of each threshold, so that the signed
//   comparison gives the unsigned answer; otherwise a spin probe compares unsigned. (HIP
//   documents an unsigned compare; the rule costs it nothing but a spin.)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/trace.h"

namespace qvet {

struct PlanOptions {
  uint32_t lanes = 3;                  // lane streams per overlap queue
  uint64_t seed = 1;                   // exec durations are drawn from (seed, command)
  uint64_t min_ns = 2'000, max_ns = 40'000;
};

// A probe kernel launch: 1 thread. Descriptor at Layout::desc[desc]:
//   nw, (lo, hi) * nw        cells it stamps with `stamp` after spinning
//   ns, (lo, hi, seen) * ns  cells whose stamps it records into seen[seen..] at its start
//   ne, (lo, hi, seen) * ne  ... and at its end
struct Probe {
  uint32_t slot;          // it logs its start and end time at times[2 * slot], times[2 * slot + 1]
  uint32_t stamp;         // the Version code of its writes
  uint64_t duration = 0;  // ns it spins
  uint32_t desc = 0;
  uint32_t word = kNone;  // spin-wait: first spin until word (low `width` bits) >= value, unsigned
  uint64_t value = 0;
  uint8_t width = 64;
};

struct Call {
  enum class Op : uint8_t {
    Probe,       // stream: probes[a]
    CopyCells,   // stream: the API copy of cells [a, a + b) into the scratch cells
    WaitValue,   // stream: until word a, at `width`, >= value (the API's wait)
    WriteValue,  // stream: word a = value at `width` (32: the low half, the high half kept)
    Record,      // stream: event a
    WaitEvent,   // stream: later work waits event a
    HostWait,    // host statement b: until word a >= value (the watchdog bounds it)
    HostWrite,   // host statement b: word a = value
    HostStamp,   // host statement b: cells [desc ranges of probes[a]] = its stamp
    HostSee,     // host statement b: records the cells of probes[a]'s start reads
    HostMark,    // host statement b ran (submit, free, alloc)
  };
  Op op;
  uint8_t width = 64;
  uint32_t stream = kNone;
  uint32_t a = 0, b = 0;
  uint64_t value = 0;
};

// What a plan needs allocated, the same on every back end.
struct Layout {
  std::vector<uint32_t> stream_device;  // per stream: the logical device (Program::devices index)
  uint32_t devices = 0;
  uint32_t words = 0;                   // one 64-bit signal word per signal
  uint32_t cells = 0, scratch = 0;      // 32-bit stamp cells; scratch cells copies write into
  uint32_t slots = 0;                   // time slots (two 64-bit times each)
  uint32_t seen = 0;                    // 32-bit seen entries
  uint32_t events = 0;
  std::vector<uint32_t> desc;           // probe descriptors
};

// How each command maps back from the log.
struct CmdSlots {
  uint32_t start = kNone, end = kNone;  // time slots: its start is times[2*start], its end times[2*end+1]
  bool timed = false;                   // the times are its own (a probe's), not a mark's after it
};

struct ReadSlots {  // per read access: where its cells' stamps were recorded
  uint32_t cell_lo = 0, cell_hi = 0;
  uint32_t at_start = kNone, at_end = kNone;  // seen offsets (kNone: not recorded then)
};

struct Plan {
  Layout layout;
  std::vector<Probe> probes;
  std::vector<Call> calls;  // in host order
  std::vector<CmdSlots> cmd;
  std::vector<uint32_t> host_slot;       // per host statement: its mark slot
  std::vector<ReadSlots> reads;          // per access (reads only)
  std::vector<uint64_t> word_init;       // per signal
  std::vector<uint8_t> spin;             // per signal: waits on it spin (their values span the wrap)
  std::vector<uint32_t> cell_buffer;     // per cell: its base buffer
  std::vector<uint64_t> cell_lo;         // per cell: its first byte (cell_lo[c + 1] ends it within a buffer)
  std::vector<uint64_t> cell_hi;
  std::vector<uint32_t> queue_streams;   // per queue: its first stream (overlap: lanes, control, release)
};

// Throws InputError (an implementation limit) when the program needs more than kMaxReplayEntries
// cells, seen entries, log slots, descriptor words and calls in all.
constexpr size_t kMaxReplayEntries = 16'000'000;
Plan make_plan(const Trace& t, const PlanOptions& o);

// An exec's drawn duration: from (o.seed, its command id), in [o.min_ns, o.max_ns].
uint64_t exec_duration(const PlanOptions& o, uint32_t cmd);
// Another run of the same plan: only the execs' durations change with the seed, so a plan is made
// once and its durations redrawn per run.
void redraw_durations(Plan& p, const Trace& t, const PlanOptions& o);

// The plan as text, one call per line (golden tests, `qvet run --plan`).
std::string describe(const Plan& p, const Trace& t);

}  // namespace qvet
