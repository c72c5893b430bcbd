#include "checkers/checker.h"

#include <algorithm>

#include "core/syntax/printer.h"

namespace qvet {

void DiagnosticSink::add(Diagnostic d, uint32_t ctx, Order order) {
  Loc a = d.loc, b = d.related_loc();
  if (b.valid() && b < a) std::swap(a, b);
  auto [it, fresh] = index_.try_emplace(std::make_tuple(d.rule, a, b), entries_.size());
  if (fresh) {
    entries_.push_back({std::move(d), order, {ctx}, 1});
    return;
  }
  Entry& e = entries_[it->second];
  ++e.count;
  if (order < e.order) {
    e.d = std::move(d);
    e.order = order;
  }
  // The first 16 contexts in elaboration order, whatever order the rules file them in.
  auto at = std::lower_bound(e.ctxs.begin(), e.ctxs.end(), ctx);
  if (at != e.ctxs.end() && *at == ctx) return;
  e.ctxs.insert(at, ctx);
  if (e.ctxs.size() > 16) e.ctxs.pop_back();
}

PairGroups::Group& PairGroups::group(EventRef primary, EventRef related, bool& fresh) {
  uint32_t rq = related.host ? kHostAgent : c_.t.cmds[related.id].queue;
  auto [it, inserted] = index_.try_emplace({primary.key(), rq}, groups_.size());
  fresh = inserted;
  if (inserted) groups_.push_back({primary, related, {}, {}, 0, {}, false});
  return groups_[it->second];
}

Diagnostic* PairGroups::record(Group& g, bool fresh, EventRef related) {
  if (fresh) return &g.d;
  if (g.related == related) return nullptr;
  if (queue_order(related) < queue_order(g.related)) {
    g.others.push_back({queue_order(related), c_.loc(related).line});
    return nullptr;
  }
  g.others.push_back({queue_order(g.related), c_.loc(g.related).line});
  g.related = related;
  g.d = Diagnostic{};
  return &g.d;
}

Diagnostic* PairGroups::add(EventRef primary, EventRef related) {
  bool fresh;
  Group& g = group(primary, related, fresh);
  return record(g, fresh, related);
}

Diagnostic* PairGroups::add_many(EventRef primary, EventRef last, uint64_t count, const std::vector<uint32_t>& first_lines,
                                 bool more) {
  if (count == 0) return nullptr;
  bool fresh;
  Group& g = group(primary, last, fresh);
  g.many += count - 1;
  g.many_lines.insert(g.many_lines.end(), first_lines.begin(), first_lines.end());
  g.more_lines |= more;
  return record(g, fresh, last);
}

void PairGroups::flush(const std::function<void(Diagnostic&, EventRef, EventRef)>& complete) {
  for (Group& g : groups_) {
    // An event may have been recorded more than once (one per buffer two commands share).
    std::sort(g.others.begin(), g.others.end());
    g.others.erase(std::unique(g.others.begin(), g.others.end()), g.others.end());
    uint64_t count = g.others.size() + g.many;
    if (count) {
      // diagnostics.md: distinct lines, the first 8 in the related queue's submission order (the
      // counted ones' lines, which add_many gives first-of-their-runs first, after the listed ones).
      std::vector<uint32_t> lines;
      auto add_line = [&](uint32_t l) {
        if (std::find(lines.begin(), lines.end(), l) == lines.end()) lines.push_back(l);
      };
      for (auto& o : g.others) add_line(o.second);
      for (uint32_t l : g.many_lines) add_line(l);
      Diagnostic::Group& dg = g.d.group;
      dg.others = count;
      dg.cut = lines.size() > 8 || g.more_lines;
      dg.lines.assign(lines.begin(), lines.begin() + long(std::min<size_t>(lines.size(), 8)));
      std::string shown;
      for (uint32_t l : dg.lines) shown += (shown.empty() ? "" : ", ") + std::to_string(l);
      if (dg.cut) shown += ", \u2026";
      std::string q = g.related.host ? "the host" : "queue " + c_.p.queues[c_.t.cmds[g.related.id].queue].name;
      g.d.notes.push_back({{}, "the same holds for " + std::to_string(count) + " earlier command(s) of " + q + " (line " + shown +
                                   "); this is the last of them"});
    }
    if (complete) complete(g.d, g.primary, g.related);
    c_.sink.add(std::move(g.d), c_.ctx(g.primary), {c_.e.submit_key(g.primary), c_.e.submit_key(g.related)});
  }
  groups_.clear();
  index_.clear();
}

std::vector<Diagnostic> DiagnosticSink::take() {
  std::vector<Diagnostic> out;
  for (Entry& e : entries_) {
    bool top = e.ctxs.size() == 1 && e.ctxs[0] == 0;
    if (!top) {
      std::string where;
      size_t shown = std::min<size_t>(e.ctxs.size(), 4);
      for (size_t i = 0; i < shown; ++i) where += (i ? "; " : "") + (e.ctxs[i] ? t_.describe(e.ctxs[i]) : std::string("top level"));
      if (e.count > shown) where += "; ... (" + std::to_string(e.count) + " times in all)";
      e.d.notes.push_back({{}, "holds for " + where});
    } else if (e.count > 1) {
      e.d.notes.push_back({{}, "found " + std::to_string(e.count) + " times"});
    }
    out.push_back(std::move(e.d));
  }
  sort_diagnostics(out);
  return out;
}

std::string describe_event(const Trace& t, EventRef ev) {
  const Program& p = *t.program;
  if (ev.host) {
    const HostEvent& h = t.host[ev.id];
    switch (h.op) {
      case HostOp::Read: return "host `read`";
      case HostOp::Write: return "host `write`";
      case HostOp::Wait: return "host `wait " + p.signals[h.signal].name + " >= " + i128_to_string(h.value) + "`";
      case HostOp::Signal: return "host `signal " + p.signals[h.signal].name + " = " + i128_to_string(h.value) + "`";
      case HostOp::Free: return "`free " + p.object_name(h.object) + "`";
      case HostOp::Alloc: return "`alloc " + p.object_name(h.object) + "`";
      case HostOp::Submit: return "`submit " + p.queues[h.queue].name + "`";
    }
  }
  const TraceCmd& c = t.cmds[ev.id];
  std::string s;
  switch (c.op) {
    case CmdOp::Exec: s = "exec " + p.kernels[c.kernel]; break;
    case CmdOp::Wait: s = "wait " + p.signals[c.signal].name + " >= " + i128_to_string(c.value); break;
    case CmdOp::Signal: s = "signal " + p.signals[c.signal].name + " = " + i128_to_string(c.value); break;
    case CmdOp::Timestamp: s = "timestamp " + p.signals[c.signal].name; break;
    default: s = cmd_op_name(c.op);
  }
  return "`" + s + "` on " + p.queues[c.queue].name;
}

std::string CheckContext::signal_write_text(const SignalWrite& w) const {
  return what(w.event) + " (" + line_text(loc(w.event)) + ")";
}

const std::vector<uint32_t>& CheckContext::positions(uint32_t queue_or_host, bool waits) const {
  if (signal_pos_.empty()) {
    size_t n = t.queue_cmds.size() + 1;  // the host last
    signal_pos_.resize(n), wait_pos_.resize(n);
    for (size_t q = 0; q < t.queue_cmds.size(); ++q)
      for (uint32_t i = 0; i < t.queue_cmds[q].size(); ++i) {
        CmdOp op = t.cmds[t.queue_cmds[q][i]].op;
        if (op == CmdOp::Signal) signal_pos_[q].push_back(i);
        if (op == CmdOp::Wait) wait_pos_[q].push_back(i);
      }
    for (uint32_t h = 0; h < t.host.size(); ++h) {
      if (t.host[h].op == HostOp::Signal) signal_pos_[n - 1].push_back(h);
      if (t.host[h].op == HostOp::Wait) wait_pos_[n - 1].push_back(h);
    }
  }
  size_t i = queue_or_host == kHostAgent ? signal_pos_.size() - 1 : queue_or_host;
  return waits ? wait_pos_[i] : signal_pos_[i];
}

const SignalWrite* CheckContext::write_after(EventRef ev) const {
  const auto& sigs = positions(ev.host ? kHostAgent : t.cmds[ev.id].queue, false);
  uint32_t at = ev.host ? ev.id : t.cmds[ev.id].index;
  for (auto it = std::upper_bound(sigs.begin(), sigs.end(), at); it != sigs.end(); ++it) {
    EventRef s = ev.host ? EventRef{true, *it} : EventRef{false, t.queue_cmds[t.cmds[ev.id].queue][*it]};
    const SignalWrite* w = e.write_of(s);
    if (!w || !w->processed) continue;
    if (ev.host || e.known(*w->end, ev)) return w;
  }
  return nullptr;
}

namespace {

class Fanout : public EngineObserver {
 public:
  // `stop_if_forced`: the first round stops feeding the checkers once a wait is forced, since
  // another round will follow (Engine::refine) and only the last one's findings count.
  Fanout(std::vector<std::unique_ptr<Checker>>& cs, const Engine& e, bool stop_if_forced)
      : cs_(cs), e_(e), stop_if_forced_(stop_if_forced) {}
  void on_command(uint32_t id, const Clock& s, const Clock& e) override {
    if (!stopped())
      for (auto& c : cs_) c->on_command(id, s, e);
  }
  void on_host(uint32_t h, const Clock& k) override {
    if (!stopped())
      for (auto& c : cs_) c->on_host(h, k);
  }
  void on_wait(const WaitResolution& r) override {
    if (!stopped())
      for (auto& c : cs_) c->on_wait(r);
  }
  bool stopped() const { return stop_if_forced_ && e_.forced_any(); }

