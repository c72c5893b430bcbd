// semantics.md's wait rule ("Signals and waits"), written plainly: no index, no cache, no bound.
// This is the reference the engine's indexes are checked against (`qvet check --engine
// checked`), and the whole rule of `--engine plain`.
//
// For a wait W on signal S with threshold v, among the writes of S that ran:
//   - a write c is a candidate when its word meets v, c does not happen after end(W) (asked only
//     where W has ended: `after_wait`), and no write d with c -> d -> start(W) leaves a word
//     below v (d overwrote c before W began);
//   - the initial value is a candidate when it meets v and no write happens before start(W);
//   - end(W) learns the meet of its candidates' ends (nothing, where the initial value is one).
// The engine lists candidates in writer order (a writer's place among the signal's writers; an
// ordered writer's writes in its order, a chained queue's latest first), and of an ordered
// writer (the host, a queue that is not chained: each of its writes follows the one before) only
// its first candidate the wait knows and its first one it does not: its later ones follow those,
// so they add nothing to the meet. The answer below is listed the same way, so the two compare
// entry by entry.
//
// Precondition: each write leaves one word (SignalWrite::value). That holds for every wait but a
// 64-bit wait on a signal whose 32-bit writes may keep different high halves; the engine reads
// those plainly itself (Engine::mixed_candidates, each 32-bit write with every word it may leave).
//
// Cost: O(W^2) clock questions for a signal with W writes that ran. Thread safety: none needed;
// it reads its arguments only.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "model/clock.h"
#include "model/profile.h"
#include "model/signal_log.h"
#include "model/trace.h"

namespace qvet {

// How the engine finds a wait's candidates: the rule alone, the rule through its indexes (the
// default), or both, stopping at the first difference (Engine::mismatch).
enum class EngineMode { Plain, Indexed, Checked };
bool parse_engine_mode(const std::string& name, EngineMode& out);

struct WaitQuery {
  EventRef wait;
  WaitCond cond;
  const Clock* start;       // what the wait knows as it starts
  bool after_wait = false;  // leave out the writes that happen after the wait's end
  // With after_wait: waits whose ends come after this wait's end in the fixed point, beyond what
  // the clocks say (Engine::settle_forced); a write whose end knows one of them comes after too.
  const std::vector<EventRef>* also_after = nullptr;
};

struct WaitAnswer {
  std::vector<uint32_t> candidates;  // indices into the signal's writes, listed as above
  std::vector<bool> known;           // per candidate: it happens before the wait starts
  bool initial = false;              // the initial value is a candidate
  // The last processed write (SignalWrite::rank) that the start knows, that meets the wait, and
  // that no processed write follows: a candidate stale-wait names as the older write; kNone.
  uint32_t latest_known = kNone;
  Clock learned;  // the meet of the candidates' ends; an empty clock where the initial value is one
};

// True when `e` ends before an event that knows `k`.
bool knows_event(const Trace& t, const Clock& k, EventRef e);
// Whether an agent's writes follow each other in its order (the host, every queue but a chained
// one); the engine asks it with the mode it keeps per queue.
inline bool ordered_writer(uint32_t agent, Mode queue_mode) { return agent == kHostAgent || queue_mode != Mode::Chained; }
bool ordered_writer(const Trace& t, uint32_t agent);

// Where a write of a signal stands in the listing order above (its writer's place, then its
// place in its writer's order; a chained queue's latest first).
// `ordered`: ordered_writer of its agent, where the caller keeps it.
inline uint64_t listing_key(const Trace& t, const SignalWrite& w, bool ordered) {
  uint32_t at = w.event.host ? w.event.id : t.cmds[w.event.id].index;
  return uint64_t(w.pos) << 32 | (ordered ? at : ~at);
}
uint64_t listing_key(const Trace& t, const SignalWrite& w);

// Lists the candidates `found` (indices into `ws`) in the listing order, an ordered writer's first
// known and first unknown only, into `out` and `out_known` (`known(i)`: the wait's start knows
// candidate i). The engine's plain readings (this rule, the 32-bit words) list through it.
template <class Known>
void list_in_writer_order(const Trace& t, const std::vector<SignalWrite>& ws, std::vector<uint32_t> found, Known known,
                          std::vector<uint32_t>& out, std::vector<bool>& out_known) {
  std::sort(found.begin(), found.end(), [&](uint32_t x, uint32_t y) { return listing_key(t, ws[x]) < listing_key(t, ws[y]); });
  uint32_t agent = kNone;
  bool known_taken = false, unknown_taken = false;
  for (uint32_t i : found) {
    const bool kn = known(i);
    if (ws[i].agent != agent) agent = ws[i].agent, known_taken = unknown_taken = false;
    bool& taken = kn ? known_taken : unknown_taken;
    if (ordered_writer(t, agent) && taken) continue;  // it follows the one taken
    taken = true;
    out.push_back(i);
    out_known.push_back(kn);
  }
}

// Whether a write that ends at `end` happens after the end of `wait`, or of one of `also_after`
// (WaitQuery::also_after; may be null). The plain rule and the engine's scans both ask it.
bool ends_after(const Trace& t, const Clock& end, EventRef wait, const std::vector<EventRef>* also_after);

// `writes`: every write of the wait's signal (those `processed` have run); `initial`: its initial value.
WaitAnswer plain_wait(const Trace& t, const std::vector<SignalWrite>& writes, uint64_t initial, const WaitQuery& q);

}  // namespace qvet
