// Rule `race`: two conflicting accesses (bytes overlap, at least one writes) that no
// happens-before edge orders: neither end(a) -> start(b) nor end(b) -> start(a).
// The explanation names the consumer's nearest wait and why it does not order the producer,
// and the fix: a wait on a signal the producer's queue already writes, or a new signal/wait pair.
#include <algorithm>
#include <map>
#include <unordered_set>

#include "checkers/checker.h"
#include "checkers/shadow.h"
#include "checkers/witness.h"
#include "core/syntax/printer.h"

namespace qvet {

namespace {

class RaceChecker : public Checker {
 public:
  explicit RaceChecker(const CheckContext& c) : Checker(c), shadow_(c.p.buffers.size()), groups_(c) {}

  void on_command(uint32_t id, const Clock& start, const Clock& end) override {
    const TraceCmd& cmd = c_.t.cmds[id];
    access_all({false, id}, cmd.acc_begin, cmd.acc_end, start, end);
  }
  void on_host(uint32_t h, const Clock& k) override {
    const HostEvent& e = c_.t.host[h];
    if (e.op == HostOp::Read || e.op == HostOp::Write) access_all({true, h}, e.acc_begin, e.acc_end, k, k);
  }

 private:
  ShadowMemory shadow_;
  PairGroups groups_;
  std::unordered_set<uint64_t> reported_;  // partners already reported for the current event (Engine::event_key)

  bool same_agent(EventRef a, EventRef b) const {
    return a.host == b.host && (a.host || c_.t.cmds[a.id].queue == c_.t.cmds[b.id].queue);
  }
  // Every earlier access of the bytes that `start` does not know races with this one, if they
  // conflict. An earlier access is dominated by a later one of its own queue when its end is
  // known to the later access's end and the later one conflicts with whatever it conflicts with:
  // every event that races with it races with the later one too, and the later one is later in
  // the queue's order. It moves under the later one (`hidden`), where an event looks only when it
  // races with the later one (and then stops at the first hidden access it knows): nothing is
  // dropped, every racing pair is counted in its group's message, and the lists stay short.
  void access_all(EventRef ev, uint32_t begin, uint32_t end, const Clock& start, const Clock& end_clock) {
    reported_.clear();
    for (uint32_t a = begin; a < end; ++a) {
      const Access& acc = c_.t.accesses[a];
      if (acc.freed_by != kNone) continue;  // use-after-free reports it; the memory may be another buffer's
      // One entry per access, shared by every segment it covers, so that segments it leaves
      // alike merge again (copies at odd offsets would otherwise cut a buffer ever finer).
      ShadowAccess self{ev, a, acc.write, nullptr};
      hidden_keys_.clear();
      shadow_.for_range(acc.buffer, acc.lo, acc.hi, [&](uint64_t lo, ShadowSegment& seg) {
        for (const ShadowAccess& o : seg.writers) visit(o, self, start, lo, seg.hi);
        if (acc.write)
          for (const ShadowAccess& o : seg.readers) visit(o, self, start, lo, seg.hi);
        auto hides = [&](const ShadowAccess& o) { return o.ev == ev || (same_agent(o.ev, ev) && c_.e.known(end_clock, o.ev)); };
        auto take = [&](auto& list) {
          for (auto it = list.begin(); it != list.end();) {
            if (!hides(*it)) {
              ++it;
              continue;
            }
            // The same entry sits in every segment its access covers: hide it once.
            if (!self.hidden) self.hidden.create();
            if (hidden_keys_.insert(uint64_t(it->access)).second) self.hidden->push_back(std::move(*it));
            it = list.erase(it);
          }
        };
        if (acc.write) take(seg.writers);
        take(seg.readers);
        (acc.write ? seg.writers : seg.readers).push_back(self);
      });
      // The list was made when the first entry was hidden (most accesses hide none): the
      // segments before that one get it too, so that all are alike again.
      if (self.hidden)
        shadow_.for_range(acc.buffer, acc.lo, acc.hi, [&](uint64_t, ShadowSegment& seg) {
          (acc.write ? seg.writers : seg.readers).back().hidden = self.hidden;
        });
      shadow_.coalesce(acc.buffer, acc.lo, acc.hi);
    }
  }
  std::unordered_set<uint64_t> hidden_keys_;  // accesses the current access hid (Trace::accesses indices)

