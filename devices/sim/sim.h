// The simulator: an operational, discrete-event machine that executes a Trace the way
// semantics.md describes the hardware, under a schedule drawn from a seed.
//
// It is a second reading of semantics.md, written on purpose apart from the happens-before
// engine (model/engine.*): it shares the IR, the Trace and the profile facts (widths, modes), and
// never the ordering rules. Front ends fetch their queue's commands in order; engines run them
// for a drawn duration; waits poll a word at their width; a chained exec's (at most two)
// releases fire at its end, other signals are WFI releases; barriers and memory barriers hold the
// front end; 32-bit writes keep the word's high half; the host thread runs its statements in
// order and submits into queue rings. Memory carries version tags (observed.h): a write stamps
// its bytes with its writer when it ends; a read records the stamps it sees at its start and end.
//
// A run ends when nothing can move: everything ran, or the waits left pending are a hang.
// Cost per run is O((commands + accesses) log) plus the overlaps found; memory is linear.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "devices/observed.h"
#include "devices/schedule.h"
#include "model/trace.h"

namespace qvet {

enum class Policy : uint8_t {
  Random,  // durations and latencies drawn per (operation, engine) and per command (jitter)
  Pct,     // probabilistic concurrency testing: agent priorities with d - 1 change points
  Delay,   // random, plus: one predicted race per run, its first access stretched over the other
  Witness, // SimOptions::replay: every event at the time a schedule gives it (devices/schedule.h)
};
const char* policy_name(Policy p);
bool parse_policy(const std::string& s, Policy& p);

struct SimOptions {
  Policy policy = Policy::Random;
  uint64_t seed = 1;
  int pct_depth = 3;         // PCT's d: the bug depth searched for (d - 1 change points per run)
  bool record_seen = false;  // keep every read's versions in ObservedRun::seen (compare needs them)
  // Delay: the predicted races to make happen, one per run in turn (both directions).
  std::vector<std::pair<EventRef, EventRef>> delay_pairs;
  // Witness: the schedule to replay. Events start and end no earlier than it says; the machine's
  // own rules still hold, so a schedule they do not allow is not replayed (schedule.h `replayed`).
  const Schedule* replay = nullptr;
};

// The event each access of `t` belongs to (a command or a host statement).
std::vector<EventRef> access_owners(const Trace& t);

class Simulator {
 public:
  explicit Simulator(const Trace& t);
  // Run number `index` (0, 1, ...) of the schedule family `o`: deterministic in (o.seed, index).
  ObservedRun run(const SimOptions& o, uint64_t index) const;

 private:
  const Trace& t_;
  std::vector<uint64_t> init_;  // per signal, its initial word
};

}  // namespace qvet
