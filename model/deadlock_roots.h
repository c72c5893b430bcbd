// Which stuck waits are reported (semantics.md, "Which stuck waits are reported", v3): from the
// engine's least fixed point, the waits that never end, grouped into knots (the strongly
// connected components of "W needs V": what W's queue or the host must pass to reach W, or a
// candidate of W, sits behind stuck wait V), and the knots that are roots: those that stay
// stuck with every stuck wait outside them released. Each root is one `deadlock`; every other
// stuck wait, and every command and host statement that never runs, is counted in the
// first-submitted root it needs, directly or through blocked waits.
//
// How: "needs" is read from the trace's order (a command sits behind the stuck waits before it
// on its queue and the host's stuck waits before its submit; nothing that never runs orders
// anything else), over each writer's last write that may meet the wait: the writes before it
// sit behind fewer waits, and a write overwritten before the wait starts sits behind no wait
// the wait's own place does not. Each knot is asked whether it stays stuck with the others
// released (even one that needs no other: their writes may change what a wait before it
// learns). A cycle's knot is asked as semantics.md says: an engine run with every stuck wait
// outside it released (Engine::Override::release). A single wait's knot is asked from one run
// with every stuck wait released, which lists what each could take: a root when it takes none.
// (The two differ only where the waits released learn less than the wait would have: that run
// released the wait itself too. So a single wait that needs no other and seems to end there is
// asked with a run of its own.)
//
// Cost: one engine run for single waits, one per cycle's knot that needs others and per single
// wait asked again (within
// limits::kRootRerunWork; later ones are asked from the run with all released, a wait ending
// once the knot's waits before it and behind one of its candidates have), and steps linear in
// the stuck waits times the writers of their signals (limits::kRootBudget; past it the engine's
// own grouping stands). Notes say where a bound was reached. Thread safety: reads the engine
// and the trace only.
#pragma once
#include <vector>

#include "model/engine.h"

namespace qvet {

struct DeadlockRoots {
  std::vector<Deadlock> roots;  // one per root knot, its waits in submission order
  bool budget_reached = false;  // then `roots` is the engine's own grouping (Engine::deadlocks)
  bool reruns_reached = false;  // past limits::kRootRerunWork: later cycles asked from one run
};

DeadlockRoots deadlock_roots(const Engine& e);

}  // namespace qvet