  // `root` and what it hides, against the access `x` of the event being processed, on the
  // segment [lo, hi) that `x` covers. A loop, not recursion: what an access hides can be as deep
  // as the program. A hidden entry counts where it touches the segment (an entry hides what it
  // covered anywhere, and a merged segment can be wider than that).
  void visit(const ShadowAccess& root, const ShadowAccess& x, const Clock& start, uint64_t lo, uint64_t hi) {
    std::vector<const ShadowAccess*> todo{&root};
    while (!todo.empty()) {
      const ShadowAccess& o = *todo.back();
      todo.pop_back();
      const Access& oa = c_.t.accesses[o.access];
      if (oa.hi <= lo || hi <= oa.lo) continue;  // elsewhere: what it hid here, it hid where it was
      bool own = o.ev == x.ev;
      if (!own && c_.e.known(start, o.ev)) continue;  // it knows `o`, hence all `o` hides
      if (!o.write && !x.write) continue;           // reads hide only reads
      if (!own) report(o, x, std::max(lo, oa.lo), std::min(hi, oa.hi));
      // What `o` hides races with this access too unless this event knows it (the group's message
      // counts and lists them all): the cost is the number of racing pairs found.
      if (o.hidden)
        for (auto h = o.hidden->rbegin(); h != o.hidden->rend(); ++h) todo.push_back(&*h);  // in list order
    }
  }

  // `first` was processed before `second`.
  void report(const ShadowAccess& first, const ShadowAccess& second, uint64_t lo, uint64_t hi) {
    if (!reported_.insert(Engine::event_key(first.ev)).second) return;
    // Primary: the access submitted later; related: the earlier one.
    ShadowAccess later = second, earlier = first;
    if (c_.e.submit_key(first.ev) > c_.e.submit_key(second.ev)) std::swap(later, earlier);
    Diagnostic* d = groups_.add(later.ev, earlier.ev);
    if (!d) return;
    found_order_[{Engine::event_key(later.ev), Engine::event_key(earlier.ev)}] = {first.ev, second.ev};
    const Access& la = c_.t.accesses[later.access];
    const Access& ea = c_.t.accesses[earlier.access];
    // The kind reads in submission order: the earlier access first.
    std::string kindname = ea.write ? (la.write ? "WAW" : "RAW") : "WAR";
    const Buffer& buf = c_.p.buffers[la.buffer];
    d->set_rule(Rule::Race);
    d->loc = c_.loc(later.ev);
    d->message = kindname + " race on bytes [" + std::to_string(lo) + ", " + std::to_string(hi) + ") of '" + buf.name + "': " +
                 c_.what(later.ev) + " " + (la.write ? "writes" : "reads") + " them while " + c_.what(earlier.ev) +
                 " (line " + std::to_string(c_.loc(earlier.ev).line) + ") may still " + (ea.write ? "write" : "read") + " them";
    d->related.push_back({c_.loc(earlier.ev), "the earlier access: " + c_.what(earlier.ev)});
  }
  // (later, earlier) by Engine::event_key -> the two in processing order (for witnesses)
  std::map<std::pair<uint64_t, uint64_t>, std::pair<EventRef, EventRef>> found_order_;

  // The last wait before `ev` on its queue (or the host's last wait before a host event).
  EventRef nearest_wait(EventRef ev) const {
    const auto& waits = c_.positions(ev.host ? kHostAgent : c_.t.cmds[ev.id].queue, true);
    uint32_t at = ev.host ? ev.id : c_.t.cmds[ev.id].index;
    auto it = std::lower_bound(waits.begin(), waits.end(), at);
    if (it == waits.begin()) return {};
    --it;
    return ev.host ? EventRef{true, *it} : EventRef{false, c_.t.queue_cmds[c_.t.cmds[ev.id].queue][*it]};
  }

  void explain(Diagnostic& d, EventRef producer, EventRef consumer) {
    std::string cq = consumer.host ? "the host" : "queue " + c_.p.queues[c_.t.cmds[consumer.id].queue].name;
    EventRef w = nearest_wait(consumer);
    const WaitResolution* r = w.id != kNone ? c_.e.resolution(w) : nullptr;
    if (!r) {
      d.notes.push_back({{}, "nothing orders them: " + cq + " has no wait before " + c_.what(consumer) +
                                 " that follows " + c_.what(producer)});
    } else {
      const auto& ws = c_.e.writes(r->cond.signal);
      std::string cands;
      for (uint32_t i : r->candidates) cands += (cands.empty() ? "" : ", ") + c_.signal_write_text(ws[i]);
      if (r->initial_candidate) cands = "the initial value " + std::to_string(c_.e.initial_value(r->cond.signal)) + (cands.empty() ? "" : ", " + cands);
      d.notes.push_back({c_.loc(w), "the nearest wait, " + c_.what(w) + ", can be satisfied by " + (cands.empty() ? "nothing" : cands)});
      std::string early;
      if (r->initial_candidate) early = "the initial value " + std::to_string(c_.e.initial_value(r->cond.signal));
      for (uint32_t i : r->candidates)
        if (early.empty() && !c_.e.known(*ws[i].end, producer)) early = c_.signal_write_text(ws[i]);
      if (!early.empty())
        d.notes.push_back({{}, early + " satisfies it without following " + c_.what(producer) + " (a stale wait)"});
    }
  }

