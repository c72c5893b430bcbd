#include "model/wait_rule.h"

#include <algorithm>

namespace qvet {

bool parse_engine_mode(const std::string& name, EngineMode& out) {
  if (name == "plain") return out = EngineMode::Plain, true;
  if (name == "indexed") return out = EngineMode::Indexed, true;
  if (name == "checked") return out = EngineMode::Checked, true;
  return false;
}

bool knows_event(const Trace& t, const Clock& k, EventRef e) {
  return e.host ? k.knows_host(e.id) : k.knows(t.cmds[e.id].queue, t.cmds[e.id].index);
}

bool ordered_writer(const Trace& t, uint32_t agent) {
  return ordered_writer(agent, agent == kHostAgent ? Mode::Serial : queue_mode(*t.program, agent));
}

uint64_t listing_key(const Trace& t, const SignalWrite& w) { return listing_key(t, w, ordered_writer(t, w.agent)); }

bool ends_after(const Trace& t, const Clock& end, EventRef wait, const std::vector<EventRef>* also_after) {
  if (knows_event(t, end, wait)) return true;
  if (also_after)
    for (EventRef w : *also_after)
      if (knows_event(t, end, w)) return true;
  return false;
}

WaitAnswer plain_wait(const Trace& t, const std::vector<SignalWrite>& ws, uint64_t initial, const WaitQuery& q) {
  const WaitCond& c = q.cond;
  const size_t n = ws.size();
  // The writes that can matter: those that ran, less those after the wait's end where asked.
  std::vector<uint8_t> live(n), known(n), meets(n);
  for (size_t i = 0; i < n; ++i) {
    live[i] = ws[i].processed && !(q.after_wait && ends_after(t, *ws[i].end, q.wait, q.also_after));
    known[i] = live[i] && knows_event(t, *q.start, ws[i].event);
    meets[i] = c.met_by(ws[i].value);
  }
  auto overwritten = [&](size_t i) {  // some d with i -> d -> start leaves a word below the threshold
    for (size_t d = 0; d < n; ++d)
      if (d != i && known[d] && !meets[d] && knows_event(t, *ws[d].end, ws[i].event)) return true;
    return false;
  };
  WaitAnswer a;
  a.initial = c.met_by(initial) && std::none_of(known.begin(), known.end(), [](uint8_t k) { return k; });
  std::vector<uint32_t> found;
  for (size_t i = 0; i < n; ++i)
    if (live[i] && meets[i] && !overwritten(i)) found.push_back(uint32_t(i));

  list_in_writer_order(t, ws, std::move(found), [&](uint32_t i) { return known[i] != 0; }, a.candidates, a.known);

  a.learned = Clock(&t);
  for (size_t k = 0; k < a.candidates.size() && !a.initial; ++k) {
    if (k == 0) a.learned = *ws[a.candidates[0]].end;
    else a.learned.meet(*ws[a.candidates[k]].end);
  }

  // The latest known write that meets it and that no processed write follows.
  for (size_t i = 0; i < n; ++i) {
    if (!known[i] || !meets[i]) continue;
    bool followed = false;
    for (size_t x = 0; x < n && !followed; ++x) followed = x != i && ws[x].processed && knows_event(t, *ws[x].end, ws[i].event);
    if (!followed && (a.latest_known == kNone || ws[i].rank > ws[a.latest_known].rank)) a.latest_known = uint32_t(i);
  }
  return a;
}

}  // namespace qvet
