#include "checkers/witness.h"

#include "checkers/checker.h"

namespace qvet {

namespace {

struct Node {
  EventRef ev;
  int kind;  // 0 start, 1 end, 2 host
  bool after_a;
};

class Recorder : public EngineObserver {
 public:
  Recorder(const Engine& e, EventRef a) : e_(e), a_(a) {}
  void on_command(uint32_t id, const Clock& start, const Clock& end) override {
    order.push_back({{false, id}, 0, e_.known(start, a_)});
    order.push_back({{false, id}, 1, e_.known(end, a_)});
  }
  void on_host(uint32_t h, const Clock& k) override { order.push_back({{true, h}, 2, e_.known(k, a_)}); }
  std::vector<Node> order;

 private:
  const Engine& e_;
  EventRef a_;
};

// Whether every wait of the schedule ends when its signal holds a value that satisfies it
// (semantics.md: a wait "is satisfied once the word holds a value >= v"). The engine's order
// can break that: a wait forced from below (the least fixed point) is processed before the write
// that releases it, and such an order is no execution.
bool waits_hold(const Trace& t, const Engine& e, const std::vector<Node>& seq) {
  std::vector<uint64_t> word(t.program->signals.size());
  std::vector<bool> known(word.size(), true);  // false after a timestamp: its value is a time
  for (size_t s = 0; s < word.size(); ++s) word[s] = e.initial_value(uint32_t(s));
  for (const Node& n : seq) {
    if (n.kind == 0) continue;  // a start
    bool host = n.ev.host;
    uint32_t signal = t.signal(n.ev);
    bool wait = host ? t.host[n.ev.id].op == HostOp::Wait : t.cmds[n.ev.id].op == CmdOp::Wait;
    if (!host && t.cmds[n.ev.id].op == CmdOp::Timestamp) known[signal] = false;
    // (A 32-bit write keeps the high half of the word it lands on in this schedule.)
    if (const SignalWrite* w = e.write_of(n.ev)) word[w->signal] = written_word(word[w->signal], w->value, w->narrow ? 32 : 64), known[w->signal] = true;
    if (!wait || !known[signal]) continue;
    WaitCond cond = wait_cond(t, n.ev);
    i128 v = t.value(n.ev);
    if (v < 0 || v > i128(cond.mask)) continue;  // value-width: its truncated threshold says nothing
    if (!cond.met_by(word[signal])) return false;
  }
  return true;
}

}  // namespace

std::vector<ScheduleStep> witness_schedule(const Trace& t, EventRef a, EventRef b) {
  Engine e(t);
  Recorder rec(e, a);
  e.run(rec);
  // Events that do not follow a's end keep their order, up to b's start; then a's end (for a host
  // statement, the statement itself); then the rest of them; then everything that follows a's end.
  auto is_a_end = [&](const Node& n) { return n.ev == a && n.kind != 0; };
  auto is_b_start = [&](const Node& n) { return n.ev == b && n.kind != 1; };
  std::vector<Node> seq;
  std::vector<Node> a_end, rest;
  bool past_b = false;
  for (auto& n : rec.order) {
    if (n.after_a && !is_a_end(n)) continue;
    if (is_a_end(n)) a_end.push_back(n);
    else (past_b ? rest : seq).push_back(n);
    if (is_b_start(n)) past_b = true;
  }
  seq.insert(seq.end(), a_end.begin(), a_end.end());
  seq.insert(seq.end(), rest.begin(), rest.end());
  for (auto& n : rec.order)
    if (n.after_a && !is_a_end(n)) seq.push_back(n);
  if (!waits_hold(t, e, seq)) return {};
  std::vector<ScheduleStep> out;
  for (size_t i = 0; i < seq.size(); ++i) {
    const Node& n = seq[i];
    ScheduleStep s;
    s.time = i;
    s.event = n.kind == 0 ? "start" : n.kind == 1 ? "end" : "at";
    s.what = describe_event(t, n.ev);
    s.loc = t.loc(n.ev);
    s.racing = n.ev == a || n.ev == b;
    s.host = n.ev.host;
    s.id = n.ev.id;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace qvet