 public:
  // Fixes are chosen once every write is known, so a suggested wait is checked against all of them.
  void finish() override {
    size_t witnesses = 0;
    groups_.flush([&](Diagnostic& d, EventRef later, EventRef earlier) {
      explain(d, earlier, later);
      suggest_fix(d, earlier, later);
      if (c_.witness && witnesses++ < kMaxWitnesses) {
        auto [a, b] = found_order_.at({Engine::event_key(later), Engine::event_key(earlier)});
        d.witness = witness_schedule(c_.t, a, b);
        if (d.witness.empty())
          d.notes.push_back({{}, "no witness schedule: the order qvet derives for this pair releases a wait before any "
                                 "write satisfies it (a wait resolved from below, docs/language-notes.md)"});
      }
    });
  }

 private:
  static constexpr size_t kMaxWitnesses = 50;  // each costs a run of the engine

  // The value a wait at `consumer` must reach to see write `w`, written the way the source writes
  // it: a loop variable that also encloses the consumer stays a variable, shifted by the
  // iterations between them (`wait tl >= i - 1`), so the fix holds in every iteration.
  std::string value_for(const SignalWrite& w, EventRef consumer) const {
    const Expr* src = w.event.host ? (c_.t.host[w.event.id].src ? &c_.t.host[w.event.id].src->value : nullptr)
                                   : (c_.t.cmds[w.event.id].src ? &c_.t.cmds[w.event.id].src->value : nullptr);
    // The consumer's wait compares its own width (the low dword on amd): the number it must reach.
    std::string constant = std::to_string(w.value & c_.e.word_mask(consumer.host ? kHostAgent : c_.t.cmds[consumer.id].queue, true));
    if (!src || src->is_constant()) return constant;
    uint32_t wctx = c_.ctx(w.event), cctx = c_.ctx(consumer);
    Expr written = *src;
    if (!w.event.host)  // a command list's parameters are the submit's argument expressions
      if (const Stmt* sub = c_.t.host[c_.t.cmds[w.event.id].submit].src)
        for (auto& [v, arg] : sub->args) written = written.substitute(v, arg);
    Expr e = Expr::of(written.constant);
    for (auto& [v, coef] : written.terms) {
      std::optional<i128> pv = c_.t.value_in(wctx, v), cv = c_.t.value_in(cctx, v);
      const Var& var = c_.p.vars[v];
      if (var.kind == Var::Param) e = e + Expr::var(v).scaled(coef);
      else if (var.kind == Var::Loop && pv && cv) e = e + (Expr::var(v) + Expr::of(*pv - *cv)).scaled(coef);
      else if (pv) e = e + Expr::of(sat_mul(coef, *pv));
      else return constant;
    }
    // A wait that goes into a command list sees the list's parameters, not the loop variables
    // of the submit: `step(k = i)` lets `i` be written `k`.
    if (!consumer.host)
      if (const Stmt* sub = c_.t.host[c_.t.cmds[consumer.id].submit].src; sub && sub->kind == StmtKind::SubmitList) {
        for (auto& [k, arg] : sub->args)
          if (arg.constant == 0 && arg.terms.size() == 1 && arg.terms[0].second == 1)
            e = e.substitute(arg.terms[0].first, Expr::var(k));
        for (auto& [v, coef] : e.terms)
          if (c_.p.vars[v].kind != Var::ListParam && c_.p.vars[v].kind != Var::Param) return constant;
      }
    return to_string(e, c_.p.var_names());
  }

