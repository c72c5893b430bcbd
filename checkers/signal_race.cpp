// Rule `signal-race`: two writes of different values to one signal whose write events are not
// ordered, so which value the signal ends up holding is not determined.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "checkers/checker.h"

namespace qvet {

namespace {

class SignalRaceChecker : public Checker {
 public:
  explicit SignalRaceChecker(const CheckContext& c) : Checker(c), by_agent_(c.p.signals.size()), uniform_(c.p.signals.size()), groups_(c) {}

  void on_command(uint32_t id, const Clock&, const Clock& end) override { write({false, id}, end); }
  void on_host(uint32_t h, const Clock& k) override { write({true, h}, k); }
  void finish() override { groups_.flush(); }

 private:
  // One agent's writes of one signal so far, in its order (which is also their submission order).
  // The partners of a new write are ranges of it (what its clock does not know), so a write costs
  // a few searches per range, not one step per partner: many writes that all race (execs that
  // overlap, each with its release) stay linear.
  struct AgentWrites {
    std::vector<const SignalWrite*> w;
    std::vector<uint32_t> index;      // queue index, or host event id
    std::vector<uint32_t> run_begin;  // first position of the run of equal values holding this one
    std::vector<uint32_t> run_end;    // at a run's first position: one past its last
    std::unordered_map<uint64_t, std::vector<uint32_t>> at_value;  // value -> positions
    std::vector<uint32_t> line, line_begin, line_end;  // the same for source lines (a group's lines)

    void push(const SignalWrite* x, uint32_t i, uint32_t l) {
      uint32_t p = uint32_t(w.size());
      bool joins = p && w.back()->value == x->value;
      w.push_back(x), index.push_back(i);
      run_begin.push_back(joins ? run_begin.back() : p);
      run_end.push_back(p + 1);
      run_end[run_begin.back()] = p + 1;
      at_value[x->value].push_back(p);
      bool same_line = p && line.back() == l;
      line.push_back(l);
      line_begin.push_back(same_line ? line_begin.back() : p);
      line_end.push_back(p + 1);
      line_end[line_begin.back()] = p + 1;
    }
    // Positions in [lo, hi) whose value is not v.
    uint64_t count_other(uint32_t lo, uint32_t hi, uint64_t v) const {
      uint64_t n = hi - lo;
      if (auto it = at_value.find(v); it != at_value.end())
        n -= std::lower_bound(it->second.begin(), it->second.end(), hi) - std::lower_bound(it->second.begin(), it->second.end(), lo);
      return n;
    }
    // The first position >= p (the last < p) whose value is not v; `hi` (kNone) where none is.
    uint32_t next_other(uint32_t p, uint32_t hi, uint64_t v) const {
      if (p < hi && w[p]->value == v) p = run_end[run_begin[p]];
      return std::min(p, hi);
    }
    uint32_t prev_other(uint32_t p, uint32_t lo, uint64_t v) const {
      if (p <= lo) return kNone;
      uint32_t q = p - 1;
      if (w[q]->value == v) q = run_begin[q] == 0 ? kNone : run_begin[q] - 1;
      return q != kNone && q >= lo ? q : kNone;
    }
  };
  std::vector<std::map<uint32_t, AgentWrites>> by_agent_;  // per signal, per agent (queue id or kHostAgent)
  using AgentList = std::map<uint32_t, AgentWrites>::value_type;
  // Per signal, how many writers have written one value only (value -> writers): a write of that
  // value has no partner among them, so when they are all the writers it skips the walk over
  // every writer (one signal written by thousands of queues).
  std::vector<std::unordered_map<uint64_t, uint32_t>> uniform_;
  PairGroups groups_;

  // Whether some earlier write may be a partner of the new one (`false` is exact, `true` a maybe):
  // not when every writer wrote only its value, nor when it knows every earlier write.
  bool may_race(const SignalWrite& w, const Clock& end) const {
    auto u = uniform_[w.signal].find(w.value);
    if (by_agent_[w.signal].size() == (u == uniform_[w.signal].end() ? 0 : u->second)) return false;
    return !c_.e.knows_every_write(w.signal, end);
  }
  // Before `w` joins its writer's list: a new writer of one value, or one that now writes two.
  void count_values(const SignalWrite& w) {
    auto it = by_agent_[w.signal].find(w.agent);
    if (it == by_agent_[w.signal].end()) ++uniform_[w.signal][w.value];
    else if (const auto& vals = it->second.at_value; vals.size() == 1 && !vals.count(w.value)) --uniform_[w.signal][vals.begin()->first];
  }

