// Replay: one run of a Plan on a Backend, read back into an ObservedRun that devices/compare.h
// checks like a simulated run.
//
// The host side runs here, in plan order: it enqueues device calls, waits on words by polling,
// writes words, stamps and reads cells, and marks the time of every host statement. A watchdog
// bounds every wait: a host wait that outlives `timeout_ns`, and, once the host is done, device
// waits still pending after it, are released by writing the value they need from the host, so a
// GPU is never left hung; each is reported as a hang.
//
// From the log: a command's times are its probe's (exec, copy, timestamp, barrier, spin waits) or,
// for API waits and signals, the mark after it (ObservedRun::untimed); overlaps are conflicting
// accesses whose logged intervals intersect; reads' versions are the stamps their probes recorded.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "devices/backend.h"
#include "devices/observed.h"
#include "devices/plan.h"

namespace qvet {

struct ReplayOptions {
  uint64_t timeout_ns = 2'000'000'000;  // on the back end's clock
  uint64_t poll_ns = 2'000;             // how long the host lets the devices run between polls
};

struct ReplayRun {
  ObservedRun run;
  std::vector<std::string> notes;  // what the watchdog did
  std::string error;               // the back end failed: the run tells nothing
};

ReplayRun replay(const Trace& t, const Plan& plan, Backend& b, uint64_t seed, const ReplayOptions& o);

}  // namespace qvet
