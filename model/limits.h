// Every bound of the check that can change what it reports, in one place: what it bounds, the
// note a check prints where it is reached (semantics.md: a bound never changes a verdict
// silently), and the direction of its error. The thresholds that only choose a representation
// (when a fast path or an index takes over) are not here: they never change an answer
// (`qvet check --engine checked` compares the indexes against the plain rule).
#pragma once
#include <cstddef>
#include <cstdint>

namespace qvet::limits {

// Rounds of the least fixed point (check_trace), in Engine::work steps summed over rounds; at
// least two rounds always run. Note: "the wait ordering did not reach its fixed point in N
// rounds". Error: ordering too weak, so findings may be too many, never too few.
inline constexpr uint64_t kRoundWork = 100'000'000;

// A wait on a chained queue's writes read one by one (no ChainIndex: a write width no profile
// has): how far back it looks, and how many candidates it keeps. Note: "a wait on a chained
// queue had more writes to look back at than qvet's bound". Error: candidates missed, so the
// wait may learn too much: findings may be missed.
inline constexpr size_t kMaxChainedScan = 4096, kMaxChainedCandidates = 1024;

// A signal with 32-bit writes and 64-bit writes of other high halves: past this many writes,
// each 32-bit write counts with one word, not every word it may leave. Note: "... more writes
// than qvet's bound (128) for reading each 32-bit write with every word it may leave". Error:
// candidates missed on its 64-bit waits: findings may be missed.
inline constexpr size_t kMaxMixedWrites = 128;

// Telling deadlock roots (model/deadlock_roots.h): steps over the stuck waits, their signals'
// writers and the waits of each knot. Note: "telling deadlock roots ... ran past qvet's budget".
// Error: grouping only (the engine's own grouping stands); every stuck wait is still reported
// or counted.
inline constexpr uint64_t kRootBudget = 50'000'000;
// ... and the engine runs that ask a cycle's knot whether it is a root: their work (Engine::work)
// in all, at most so much plus so many times the check's own. Note: "asking whether knots of
// stuck waits stay stuck on their own ran past qvet's budget". Error: grouping only, as above
// (a knot that needs no other and seems to end is then reported as a root).
inline constexpr uint64_t kRootRerunWork = 2'000'000, kRootRerunWorkPerRun = 16;

// lost-wakeup's clock questions (plus so many per event). Note: "N waits were not checked for
// lost wakeups". Error: lost wakeups missed at the waits left.
inline constexpr uint64_t kLostWakeupBudget = uint64_t(1) << 25, kLostWakeupBudgetPerEvent = 256;

}  // namespace qvet::limits
