// Witness schedules for races: one execution the model allows in which the two accesses overlap.
//
// The engine's processing order is a linear extension of happens-before. Moving a's end, and
// everything that happens after it, behind b's start keeps every happens-before edge in order
// (b does not follow a's end, or there would be no race), and makes the two accesses overlap.
#pragma once
#include <vector>

#include "core/diagnostic.h"
#include "model/engine.h"

namespace qvet {

// `a` is the earlier-processed access, `b` the other; both must be device commands or host events
// of `t`. Times are the positions in the schedule. Empty when the engine's order is no execution
// (a wait would end before any write satisfies it: see witness.cpp); no schedule is better than
// one that cannot happen.
std::vector<ScheduleStep> witness_schedule(const Trace& t, EventRef a, EventRef b);

}  // namespace qvet
