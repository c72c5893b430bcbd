#include "model/trace.h"

#include <algorithm>

namespace qvet {

std::string Trace::describe(uint32_t ctx) const {
  std::vector<std::string> parts;
  for (uint32_t c = ctx; c != 0; c = contexts[c].parent)
    parts.push_back(program->vars[contexts[c].var].name + " = " + i128_to_string(contexts[c].value));
  std::string s;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) s += (s.empty() ? "" : ", ") + *it;
  return s;
}

std::vector<i128> bind_params(const Program& p, const std::vector<std::pair<std::string, i128>>& values) {
  std::vector<i128> b(p.vars.size(), 0);
  for (size_t v = 0; v < p.vars.size(); ++v)
    if (p.vars[v].kind == Var::Param) b[v] = p.vars[v].range.lo;
  for (auto& binding : values) {
    const std::string& name = binding.first;
    i128 val = binding.second;
    auto it = std::find_if(p.vars.begin(), p.vars.end(), [&](const Var& v) { return v.kind == Var::Param && v.name == name; });
    if (it == p.vars.end()) throw InputError{{}, "--param names '" + name + "', which is not a param of the program"};
    if (val < it->range.lo || val > it->range.hi)
      throw InputError{it->loc, "--param " + name + " = " + i128_to_string(val) + " is outside the param's constraints"};
    b[it - p.vars.begin()] = val;
  }
  return b;
}

namespace {

class Elaborator {
 public:
  Elaborator(const Program& p, std::vector<i128> binding, size_t max_events, bool symbolic, bool keep_sources = true)
      : p_(&p), max_events_(max_events), symbolic_(symbolic), keep_sources_(keep_sources) {
    t_.program = &p;
    t_.binding = std::move(binding);
    t_.contexts.push_back({});
    grow();
  }

  void reserve(size_t cmds) {
    t_.cmds.reserve(cmds);
    t_.accesses.reserve(cmds * 2);
    t_.host.reserve(cmds / 8);
  }

  // Streaming: the program grows while it is read; tables follow it. `p` is the program as it
  // is now (its vectors may have moved since the last statement).
  void statement(const Program& p, const Stmt& s) {
    p_ = &p;
    grow();
    stmt(s, 0);
  }
  Trace take(const Program& p) {
    p_ = &p;
    t_.program = &p;
    grow();
    return std::move(t_);
  }

  Trace run() {
    if (symbolic_)
      for (auto& g : p_->signals) t_.sym_signal_init.push_back(params_only(g.init));
    Count n;
    std::vector<i128> binding = t_.binding;
    if (const Loc* past = count(p_->stmts, n))
      throw InputError{*past, "program expands to more than " + std::to_string(max_events_) + " events (commands, byte ranges, host statements and loop iterations: an implementation limit)", true};
    t_.binding = std::move(binding);
    t_.cmds.reserve(n.cmds);
    t_.accesses.reserve(n.acc);
    t_.host.reserve(n.host);
    stmts(p_->stmts, 0);
    return std::move(t_);
  }

 private:
  const Program* p_;
  size_t max_events_;
  bool symbolic_;
  bool keep_sources_;  // TraceCmd::src and HostEvent::src point into the program (not when streaming)

  void grow() {
    const Program& p = *p_;
    t_.queue_cmds.resize(p.queues.size());
    if (t_.binding.size() < p.vars.size()) t_.binding.resize(p.vars.size(), 0);
    live_buf_.resize(p.buffers.size(), true);
    live_sig_.resize(p.signals.size(), true);
    freed_buf_.resize(p.buffers.size(), kNone);
    freed_sig_.resize(p.signals.size(), kNone);
    since_alloc_buf_.resize(p.buffers.size());
    since_alloc_sig_.resize(p.signals.size());
  }
  // `e` with every variable that is not a param replaced by its current value.
  Expr params_only(const Expr& e) const {
    Expr r = Expr::of(e.constant);
    for (auto& [v, c] : e.terms)
      r = p_->vars[v].kind == Var::Param ? r + Expr::var(v).scaled(c) : r + Expr::of(sat_mul(c, t_.binding[v]));
    return r;
  }
  Trace t_;
  std::vector<bool> live_buf_, live_sig_;
  std::vector<uint32_t> freed_buf_, freed_sig_;
  // per buffer and signal: commands submitted in its current lifetime
  std::vector<std::vector<uint32_t>> since_alloc_buf_, since_alloc_sig_;

  i128 eval(const Expr& e) { return evaluate(e, t_.binding); }
  size_t steps_ = 0;
  void budget(const Loc& loc, size_t n = 1) {
    if ((steps_ += n) >= max_events_)
      throw InputError{loc, "program expands to more than " + std::to_string(max_events_) + " events (commands, byte ranges, host statements and loop iterations: an implementation limit)", true};
  }
  std::vector<uint32_t>& since_alloc(ObjectRef o) {
    return o.kind == ObjectRef::Buffer ? since_alloc_buf_[o.id] : since_alloc_sig_[o.id];
  }

