#include "devices/compare.h"

#include <algorithm>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>

#include "checkers/checker.h"
#include "devices/sim/sim.h"

namespace qvet {

namespace {

// Keeps every event's clocks from the engine's final round.
class Keeper : public EngineObserver {
 public:
  Keeper(std::vector<Clock>& s, std::vector<Clock>& e, std::vector<Clock>& h, std::vector<uint8_t>& cr,
         std::vector<uint8_t>& hr, const Engine& engine, std::set<uint64_t>& high_half)
      : s_(s), e_(e), h_(h), cr_(cr), hr_(hr), engine_(engine), high_half_(high_half) {}
  void on_command(uint32_t id, const Clock& start, const Clock& end) override {
    s_[id] = start;
    e_[id] = end;
    cr_[id] = 1;
  }
  void on_host(uint32_t h, const Clock& k) override {
    h_[h] = k;
    hr_[h] = 1;
  }
  // A 64-bit wait with a 32-bit candidate: its word depends on the high half it keeps.
  void on_wait(const WaitResolution& r) override {
    if (r.cond.mask != ~uint64_t(0) || !engine_.reads_every_word(r.cond.signal)) return;
    for (uint32_t i : r.candidates)
      if (engine_.writes(r.cond.signal)[i].narrow) return void(high_half_.insert(r.wait.key()));
  }