  // Every earlier write of a different value that the new one does not know is a partner (the
  // two releases of one exec included). Partners submitted before the new write share its group
  // per agent; each one submitted after it is the primary of its own group.
  void write(EventRef ev, const Clock& end) {
    const SignalWrite* w = c_.e.write_of(ev);
    if (!w) return;
    // Only the writers of the writes it does not know, where the engine can tell them cheaply:
    // among many writers, those whose writes it does not know can differ from its value; else all
    // but a few writers' writes known. Not one step per writer.
    std::vector<uint32_t> writers;
    const bool many = c_.e.writers_of_other_values(w->signal, end, w->value, writers);
    bool walk = many ? !writers.empty() : may_race(*w, end);
    count_values(*w);
    uint64_t key = c_.e.submit_key(ev);
    std::vector<AgentList*> lists;
    auto& agents = by_agent_[w->signal];
    if (walk && (many || c_.e.unknown_writers(w->signal, end, writers))) {
      for (uint32_t a : writers)
        if (auto it = agents.find(a); it != agents.end()) lists.push_back(&*it);
    } else if (walk) {
      for (auto& entry : agents) lists.push_back(&entry);
    }
    for (AgentList* each : lists) {
      auto& entry = *each;
      const uint32_t agent = entry.first;  // named, not a structured binding: the lambdas below use them
      AgentWrites& list = entry.second;
      // The positions `end` does not know: the gaps between the ranges it knows.
      std::vector<std::pair<uint32_t, uint32_t>> unknown;
      auto pos = [&](uint64_t i) {
        return uint32_t(std::lower_bound(list.index.begin(), list.index.end(), i) - list.index.begin());
      };
      uint32_t n = uint32_t(list.w.size());
      if (agent == kHostAgent) {
        unknown.push_back({pos(uint64_t(end.host() + 1)), n});
      } else {  // signals do not end at the front end: the clock's known ranges are all it knows of them
        uint32_t lo = 0;
        for (auto [klo, khi] : end.known_ranges(agent)) {
          uint32_t a = pos(klo), b = pos(khi);
          if (a > lo) unknown.push_back({lo, a});
          lo = std::max(lo, b);
        }
        unknown.push_back({lo, n});
      }
      // Submitted before the new write: a prefix of the list.
      uint32_t split = uint32_t(std::partition_point(list.w.begin(), list.w.end(),
                                                     [&](const SignalWrite* o) { return c_.e.submit_key(o->event) < key; }) -
                                list.w.begin());
      uint64_t count = 0;
      uint32_t last = kNone;
      for (auto [lo, hi] : unknown) {
        if (lo >= hi) continue;
        uint32_t mid = std::clamp(split, lo, hi);
        if (uint64_t k = list.count_other(lo, mid, w->value)) {
          count += k;
          last = list.prev_other(mid, lo, w->value);
        }
        for (uint32_t p = list.next_other(mid, hi, w->value); p < hi; p = list.next_other(p + 1, hi, w->value))
          pair(list.w[p]->event, *w);
      }
      if (count) {
        LineSample lines;  // the others' (the related write, `last`, aside), first ones first
        for (auto [lo, hi] : unknown) {
          uint32_t mid = std::clamp(split, lo, hi);
          for (uint32_t p = list.next_other(lo, mid, w->value); p < mid && !lines.full();) {
            uint32_t e = std::min(list.line_end[list.line_begin[p]], mid);  // a stretch on one line
            uint64_t n = list.count_other(p, e, w->value) - (last >= p && last < e ? 1 : 0);
            if (n) lines.add(list.line[p], n);
            p = list.next_other(e, mid, w->value);
          }
        }
        EventRef l = list.w[last]->event;
        if (Diagnostic* d = groups_.add_many(ev, l, count, lines.lines, lines.more(count - 1))) describe(*d, ev, l);
      }
    }
    by_agent_[w->signal][w->agent].push(w, ev.host ? ev.id : c_.t.cmds[ev.id].index, c_.loc(ev).line);
  }

  // `later` (submitted after `earlier`) and `earlier` write different values, unordered.
  void pair(EventRef later, const SignalWrite& earlier) {
    if (Diagnostic* d = groups_.add(later, earlier.event)) describe(*d, later, earlier.event);
  }

  void describe(Diagnostic& d, EventRef later, EventRef earlier) {
    uint32_t sig = c_.e.write_of(later)->signal;
    d.set_rule(Rule::SignalRace);
    d.loc = c_.loc(later);
    // A 32-bit write keeps the word's high half: where that makes the word differ from the value
    // it names, say so (two writes of 0 can write different words).
    auto word = [&](EventRef ev) -> std::string {
      const SignalWrite* w = c_.e.write_of(ev);
      if (!w || !w->narrow || !w->processed || ev.host || uint64_t(c_.t.cmds[ev.id].value) == w->value) return "";
      return "a 32-bit write that keeps the word's high half, so the word becomes " + std::to_string(w->value);
    };
    const std::string lw = word(later), ew_text = word(earlier);
    d.message = c_.what(later) + (lw.empty() ? "" : " (" + lw + ")") + " and " + c_.what(earlier) + " (" +
                c_.line_text(c_.loc(earlier)) + (ew_text.empty() ? "" : "; " + ew_text) + ") write different values to '" +
                c_.p.signals[sig].name + "' and nothing orders them: its final value is not determined";
    d.related.push_back({c_.loc(earlier), "the other write: " + c_.what(earlier)});
    // Order the later write after the earlier one: wait for the earlier value first (the part of
    // the word the later queue's waits compare).
    const SignalWrite* ew = c_.e.write_of(earlier);
    if (ew && !later.host) {
      const uint64_t value = ew->value & c_.e.word_mask(c_.t.cmds[later.id].queue, true);
      std::string wait = "wait " + c_.p.signals[sig].name + " >= " + std::to_string(value);
      d.fixes.push_back({"add `" + wait + "` before " + c_.line_text(c_.loc(later)) + " on queue " +
                             c_.p.queues[c_.t.cmds[later.id].queue].name,
                         {{c_.loc(later), false, wait}}});
    }
  }
};

}  // namespace

std::unique_ptr<Checker> make_signal_race_checker(const CheckContext& c) { return std::make_unique<SignalRaceChecker>(c); }

}  // namespace qvet