  // The writes that could satisfy `cond` without following `found`: a write that knows `found`
  // knows what `found` follows (the producer) too, so only these can make the wait stale. Many
  // findings share their `found`; a scan of every write of the signal per finding would be
  // quadratic.
  const std::vector<const SignalWrite*>& stale_pool(const SignalWrite& found, const WaitCond& cond) {
    auto [it, fresh] = stale_pools_.try_emplace({&found, cond.threshold, cond.mask});
    if (fresh)
      for (const SignalWrite& w : c_.e.writes(found.signal))
        if (cond.met_by(w.value) && w.processed && !c_.e.known(*w.end, found.event)) it->second.push_back(&w);
    return it->second;
  }
  std::map<std::tuple<const SignalWrite*, uint64_t, uint64_t>, std::vector<const SignalWrite*>> stale_pools_;

  void suggest_fix(Diagnostic& d, EventRef producer, EventRef consumer) {
    std::string where = consumer.host ? "before line " + std::to_string(c_.loc(consumer).line) + " on the host"
                                      : "before line " + std::to_string(c_.loc(consumer).line) + " on queue " +
                                            c_.p.queues[c_.t.cmds[consumer.id].queue].name;
    // A signal the producer's agent already writes after the producer, whose end follows it.
    const SignalWrite* found = c_.write_after(producer);
    if (found && !consumer.host && c_.e.known(*found->end, consumer)) found = nullptr;  // would deadlock
    // The wait must not be satisfiable by a write that does not follow the producer (a stale wait).
    if (found) {
      uint64_t mask = c_.e.word_mask(consumer.host ? kHostAgent : c_.t.cmds[consumer.id].queue, true);
      WaitCond proposed{found->signal, found->value & mask, mask};
      if (proposed.met_by(c_.e.initial_value(found->signal))) found = nullptr;
      else
        for (const SignalWrite* w : stale_pool(*found, proposed))
          if (!c_.e.known(*w->end, producer) && (consumer.host || !c_.e.known(*w->end, consumer))) {
            found = nullptr;
            break;
          }
    }
    Fix f;
    if (found) {
      uint32_t sig = found->signal;
      std::string wait = "wait " + c_.p.signals[sig].name + " >= " + value_for(*found, consumer);
      f.edits.push_back({c_.loc(consumer), false, wait});
      f.description = "add `" + wait + "` " + where + " (" + c_.signal_write_text(*found) + " follows the producer)";
    } else {
      std::string pq = producer.host ? "the host" : "queue " + c_.p.queues[c_.t.cmds[producer.id].queue].name;
      std::string name = "done_" + (producer.host ? std::string("host") : c_.p.queues[c_.t.cmds[producer.id].queue].name);
      auto taken = [&](const std::string& n) {
        return std::any_of(c_.p.signals.begin(), c_.p.signals.end(), [&](const Signal& s) { return s.name == n; });
      };
      std::string fresh = name;
      for (int i = 2; taken(fresh); ++i) fresh = name + std::to_string(i);
      std::string wait = "wait " + fresh + " >= 1";
      f.description = "declare `signal " + fresh + " on host`, add `signal " + fresh + " = 1` after line " +
                      std::to_string(c_.loc(producer).line) + " on " + pq + " and `" + wait + "` " + where;
      // The declaration goes before the first statement that is not a declaration.
      Loc first;
      for (const Stmt& s : c_.p.stmts)
        if (s.kind >= StmtKind::CommandList) {
          first = s.loc;
          break;
        }
      f.edits.push_back({{first.file, first.line, 1}, false, "signal " + fresh + " on host"});
      f.edits.push_back({c_.loc(producer), true, "signal " + fresh + " = 1"});
      f.edits.push_back({c_.loc(consumer), false, wait});
    }
    d.fixes.push_back(f);
    // The other direction: the earlier-submitted command may wait for a signal written after the
    // later access (a kernel recorded before the host fills its input waits for the host's kick).
    if (!producer.host)
      if (const SignalWrite* w = c_.write_after(consumer); w && !c_.e.known(*w->end, producer)) {
        uint32_t sig = w->signal;
        std::string wait = "wait " + c_.p.signals[sig].name + " >= " + value_for(*w, producer);
        d.fixes.push_back({"or add `" + wait + "` before line " + std::to_string(c_.loc(producer).line) + " on queue " +
                               c_.p.queues[c_.t.cmds[producer.id].queue].name + " (" + c_.signal_write_text(*w) +
                               " follows " + c_.what(consumer) + ")",
                           {{c_.loc(producer), false, wait}}});
      }
  }
};

}  // namespace

std::unique_ptr<Checker> make_race_checker(const CheckContext& c) { return std::make_unique<RaceChecker>(c); }

}  // namespace qvet