 private:
  std::vector<std::unique_ptr<Checker>>& cs_;
  const Engine& e_;
  bool stop_if_forced_;
};

}  // namespace

CheckResult check_trace(const Trace& t, const std::vector<std::string>& rules, bool witness, EngineMode mode) {
  using Make = std::unique_ptr<Checker> (*)(const CheckContext&);
  const std::pair<Rule, Make> all[] = {
      {Rule::Race, make_race_checker},           {Rule::Deadlock, make_deadlock_checker},
      {Rule::LostWakeup, make_lost_wakeup_checker},
      {Rule::UseAfterFree, make_use_after_free_checker}, {Rule::FreeInFlight, make_free_in_flight_checker},
      {Rule::PeerAccess, make_peer_access_checker}, {Rule::ValueWidth, make_value_width_checker},
      {Rule::Engine, make_engine_checker},       {Rule::Visibility, make_visibility_checker},
      {Rule::SignalRace, make_signal_race_checker}, {Rule::StaleWait, make_stale_wait_checker},
      {Rule::RedundantWait, make_redundant_wait_checker}};
  // The engine reaches the least fixed point in rounds (Engine::refine); the checkers observe
  // the last one. Each round only adds ordering. Most programs need two; a timeline passed
  // from queue to queue needs rounds quadratic in the queues (docs/performance.md). So the
  // rounds are bounded by the work they did (Engine::work, deterministic, unlike time): a
  // few seconds' worth at most, and a round far cheaper than that (a small program) may repeat
  // thousands of times. Reaching the bound is said in a note.
  uint64_t work = 0;
  Engine::Overrides overrides;
  for (int round = 1;; ++round) {
    auto engine = std::make_unique<Engine>(t, std::move(overrides), mode);
    DiagnosticSink sink(t);
    CheckContext ctx{*t.program, t, *engine, sink, witness, {}, {}};
    std::vector<std::unique_ptr<Checker>> cs;
    for (auto& [id, make] : all)
      if (rules.empty() || std::find(rules.begin(), rules.end(), rule_info(id).id) != rules.end()) cs.push_back(make(ctx));
    Fanout fan(cs, *engine, round == 1);
    engine->run(fan);
    if (!engine->mismatch().empty()) throw EngineMismatch(engine->mismatch_at(), engine->mismatch());
    bool changed = false;
    overrides = engine->refine(changed);
    work += engine->work();
    if ((changed && (round < 2 || work < limits::kRoundWork)) || fan.stopped()) continue;
    for (auto& c : cs) c->finish();
    std::vector<Diagnostic> ds = sink.take();
    // semantics.md: an implementation bound never changes a verdict silently.
    Loc file;  // the program's file, no line: the note is about the whole check
    if (!t.host.empty()) file.file = t.host[0].loc.file;
    auto note = [&](const std::string& m) { ds.insert(ds.begin(), Diagnostic{"input", Severity::Note, m, file, {}, {}, {}, {}, {}}); };
    if (changed)
      note("the wait ordering did not reach its fixed point in " + std::to_string(round) +
           " rounds: findings may be too many (never too few)");
    if (engine->stats().bound_reached)
      note("a wait on a chained queue had more writes to look back at than qvet's bound (docs/language-notes.md): "
           "its candidates, and so the findings, may be incomplete");
    if (engine->stats().mixed_bound_reached)
      note("a signal with 32-bit writes and 64-bit writes of other high halves has more writes than qvet's bound (" +
           std::to_string(limits::kMaxMixedWrites) + ") for reading each 32-bit write with every word it may leave "
           "(docs/language-notes.md): each counts with one word, so the findings on its 64-bit waits may be incomplete");
    return {std::move(ds), std::move(engine)};
  }
}

}  // namespace qvet