  void add_access(const Range& r, bool write) {
    i128 off = eval(p_->buffers[r.buffer].base_lo), lo = off + eval(r.lo), hi = off + eval(r.hi);
    uint32_t base = r.base;
    Access a{uint64_t(lo), uint64_t(hi), base, live_buf_[base] ? kNone : freed_buf_[base], write};
    t_.accesses.push_back(a);
    if (symbolic_) {
      Expr off = params_only(p_->buffers[r.buffer].base_lo);
      t_.sym_access_lo.push_back(off + params_only(r.lo));
      t_.sym_access_hi.push_back(off + params_only(r.hi));
    }
  }

  void command(const Command& c, uint32_t queue, uint32_t submit, uint32_t ctx) {
    budget(c.loc, 1 + c.reads.size() + c.writes.size());  // each byte range is an access to check
    TraceCmd tc;
    tc.op = c.op;
    tc.queue = queue;
    tc.index = uint32_t(t_.queue_cmds[queue].size());
    tc.submit = submit;
    tc.loc = c.loc;
    tc.ctx = ctx;
    tc.kernel = c.kernel;
    tc.src = keep_sources_ ? &c : nullptr;
    tc.acc_begin = uint32_t(t_.accesses.size());
    for (auto& r : c.reads) add_access(r, false);
    for (auto& r : c.writes) add_access(r, true);
    tc.acc_end = uint32_t(t_.accesses.size());
    if (c.signal != kNone) {
      tc.signal = c.signal;
      if (!live_sig_[c.signal]) tc.signal_freed_by = freed_sig_[c.signal];
    }
    if (c.op == CmdOp::Wait || c.op == CmdOp::Signal) tc.value = eval(c.value);
    if (symbolic_) t_.sym_cmd_value.push_back(params_only(c.value));
    uint32_t id = uint32_t(t_.cmds.size());
    for (uint32_t a = tc.acc_begin; a < tc.acc_end; ++a)
      if (t_.accesses[a].freed_by == kNone) since_alloc_buf_[t_.accesses[a].buffer].push_back(id);
    if (c.signal != kNone && tc.signal_freed_by == kNone) since_alloc_sig_[c.signal].push_back(id);
    t_.queue_cmds[queue].push_back(id);
    t_.cmds.push_back(tc);
  }

  uint32_t host_event(HostEvent e, const Expr* value = nullptr) {
    budget(e.loc);
    if (symbolic_) t_.sym_host_value.push_back(value ? params_only(*value) : Expr::of(e.value));
    t_.host.push_back(std::move(e));
    return uint32_t(t_.host.size() - 1);
  }

  // Counts what the program expands to, before anything is allocated, taking the steps that
  // `budget` takes in the same order: a program past the limit is refused where `budget` would
  // refuse it, without first reserving room for it. A loop whose body holds no loop counts its
  // iterations by multiplication, so the walk costs at most one step per iteration of a loop
  // that holds a loop. Returns the location of the step past the limit, or null.
  struct Count {
    size_t steps = 0, cmds = 0, acc = 0, host = 0;
  };
  static bool flat(const std::vector<Stmt>& list) {
    return std::none_of(list.begin(), list.end(), [](const Stmt& s) { return s.kind == StmtKind::Repeat; });
  }
  const std::vector<Command>* body_of(const Stmt& s) const {
    return s.kind == StmtKind::Submit ? &s.cmds : s.kind == StmtKind::SubmitList ? &p_->lists[s.id2].body : nullptr;
  }
  const Loc* count(const std::vector<Stmt>& list, Count& n) {
    auto step = [&](const Loc& loc) { return ++n.steps >= max_events_ ? &loc : nullptr; };
    for (const Stmt& s : list) {
      if (s.kind < StmtKind::Submit) continue;  // declarations
      if (s.kind == StmtKind::Repeat) {
        i128 lo = eval(s.lo), hi = eval(s.hi);
        if (hi < lo) continue;
        i128 first = lo;
        if (flat(s.body)) {
          Count one;
          t_.binding[s.id] = lo;
          const Loc* past = count(s.body, one);  // one iteration (its loop step is counted below)
          i128 per = i128(one.steps) + 1, room = i128(max_events_) - i128(n.steps);
          i128 iters = hi - lo + 1;
          if (!past && iters < room && iters * per < room) {
            n.steps += size_t(iters * per), n.cmds += size_t(iters) * one.cmds, n.acc += size_t(iters) * one.acc,
                n.host += size_t(iters) * one.host;
            continue;
          }
          // It crosses the limit: skip the iterations that fit, then walk to the one that crosses.
          i128 whole = std::max<i128>(0, room / per - 1);
          n.steps += size_t(whole * per);
          first = lo + whole;
        }
        for (i128 i = first; i <= hi; ++i) {
          t_.binding[s.id] = i;
          if (const Loc* l = step(s.loc)) return l;
          if (const Loc* l = count(s.body, n)) return l;
        }
        continue;
      }
      if (const Loc* l = step(s.loc)) return l;
      ++n.host;
      if (s.kind == StmtKind::Read || s.kind == StmtKind::Write) ++n.acc;
      if (const std::vector<Command>* body = body_of(s))
        for (const Command& c : *body) {
          if (const Loc* l = step(c.loc)) return l;
          ++n.cmds, n.acc += c.reads.size() + c.writes.size();
          // Each byte range is an access the checkers pair up: it counts like an event.
          if ((n.steps += c.reads.size() + c.writes.size()) >= max_events_) return &c.loc;
        }
    }
    return nullptr;
  }

