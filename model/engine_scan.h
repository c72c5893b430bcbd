// Engine::Scan: one candidates() call (the wait, what its start knows, the tests both passes ask),
// shared by the files of the indexed rule (engine_candidates.cpp, engine_mixed.cpp). Private to the engine.
#pragma once
#include <algorithm>

#include "model/engine.h"

namespace qvet {

// One candidates() call: the wait, what its start knows, and the tests both passes ask.
struct Engine::Scan {
  const Engine& e;
  EventRef w;
  const WaitCond& cond;
  const Clock& start;
  bool after_wait;
  const std::vector<SignalWrite>& ws;
  bool match(uint32_t i) const { return cond.met_by(ws[i].value); }
  bool known_write(uint32_t i) const { return e.known(start, ws[i].event); }
  // after_wait (refine): writes that ran after the wait ended are no candidates. They are a
  // suffix of the agent's writes (on a chained queue too: a later release ends after an earlier
  // one's exec or with it); the scans still skip any of them.
  bool after(uint32_t i) const { return after_wait && ends_after(e.t_, *ws[i].end, w, e.settle_after_); }
  const std::vector<size_t>* limits = nullptr;  // per writer: how many writes had run (an unlisted wait, listed later)
  size_t limit(const AgentWrites& aw) const {
    if (limits) return (*limits)[size_t(&aw - e.by_agent_[cond.signal].data())];
    if (!after_wait) return aw.processed;
    return size_t(std::partition_point(aw.idx.begin(), aw.idx.begin() + long(aw.processed), [&](uint32_t i) { return !after(i); }) -
                  aw.idx.begin());
  }
  // A known candidate is overwritten when a known lower write comes after it.
  bool overwritten(uint32_t c, const LowerKnown& lower) const {
    for (uint32_t d : lower.writes)
      if (d != c && e.known(*ws[d].end, ws[c].event)) return true;
    for (const Clock& j : lower.joins())
      if (e.known(j, ws[c].event)) return true;
    return false;
  }
};

}  // namespace qvet
