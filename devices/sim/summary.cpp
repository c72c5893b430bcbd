#include "devices/sim/summary.h"

#include "checkers/checker.h"
#include "core/diagnostic.h"
#include "devices/sim/sim.h"

namespace qvet {

namespace {
}  // namespace

SimSummary::SimSummary(const Trace& t) : t_(t), owner_(access_owners(t)) {
  digests_.resize(t.accesses.size());
  writers_.resize(t.accesses.size());
  finals_.resize(t.program->signals.size());
}

void SimSummary::add(const ObservedRun& r) {
  ++runs_;
  std::set<std::pair<uint32_t, uint32_t>> this_run;
  for (const Overlap& o : r.overlaps) {
    EventRef a = owner_[o.a], b = owner_[o.b];
    if (line(a) > line(b)) std::swap(a, b);
    Pair& p = overlaps_[{line(a), line(b)}];
    p.buffers.insert(t_.accesses[o.a].buffer);
    if (!this_run.insert({line(a), line(b)}).second) continue;
    if (!p.runs) p.a = a.key(), p.b = b.key();
    ++p.runs;
  }
  for (uint32_t a = 0; a < t_.accesses.size(); ++a)
    if (!t_.accesses[a].write && r.ran(owner_[a]) && digests_[a].size() < 2) digests_[a].insert(r.read_digest[a]);
  for (const SeenVersion& s : r.seen) writers_[s.access].insert(s.version.code);
  std::map<std::pair<uint32_t, uint32_t>, std::pair<uint64_t, uint64_t>> unacquired;
  for (const Unacquired& u : r.unacquired)
    unacquired[{line(owner_[u.access]), line(u.version.event())}] = {owner_[u.access].key(), u.version.event().key()};
  for (auto& [k, ev] : unacquired) {
    auto& slot = unacquired_[k];
    if (!slot.second) slot.first = ev;
    ++slot.second;
  }
  std::map<uint32_t, uint64_t> hung;
  for (const Hang& h : r.hung) hung[line(h.wait)] = h.wait.key();
  for (auto [l, k] : hung) {
    auto& slot = hangs_[l];
    if (!slot.second) slot.first = k;
    ++slot.second;
  }
  for (size_t s = 0; s < finals_.size(); ++s) ++finals_[s][r.final_value[s]];
}

size_t SimSummary::races() const {
  std::set<uint64_t> reads;  // read events whose versions differed between runs
  for (uint32_t a = 0; a < t_.accesses.size(); ++a)
    if (digests_[a].size() > 1) reads.insert(line(owner_[a]));
  return overlaps_.size() + reads.size();
}

std::string SimSummary::where(EventRef e, const SourceSet& src) const {
  return format_loc(t_.loc(e), src);
}

uint32_t SimSummary::line(EventRef e) const { return t_.loc(e).line; }

std::string SimSummary::text(const SourceSet& src) const {
  std::string s;
  auto line_of = [&](EventRef e) { return std::to_string(line(e)); };
  auto of_runs = [&](size_t n) { return std::to_string(n) + " of " + std::to_string(runs_) + " run(s)"; };
  for (const auto& [k, p] : overlaps_) {
    EventRef a = EventRef::from_key(p.a), b = EventRef::from_key(p.b);
    std::string buffers;
    for (uint32_t buf : p.buffers) buffers += (buffers.empty() ? "" : ", ") + t_.program->buffers[buf].name;
    s += where(b, src) + ": race observed: " + describe_event(t_, b) + " overlapped " + describe_event(t_, a) + " (line " +
         line_of(a) + ") on " + buffers + " in " + of_runs(p.runs) + "\n";
  }
  // Reads that saw different versions in different runs, once per read event.
  std::set<uint64_t> said;
  for (uint32_t a = 0; a < t_.accesses.size(); ++a) {
    if (digests_[a].size() < 2 || !said.insert(line(owner_[a])).second) continue;
    std::string by;
    for (uint32_t code : writers_[a]) {
      Version v{code};
      by += (by.empty() ? "" : ", ") + (v.initial() ? std::string("the initial contents") : "line " + line_of(v.event()));
    }
    s += where(owner_[a], src) + ": race observed: " + describe_event(t_, owner_[a]) + " on buffer " +
         t_.program->buffers[t_.accesses[a].buffer].name + " saw different versions in different runs" +
         (by.empty() ? "" : " (written by " + by + ")") + "\n";
  }
  for (const auto& [k, slot] : unacquired_) {
    EventRef rd = EventRef::from_key(slot.first.first), w = EventRef::from_key(slot.first.second);
    s += where(rd, src) + ": visibility observed: " + describe_event(t_, rd) + " read data of " + describe_event(t_, w) +
         " (line " + line_of(w) + ", another agent) with no memory_barrier of its queue in between, in " + of_runs(slot.second) +
         "\n";
  }
  for (const auto& [l, slot] : hangs_) {
    EventRef w = EventRef::from_key(slot.first);
    s += where(w, src) + ": hang observed: " + describe_event(t_, w) + " was still waiting when nothing could move, in " +
         of_runs(slot.second) + "\n";
  }
  for (size_t sig = 0; sig < finals_.size(); ++sig) {
    s += "signal " + t_.program->signals[sig].name + ": final value";
    bool first = true;
    for (const auto& [v, n] : finals_[sig]) {
      s += std::string(first ? " " : ", ") + std::to_string(v) + (finals_[sig].size() > 1 ? " (" + of_runs(n) + ")" : "");
      first = false;
    }
    s += "\n";
  }
  return s;
}

}  // namespace qvet