 private:
  std::vector<Clock>&s_, &e_, &h_;
  std::vector<uint8_t>&cr_, &hr_;
  const Engine& engine_;
  std::set<uint64_t>& high_half_;
};


bool knows(const Trace& t, const Clock& k, EventRef a) {
  return a.host ? k.knows_host(a.id) : k.knows(t.cmds[a.id].queue, t.cmds[a.id].index);
}

}  // namespace

Prediction::Prediction(const Trace& t) : t_(t) {
  CheckResult res = check_trace(t);
  diagnostics_ = std::move(res.diagnostics);
  // The checkers saw the engine's last round; running it again with that round's overrides
  // reproduces it, this time keeping every clock.
  bool changed = false;
  Engine e(t, res.engine->refine(changed));
  cmd_start_.resize(t.cmds.size());
  cmd_end_.resize(t.cmds.size());
  host_.resize(t.host.size());
  cmd_ran_.assign(t.cmds.size(), 0);
  host_ran_.assign(t.host.size(), 0);
  Keeper keep(cmd_start_, cmd_end_, host_, cmd_ran_, host_ran_, e, high_half_);
  e.run(keep);

  access_owner_ = access_owners(t);
  std::vector<std::vector<uint32_t>> by_buffer(t.program->buffers.size());
  writes_.resize(t.program->buffers.size());
  for (uint32_t a = 0; a < t.accesses.size(); ++a) {
    by_buffer[t.accesses[a].buffer].push_back(a);
    if (t.accesses[a].write) writes_[t.accesses[a].buffer].push_back(a);
  }

  // The races the relation predicts: every conflicting pair it leaves unordered.
  auto submitted = [&](EventRef e) {
    return e.host ? uint64_t(e.id) << 32 : uint64_t(t.cmds[e.id].submit) << 32 | (e.id - t.host[t.cmds[e.id].submit].cmd_begin + 1);
  };
  std::set<std::pair<uint64_t, uint64_t>> seen;
  for (const auto& list : by_buffer)
    for (size_t i = 0; i < list.size(); ++i)
      for (size_t j = i + 1; j < list.size(); ++j) {
        const Access &x = t.accesses[list[i]], &y = t.accesses[list[j]];
        if (!(x.write || y.write) || x.hi <= y.lo || y.hi <= x.lo) continue;
        if (x.freed_by != kNone || y.freed_by != kNone) continue;
        EventRef a = access_owner_[list[i]], b = access_owner_[list[j]];
        if (a == b || (a.host && b.host) || !ran(a) || !ran(b) || before(a, b) || before(b, a)) continue;
        if (submitted(a) > submitted(b)) std::swap(a, b);
        if (seen.insert({a.key(), b.key()}).second) races_.push_back({a, b});
      }

  // The predicted races per pair of lines (lower first), for the diagnostics' pairs below.
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> races_at;
  for (uint32_t i = 0; i < races_.size(); ++i) {
    uint32_t la = line(races_[i].first), lb = line(races_[i].second);
    races_at[{std::min(la, lb), std::max(la, lb)}].push_back(i);
  }
  for (const TraceCmd& c : t.cmds) line_agents_[c.loc.line].insert(c.queue);
  for (const HostEvent& h : t.host) line_agents_[h.loc.line].insert(kHostAgent);
  for (const Diagnostic& d : diagnostics_) {
    if (d.is(Rule::LostWakeup)) lost_wakeup_lines_.insert(d.loc.line);
    if (d.is(Rule::ValueWidth)) value_width_lines_.insert(d.loc.line);
    if (d.is(Rule::SignalRace)) {
      signal_race_lines_.insert(d.loc.line);
      signal_race_lines_.insert(d.related_loc().line);
    }
    if (!d.is(Rule::Race) && !d.is(Rule::Visibility)) continue;
    Reported& rep = d.is(Rule::Race) ? race_ : visibility_;
    // A group is its primary and the related queue; the same two lines in either order are one
    // diagnostic (diagnostics.md), so a group may be filed under its related line.
    for (uint32_t agent : line_agents_[d.related_loc().line]) rep.groups.insert({d.loc.line, agent});
    for (uint32_t agent : line_agents_[d.loc.line]) rep.groups.insert({d.related_loc().line, agent});
    RaceFinding f{d.loc.line, d.related_loc().line, {}};
    std::vector<uint32_t> lines{f.related_line};
    lines.insert(lines.end(), d.group.lines.begin(), d.group.lines.end());
    if (d.group.cut) rep.any.insert(f.line);
    for (uint32_t l : lines) rep.lines.insert({std::min(f.line, l), std::max(f.line, l)});
    if (!d.is(Rule::Race)) continue;
    for (uint32_t l : lines)
      if (auto it = races_at.find({std::min(f.line, l), std::max(f.line, l)}); it != races_at.end())
        f.pairs.insert(f.pairs.end(), it->second.begin(), it->second.end());
    std::sort(f.pairs.begin(), f.pairs.end());
    f.pairs.erase(std::unique(f.pairs.begin(), f.pairs.end()), f.pairs.end());
    findings_.push_back(std::move(f));
  }
}

bool Prediction::before(EventRef a, EventRef b) const { return knows(t_, start_clock(b), a); }
bool Prediction::before_end(EventRef a, EventRef b) const { return knows(t_, end_clock(b), a); }

bool Prediction::reported(Rule rule, EventRef a, EventRef b) const {
  const Reported& rep = rule == Rule::Race ? race_ : visibility_;
  uint32_t la = line(a), lb = line(b);
  return rep.lines.count({std::min(la, lb), std::max(la, lb)}) || rep.any.count(la) || rep.any.count(lb);
}

bool Prediction::group_reported(Rule rule, EventRef a, EventRef b) const {
  const Reported& rep = rule == Rule::Race ? race_ : visibility_;
  auto agent = [&](EventRef e) { return e.host ? kHostAgent : t_.cmds[e.id].queue; };
  return rep.groups.count({line(a), agent(b)}) || rep.groups.count({line(b), agent(a)});
}

bool Prediction::signal_race_reported(uint32_t s) const {
  for (const TraceCmd& c : t_.cmds)
    if (c.op == CmdOp::Signal && c.signal == s && signal_race_lines_.count(c.loc.line)) return true;
  for (const HostEvent& h : t_.host)
    if (h.op == HostOp::Signal && h.signal == s && signal_race_lines_.count(h.loc.line)) return true;
  return false;
}

Comparison::Comparison(const Prediction& p) : p_(p), t_(p.trace()) {
  pair_seen_.resize(p.races().size());
}

std::string Comparison::what(EventRef e) const {
  return describe_event(t_, e) + " (line " + std::to_string(p_.line(e)) + ")";
}

void Comparison::violate(const std::string& kind, const std::string& message, uint32_t line, uint32_t related, uint64_t run,
                         bool soundness) {
  auto [it, fresh] = violation_index_.insert({{kind, line, related}, violations_.size()});
  if (fresh) violations_.push_back({kind, message, line, related, run, 0, soundness});
  Violation& v = violations_[it->second];
  if (v.last_run != run) ++v.runs, v.last_run = run;
}

size_t Comparison::soundness_violations() const {
  size_t n = 0;
  for (const Violation& v : violations_) n += v.soundness;
  return n;
}

void Comparison::add(const ObservedRun& r, uint64_t run) {
  ++runs_;
  check_edges(r, run);
  check_overlaps(r, run);
  check_seen(r, run);
  check_unacquired(r, run);
  check_hangs(r, run);
  std::vector<uint64_t> hung;
  for (const Hang& h : r.hung) hung.push_back(h.wait.key());
  std::sort(hung.begin(), hung.end());
  auto& finals = finals_[hung];
  finals.resize(r.final_value.size());
  for (size_t s = 0; s < finals.size(); ++s) finals[s].insert(r.final_value[s]);
  const auto& races = p_.races();
  for (size_t i = 0; i < races.size(); ++i) {
    auto [a, b] = races[i];
    if (!r.ran(a) || !r.ran(b) || !r.timed(a) || !r.timed(b)) continue;
    if (r.end(a) <= r.start(b)) pair_seen_[i].ab = true;
    if (r.end(b) <= r.start(a)) pair_seen_[i].ba = true;
  }
}

// Every predicted edge end(a) -> start(b), and end(a) -> end(b), holds in the run's order.
void Comparison::check_edges(const ObservedRun& r, uint64_t run) {
  size_t nq = t_.queue_cmds.size();
  auto device_of_queue = [&](uint32_t q) { return t_.program->queues[q].device; };
  // Per queue: the latest end among its first i commands (kNever once one of them did not end).
  std::vector<std::vector<uint64_t>> latest(nq);
  for (size_t q = 0; q < nq; ++q) {
    latest[q].push_back(0);
    for (uint32_t id : t_.queue_cmds[q])  // an untimed command counts as ended at once, if it ran
      latest[q].push_back(std::max(latest[q].back(), r.timed({false, id}) || r.cmd_end[id] == kNever ? r.cmd_end[id] : 0));
  }
  // Every command the clock knows ended by `at`. Only Clock::knows is asked (how a clock stores
  // what it knows is the engine's business): a queue's commands up to the last of a prefix that
  // all ended by `at` need no question; each later one that had not ended must be unknown.
  auto check = [&](const Clock& k, EventRef b, uint64_t at, const char* which) {
    ++ordering_checks_;
    auto fail = [&](EventRef a) {
      violate("edge", "the engine orders the end of " + what(a) + " before the " + which + " of " + what(b) +
                           ", but the run did not",
               p_.line(b), p_.line(a), run);
    };
    for (uint32_t q = 0; q < nq; ++q) {
      const auto& ids = t_.queue_cmds[q];
      // Another device's times are comparable only up to the skew between the devices' clocks.
      uint64_t at_q = b.host || device_of_queue(q) == device_of_queue(t_.cmds[b.id].queue) ? at : at + r.device_skew;
      size_t ended = size_t(std::upper_bound(latest[q].begin(), latest[q].end(), at_q) - latest[q].begin()) - 1;
      for (size_t i = ended; i < ids.size(); ++i)
        if (r.cmd_end[ids[i]] > at_q && (r.timed({false, ids[i]}) || r.cmd_end[ids[i]] == kNever) && ids[i] != b.id &&
            k.knows(q, uint32_t(i)))
          return fail({false, ids[i]});
    }
    if (k.host() >= 0 && r.host_timed && r.host_order[size_t(k.host())] > at && !(b.host && int64_t(b.id) == k.host()))
      return fail({true, uint32_t(k.host())});
  };
  for (uint32_t id = 0; id < t_.cmds.size(); ++id) {
    EventRef b{false, id};
    if (!p_.ran(b) || r.cmd_start[id] == kNever || !r.timed(b)) continue;
    check(p_.start_clock(b), b, r.cmd_start[id], "start");
    if (r.cmd_end[id] != kNever) check(p_.end_clock(b), b, r.cmd_end[id], "end");
  }
  for (uint32_t h = 0; h < t_.host.size(); ++h)
    if (p_.ran({true, h}) && r.host_order[h] != kNever && r.host_timed) check(p_.start_clock({true, h}), {true, h}, r.host_order[h], "time");
}

void Comparison::check_overlaps(const ObservedRun& r, uint64_t run) {
  std::map<std::pair<uint64_t, uint64_t>, size_t> index;
  const auto& races = p_.races();
  for (size_t i = 0; i < races.size(); ++i) index[{races[i].first.key(), races[i].second.key()}] = i;
  for (const Overlap& o : r.overlaps) {
    EventRef a = p_.owner(o.a), b = p_.owner(o.b);
    uint32_t hi = std::max(p_.line(a), p_.line(b)), lo = std::min(p_.line(a), p_.line(b));
    if (t_.accesses[o.a].freed_by != kNone || t_.accesses[o.b].freed_by != kNone || !p_.ran(a) || !p_.ran(b)) continue;
    if (p_.before(a, b) || p_.before(b, a)) {
      violate("overlap", what(a) + " and " + what(b) + " overlapped, but the engine orders them", hi, lo, run);
    } else if (!p_.reported(Rule::Race, a, b)) {
      unreported(Rule::Race, a, b, what(a) + " and " + what(b) + " overlapped", run);
    }
    auto it = index.find({a.key(), b.key()});
    if (it == index.end()) it = index.find({b.key(), a.key()});
    if (it != index.end()) pair_seen_[it->second].overlapped = true;
  }
}

bool Comparison::freed_write(EventRef w, uint32_t buffer, uint64_t lo, uint64_t hi) const {
  auto [acc, end] = t_.access_span(w);
  for (uint32_t a = acc; a < end; ++a) {
    const Access& x = t_.accesses[a];
    if (x.write && x.buffer == buffer && x.lo < hi && lo < x.hi && x.freed_by != kNone) return true;
  }
  return false;
}

// What each read saw is what the prediction allows: a write ordered before it and not
// overwritten by another ordered one, or a write it races with.
void Comparison::check_seen(const ObservedRun& r, uint64_t run) {
  for (const SeenVersion& s : r.seen) {
    const Access& acc = t_.accesses[s.access];
    EventRef rd = p_.owner(s.access);
    if (acc.freed_by != kNone || !p_.ran(rd)) continue;
    // An ordered write of these bytes that `later_than` (if any) happens before.
    auto overwritten = [&](const EventRef* w) -> std::optional<EventRef> {
      for (uint32_t x : p_.writes_of(acc.buffer)) {
        const Access& wa = t_.accesses[x];
        EventRef e = p_.owner(x);
        if (wa.hi <= s.lo || s.hi <= wa.lo || wa.freed_by != kNone || e == rd || !p_.ran(e)) continue;
        if (w && (e == *w || !p_.before(*w, e))) continue;
        if (p_.before(e, rd)) return e;
      }
      return std::nullopt;
    };
    std::string bytes = " (bytes " + std::to_string(s.lo) + ".." + std::to_string(s.hi) + " of " +
                        t_.program->buffers[acc.buffer].name + ")";
    if (s.version.initial()) {
      if (auto o = overwritten(nullptr))
        violate("stale-read", what(rd) + " saw the initial contents" + bytes + ", though " + what(*o) + " is ordered before it",
                 p_.line(rd), p_.line(*o), run);
      continue;
    }
    EventRef w = s.version.event();
    if (w == rd || !p_.ran(w) || freed_write(w, acc.buffer, s.lo, s.hi)) continue;
    if (p_.before(rd, w)) {
      violate("stale-read", what(rd) + " saw the write of " + what(w) + bytes + ", which the engine orders after it",
               p_.line(rd), p_.line(w), run);
    } else if (!p_.before(w, rd)) {
      if (!p_.reported(Rule::Race, w, rd)) unreported(Rule::Race, w, rd, what(rd) + " saw the write of " + what(w) + bytes + ", unordered", run);
    } else if (auto o = overwritten(&w)) {
      violate("stale-read", what(rd) + " saw the write of " + what(w) + bytes + ", though " + what(*o) +
                                 " overwrote it and is ordered before the read",
               p_.line(rd), p_.line(*o), run);
    }
  }
}

// A race the relation predicts (the pair is unordered) that no diagnostic names: a soundness
// violation, unless the diagnostic of its group exists and only its list of lines leaves it out.
void Comparison::unreported(Rule rule, EventRef a, EventRef b, const std::string& what_happened, uint64_t run) {
  uint32_t hi = std::max(p_.line(a), p_.line(b)), lo = std::min(p_.line(a), p_.line(b));
  std::string id = rule_info(rule).id;
  if (p_.group_reported(rule, a, b))
    violate(id + "-unlisted", what_happened + "; the " + id + " diagnostic of their group does not list the line", hi, lo, run,
            false);
  else
    violate("unreported-" + id, what_happened + ", and no " + id + " diagnostic names them", hi, lo, run);
}

// A read of another agent's write with no acquire between, ordered after it: a visibility
// finding (unordered, it is a race, which check_seen holds to account).
void Comparison::check_unacquired(const ObservedRun& r, uint64_t run) {
  for (const Unacquired& u : r.unacquired) {
    EventRef rd = p_.owner(u.access), w = u.version.event();
    const Access& read = t_.accesses[u.access];
    if (read.freed_by != kNone || !p_.ran(rd) || !p_.ran(w) || !p_.before(w, rd)) continue;
    if (freed_write(w, read.buffer, read.lo, read.hi)) continue;
    if (!p_.reported(Rule::Visibility, rd, w))
      unreported(Rule::Visibility, rd, w, what(rd) + " read the write of " + what(w) + " with no memory_barrier between", run);
  }
}

void Comparison::check_hangs(const ObservedRun& r, uint64_t run) {
  // A write of the wait's signal, with a value that satisfies it, that did not run.
  auto starved = [&](EventRef w) {
    uint32_t s = t_.signal(w);
    uint64_t v = uint64_t(t_.value(w));
    for (uint32_t c = 0; c < t_.cmds.size(); ++c)
      if (t_.cmds[c].op == CmdOp::Signal && t_.cmds[c].signal == s && uint64_t(t_.cmds[c].value) >= v && !r.ran({false, c}))
        return true;
    for (uint32_t h = 0; h < t_.host.size(); ++h)
      if (t_.host[h].op == HostOp::Signal && t_.host[h].signal == s && uint64_t(t_.host[h].value) >= v && !r.ran({true, h}))
        return true;
    return false;
  };
  // A hang the checkers predict: a lost wakeup reported at the wait, a threshold too wide for the
  // wait (value-width: the hardware compares the low bits), or (a wait that hung because a write
  // it needs never ran) behind one that hung so.
  auto predicted = [&](const Hang& h) { return p_.lost_wakeup_reported(h.wait) || p_.value_width_reported(h.wait); };
  bool lost = false;
  for (const Hang& h : r.hung) lost |= p_.ran(h.wait) && predicted(h);
  for (const Hang& h : r.hung) {
    if (!p_.ran(h.wait)) continue;
    if (predicted(h)) {
      if (p_.lost_wakeup_reported(h.wait)) lost_wakeups_seen_.insert(p_.line(h.wait));
      continue;
    }
    if (lost && starved(h.wait)) continue;  // a write it needs never ran behind a lost wakeup
    if (!h.missed && p_.high_half_candidate(h.wait))
      violate("hang-high-half", what(h.wait) + " hung: a 32-bit write that semantics.md counts as a candidate (it may keep a "
              "high half that satisfies it) kept one that does not", p_.line(h.wait), 0, run, false);
    else
      violate("hang", what(h.wait) + (h.missed ? " hung: a value that satisfies it was written and overwritten before it looked, "
                                                 "and no lost-wakeup names it"
                                               : " was still waiting when nothing could move, but the engine says it ends"),
              p_.line(h.wait), 0, run);
  }
  size_t ran_blocked = 0, missing = 0;
  EventRef first_ran{false, kNone}, first_missing{false, kNone};
  auto visit = [&](EventRef e) {
    bool predicted = p_.ran(e), observed = r.ran(e);
    if (!predicted && observed && !ran_blocked++) first_ran = e;
    if (predicted && !observed && !missing++) first_missing = e;
  };
  for (uint32_t c = 0; c < t_.cmds.size(); ++c) visit({false, c});
  for (uint32_t h = 0; h < t_.host.size(); ++h) visit({true, h});
  if (ran_blocked)
    violate("ran-deadlocked", what(first_ran) + " ran (and " + std::to_string(ran_blocked - 1) +
                                   " more), but the engine says a deadlock blocks it",
             p_.line(first_ran), 0, run);
  if (missing && r.hung.empty() && !ran_blocked)
    violate("hang", what(first_missing) + " never ran (and " + std::to_string(missing - 1) + " more), with no wait pending",
             p_.line(first_missing), 0, run);
}

void Comparison::finish() {
  for (const auto& [hung, finals] : finals_)
    for (uint32_t s = 0; s < finals.size(); ++s)
      if (finals[s].size() > 1 && !p_.signal_race_reported(s))
        violate("signal-value", "signal " + t_.program->signals[s].name + " ended with " + std::to_string(finals[s].size()) +
                                   " different values across runs, and no signal-race names its writes",
               t_.program->signals[s].loc.line, 0, 0);
}

std::vector<Comparison::Coverage> Comparison::coverage() const {
  std::vector<Coverage> out;
  for (const auto& f : p_.race_findings()) {
    Coverage c;
    for (uint32_t i : f.pairs) {
      c.overlapped |= pair_seen_[i].overlapped;
      c.both_orders |= pair_seen_[i].ab && pair_seen_[i].ba;
    }
    out.push_back(c);
  }
  return out;
}

std::string Comparison::table(const std::string& file) const {
  std::string s;
  auto cov = coverage();
  size_t manifested = 0;
  for (auto& c : cov) manifested += c.manifested();
  s += file + ": " + std::to_string(runs_) + " run(s): " + std::to_string(soundness_violations()) + " soundness violation(s), " +
       std::to_string(violations_.size() - soundness_violations()) + " other difference(s); " + std::to_string(manifested) +
       " of " + std::to_string(cov.size()) + " predicted race(s) manifested\n";
  for (uint32_t line : p_.lost_wakeup_lines())
    s += "  lost-wakeup " + file + ":" + std::to_string(line) + ": " + (lost_wakeups_seen_.count(line) ? "hung" : "did not manifest") + "\n";
  const auto& fs = p_.race_findings();
  for (size_t i = 0; i < fs.size(); ++i)
    s += "  race " + file + ":" + std::to_string(fs[i].line) + " / line " + std::to_string(fs[i].related_line) + ": " +
         (cov[i].overlapped ? "overlapped" : cov[i].both_orders ? "ran in both orders" : "did not manifest") + "\n";
  for (const Violation& v : violations_)
    s += std::string("  ") + (v.soundness ? "violation" : "difference") + " [" + v.kind + "] " + file + ":" +
         std::to_string(v.line) + ": " + v.message + " (in " + std::to_string(v.runs) + " run(s), first run " +
         std::to_string(v.first_run) + ")\n";
  return s;
}

std::string Comparison::json(const std::string& file) const {
  nlohmann::ordered_json j;
  j["file"] = file;
  j["runs"] = runs_;
  j["soundness_violations"] = soundness_violations();
  j["ordering_checks"] = ordering_checks_;
  j["edge_violations"] = std::count_if(violations_.begin(), violations_.end(), [](const Violation& v) { return v.kind == "edge"; });
  auto& vs = j["violations"] = nlohmann::ordered_json::array();
  for (const Violation& v : violations_)
    vs.push_back({{"kind", v.kind},
                  {"soundness", v.soundness},
                  {"line", v.line},
                  {"related_line", v.related_line},
                  {"runs", v.runs},
                  {"first_run", v.first_run},
                  {"message", v.message}});
  auto cov = coverage();
  auto& rs = j["races"] = nlohmann::ordered_json::array();
  const auto& fs = p_.race_findings();
  for (size_t i = 0; i < fs.size(); ++i)
    rs.push_back({{"line", fs[i].line},
                  {"related_line", fs[i].related_line},
                  {"manifested", cov[i].manifested()},
                  {"overlapped", cov[i].overlapped},
                  {"both_orders", cov[i].both_orders}});
  auto& ls = j["lost_wakeups"] = nlohmann::ordered_json::array();
  for (uint32_t line : p_.lost_wakeup_lines()) ls.push_back({{"line", line}, {"manifested", lost_wakeups_seen_.count(line) > 0}});
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";  // (names need not be UTF-8)
}

}  // namespace qvet