  void stmts(const std::vector<Stmt>& list, uint32_t ctx) {
    for (const Stmt& s : list) stmt(s, ctx);
  }

  void stmt(const Stmt& s, uint32_t ctx) {
    HostEvent e{};
    e.loc = s.loc;
    e.ctx = ctx;
    e.src = keep_sources_ ? &s : nullptr;
    switch (s.kind) {
      case StmtKind::Submit:
      case StmtKind::SubmitList: {
        e.op = HostOp::Submit;
        e.queue = s.id;
        uint32_t h = host_event(e);
        t_.host[h].cmd_begin = uint32_t(t_.cmds.size());
        if (s.kind == StmtKind::Submit) {
          for (auto& c : s.cmds) command(c, s.id, h, ctx);
        } else {
          uint32_t lctx = ctx;
          for (auto& [v, arg] : s.args) {
            i128 val = eval(arg);
            t_.contexts.push_back({lctx, v, val});
            lctx = uint32_t(t_.contexts.size() - 1);
            t_.binding[v] = val;
          }
          for (auto& c : p_->lists[s.id2].body) command(c, s.id, h, lctx);
        }
        t_.host[h].cmd_end = uint32_t(t_.cmds.size());
        return;
      }
      case StmtKind::Wait:
      case StmtKind::Signal:
        e.op = s.kind == StmtKind::Wait ? HostOp::Wait : HostOp::Signal;
        e.signal = s.id;
        e.value = eval(s.value);
        if (!live_sig_[s.id]) e.signal_freed_by = freed_sig_[s.id];
        host_event(std::move(e), &s.value);
        return;
      case StmtKind::Read:
      case StmtKind::Write:
        e.op = s.kind == StmtKind::Read ? HostOp::Read : HostOp::Write;
        e.acc_begin = uint32_t(t_.accesses.size());
        add_access(s.range, s.kind == StmtKind::Write);
        e.acc_end = uint32_t(t_.accesses.size());
        host_event(std::move(e));
        return;
      case StmtKind::Free:
      case StmtKind::Alloc: {
        bool is_free = s.kind == StmtKind::Free;
        e.op = is_free ? HostOp::Free : HostOp::Alloc;
        e.object = s.object;
        bool buf = s.object.kind == ObjectRef::Buffer;
        auto live = buf ? live_buf_[s.object.id] : live_sig_[s.object.id];
        if (is_free != bool(live)) {
          std::string where = ctx ? " (with " + t_.describe(ctx) + ")" : "";
          throw InputError{s.loc, "'" + p_->object_name(s.object) +
                                      (is_free ? "' is freed but is not live" : "' is allocated but is already live") + where};
        }
        if (is_free) e.inflight = std::move(since_alloc(s.object));
        since_alloc(s.object).clear();
        uint32_t h = host_event(std::move(e));
        (buf ? live_buf_ : live_sig_)[s.object.id] = !is_free;
        (buf ? freed_buf_ : freed_sig_)[s.object.id] = is_free ? h : kNone;
        return;
      }
      case StmtKind::Repeat: {
        i128 lo = eval(s.lo), hi = eval(s.hi);
        for (i128 i = lo; i <= hi; ++i) {
          t_.contexts.push_back({ctx, s.id, i});
          t_.binding[s.id] = i;
          budget(s.loc);
          stmts(s.body, uint32_t(t_.contexts.size() - 1));
        }
        return;
      }
      default: return;  // declarations: static
    }
  }
};

}  // namespace

Trace elaborate(const Program& p, const std::vector<i128>& binding, size_t max_events, bool symbolic) {
  return Elaborator(p, binding, max_events, symbolic).run();
}

struct TraceBuilder::Impl : Elaborator {
  using Elaborator::Elaborator;
};

TraceBuilder::TraceBuilder(const Program& p, size_t reserve_cmds)
    : impl_(std::make_unique<Impl>(p, std::vector<i128>{}, kMaxEvents, false, false)) {
  impl_->reserve(reserve_cmds);
}
TraceBuilder::~TraceBuilder() = default;
void TraceBuilder::statement(const Program& p, const Stmt& s) { impl_->statement(p, s); }
Trace TraceBuilder::finish(const Program& p) { return impl_->take(p); }

}  // namespace qvet
