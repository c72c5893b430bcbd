#include "verify/verify.h"

#include <chrono>
#include <map>
#include <set>
#include <tuple>

#include "checkers/checker.h"
#include "model/profile.h"
#include "smt/solver.h"

namespace qvet {

namespace {

// Params that bound a `repeat` (they change how many events the program has).
void loop_params(const Program& p, const std::vector<Stmt>& stmts, std::set<uint32_t>& out) {
  for (const Stmt& s : stmts) {
    if (s.kind != StmtKind::Repeat) continue;
    for (const Expr* e : {&s.lo, &s.hi})
      for (auto& [v, c] : e->terms)
        if (p.vars[v].kind == Var::Param) out.insert(v);
    loop_params(p, s.body, out);
  }
}

struct AtomSet {
  explicit AtomSet(const Program& prog, size_t limit) : p(prog), names(prog.var_names()), max(limit) {
    for (auto& v : p.vars) ranges.push_back(v.range);
  }
  const Program& p;
  std::vector<Interval> ranges;
  std::vector<std::string> names;
  std::vector<smt::Atom> atoms;
  std::set<std::pair<int, std::string>> seen;
  size_t dropped = 0, max;

  // Keeps `x op y` at `width` bits unless the params' boxes already decide it.
  void add(const Expr& x, const Expr& y, smt::Atom::Op op, int width = 64) {
    Expr e = x - y;
    if (e.is_constant() && (width == 64 || (x.is_constant() && y.is_constant()))) return;
    Interval bx = bounds(x, ranges), by = bounds(y, ranges), b = bounds(e, ranges);
    i128 lim = i128(1) << width;
    bool plain = width == 64 || (bx.lo >= 0 && bx.hi < lim && by.lo >= 0 && by.hi < lim);
    if (plain) {
      if (op == smt::Atom::Ge && (b.lo >= 0 || b.hi < 0)) return;
      if (op == smt::Atom::Eq && (b.lo > 0 || b.hi < 0 || (b.lo == 0 && b.hi == 0))) return;
    }
    auto key = std::make_pair(int(op) + 2 * width, to_string(x, names) + " ? " + to_string(y, names));
    if (!seen.insert(key).second) return;
    if (atoms.size() >= max) {
      ++dropped;
      return;
    }
    atoms.push_back({x, y, op, plain ? 64 : width});
  }
};

std::vector<smt::Atom> collect_atoms(const Program& p, const Trace& t, size_t max, size_t& dropped) {
  AtomSet a(p, max);
  // Per signal: written values (and the initial value) against thresholds, and against each other.
  std::vector<std::vector<const Expr*>> writes(p.signals.size());
  std::vector<std::vector<std::pair<const Expr*, int>>> waits(p.signals.size());  // threshold, width
  for (size_t s = 0; s < p.signals.size(); ++s) writes[s].push_back(&t.sym_signal_init[s]);
  for (uint32_t c = 0; c < t.cmds.size(); ++c) {
    if (t.cmds[c].op == CmdOp::Signal) writes[t.cmds[c].signal].push_back(&t.sym_cmd_value[c]);
    if (t.cmds[c].op == CmdOp::Wait) waits[t.cmds[c].signal].push_back({&t.sym_cmd_value[c], wait_width(p, t.cmds[c].queue)});
  }
  for (uint32_t h = 0; h < t.host.size(); ++h) {
    if (t.host[h].op == HostOp::Signal) writes[t.host[h].signal].push_back(&t.sym_host_value[h]);
    if (t.host[h].op == HostOp::Wait) waits[t.host[h].signal].push_back({&t.sym_host_value[h], kHostWidth});
  }
  // Widths: a value that fits for some bindings only (value-width).
  for (uint32_t c = 0; c < t.cmds.size(); ++c) {
    CmdOp op = t.cmds[c].op;
    if (op != CmdOp::Signal && op != CmdOp::Wait) continue;
    int w = op == CmdOp::Signal ? signal_width(p, t.cmds[c].queue) : wait_width(p, t.cmds[c].queue);
    a.add(Expr::of((i128(1) << w) - 1), t.sym_cmd_value[c], smt::Atom::Ge);
    a.add(t.sym_cmd_value[c], Expr::of(0), smt::Atom::Ge);
  }
  for (size_t s = 0; s < p.signals.size(); ++s) {
    for (const Expr* w : writes[s])
      for (auto [v, width] : waits[s]) a.add(*w, *v, smt::Atom::Ge, width);
    for (size_t i = 0; i < writes[s].size(); ++i)
      for (size_t j = i + 1; j < writes[s].size(); ++j) a.add(*writes[s][i], *writes[s][j], smt::Atom::Eq);
  }
  // Byte ranges that move with params, against every other range of the same buffer.
  std::map<uint32_t, std::vector<uint32_t>> by_buffer;
  for (uint32_t i = 0; i < t.accesses.size(); ++i) by_buffer[t.accesses[i].buffer].push_back(i);
  for (auto& [buf, list] : by_buffer)
    for (uint32_t i : list) {
      if (t.sym_access_lo[i].is_constant() && t.sym_access_hi[i].is_constant()) continue;
      for (uint32_t j : list) {
        if (i == j) continue;
        a.add(t.sym_access_hi[j], t.sym_access_lo[i] + Expr::of(1), smt::Atom::Ge);
        a.add(t.sym_access_hi[i], t.sym_access_lo[j] + Expr::of(1), smt::Atom::Ge);
      }
    }
  dropped = a.dropped;
  return a.atoms;
}

}  // namespace

VerifyResult verify_program(const Program& p, const VerifyOptions& o) {
  VerifyResult out;
  std::vector<i128> base = bind_params(p, o.fixed);
  std::vector<uint32_t> free_params;
  for (uint32_t v = 0; v < p.vars.size(); ++v)
    if (p.vars[v].kind == Var::Param &&
        std::none_of(o.fixed.begin(), o.fixed.end(), [&](auto& f) { return f.first == p.vars[v].name; }))
      free_params.push_back(v);

  // Shape samples: loop-bound params at their smallest value and a few more iterations.
  std::set<uint32_t> shape;
  loop_params(p, p.stmts, shape);
  for (auto it = shape.begin(); it != shape.end();)
    it = std::find(free_params.begin(), free_params.end(), *it) == free_params.end() ? shape.erase(it) : std::next(it);
  // Every iteration count when there are at most `o.unroll_all` of them; else the smallest few
  // and the largest (when it unrolls within the limit). The smallest and the largest go first:
  // when the budget below runs out, the counts in between are the ones left out.
  std::vector<std::vector<i128>> shapes{base};
  i128 widest = 0;
  for (uint32_t v : shape) widest = std::max(widest, p.vars[v].range.hi - p.vars[v].range.lo);
  bool all_counts = widest < i128(o.unroll_all);
  if (!shape.empty()) {
    std::vector<i128> top = base;
    for (uint32_t v : shape) top[v] = p.vars[v].range.hi;
    try {
      if (!all_counts) elaborate(p, top, 2'000'000);
      if (top != base) shapes.push_back(top);
    } catch (const InputError& e) {
      if (!e.limit) throw;
    }
  }
  i128 steps = all_counts ? widest : i128(o.unroll);
  for (i128 k = 1; k <= steps && !shape.empty(); ++k) {
    std::vector<i128> b = base;
    for (uint32_t v : shape) b[v] = std::min(p.vars[v].range.hi, p.vars[v].range.lo + k);
    if (std::find(shapes.begin(), shapes.end(), b) == shapes.end()) shapes.push_back(b);
  }
  // The total work is budgeted (o.event_budget events elaborated and checked, across counts and
  // regions), so that a wide loop-bound range costs a bounded multiple of one check.
  size_t used = 0, largest = 0, skipped_shapes = 0;

  // key -> (diagnostic, regions where it holds)
  std::map<std::tuple<std::string, Loc, Loc>, std::pair<Diagnostic, std::vector<size_t>>> found;
  std::vector<std::vector<i128>> checked;
  bool complete = true;
  size_t dropped_atoms = 0, queries = 0;
  std::unique_ptr<smt::Solver> solver;
  for (size_t si = 0; si < shapes.size(); ++si) {
    const auto& sb = shapes[si];
    if (si >= 2 && used + largest > o.event_budget) {  // the smallest and the largest count are always checked
      skipped_shapes = shapes.size() - si;
      shapes.resize(si);
      break;
    }
    std::vector<std::vector<i128>> regions{sb};
    bool value_params = free_params.size() > shape.size();
    if (value_params) {
      Trace sym = elaborate(p, sb, kMaxEvents, true);
      size_t dropped = 0;
      std::vector<smt::Atom> atoms = collect_atoms(p, sym, o.max_atoms, dropped);
      dropped_atoms += dropped;
      if (!atoms.empty()) {
        if (!solver) solver = std::make_unique<smt::Solver>(p, o.timeout_ms);
        // Loop-bound params stay at this shape's values while the others range freely.
        std::vector<smt::Atom> fix;
        for (uint32_t v : shape) fix.push_back({Expr::var(v), Expr::of(sb[v]), smt::Atom::Eq, 64});
        smt::Cover c = solver->cover(atoms, sb, o.region_limit, fix);
        queries += c.queries;
        complete &= c.complete;
        if (!c.bindings.empty()) regions = c.bindings;
      }
    }
    for (const auto& b : regions) {
      Trace t = elaborate(p, b);
      if (checked.empty()) out.commands = t.cmds.size(), out.host = t.host.size();
      used += t.cmds.size() + t.host.size();
      largest = std::max(largest, t.cmds.size() + t.host.size());
      size_t id = checked.size();
      checked.push_back(b);
      for (auto& d : check_trace(t, o.rules, o.witness, o.engine).diagnostics) {
        auto key = std::make_tuple(d.rule, d.loc, d.related_loc());
        auto it = found.find(key);
        if (it == found.end()) found.emplace(key, std::make_pair(std::move(d), std::vector<size_t>{id}));
        else it->second.second.push_back(id);
      }
    }
  }
  for (auto& [key, entry] : found) {
    Diagnostic& d = entry.first;
    if (checked.size() > 1 && entry.second.size() < checked.size()) {
      std::vector<bool> holds(checked.size(), false);
      for (size_t id : entry.second) holds[id] = true;
      // The smallest bindings (in param order) with and without it: the simplest to reproduce.
      size_t with = entry.second[0], fails = checked.size();
      for (size_t id = 0; id < checked.size(); ++id) {
        if (holds[id] && checked[id] < checked[with]) with = id;
        if (!holds[id] && (fails == checked.size() || checked[id] < checked[fails])) fails = id;
      }
      d.notes.push_back({{}, "holds for some param values only: with " + smt::describe_binding(p, checked[with]) +
                                 " (not with " + smt::describe_binding(p, checked[fails]) + ")"});
    }
    out.diagnostics.push_back(std::move(d));
  }
  sort_diagnostics(out.diagnostics);
  if (!free_params.empty()) {
    std::string n = std::to_string(checked.size()) + " binding(s) checked, one per region of the param space";
    if (queries) n += " (" + std::to_string(queries) + " solver queries)";
    if (!complete || dropped_atoms) n += ": the region split was cut short, so the verdict is not proved for every value";
    else if (shape.empty()) n += ": the verdict holds for every admissible value";
    else if (free_params.size() > shape.size()) n += ": the verdict holds for every value of the params that are not loop bounds";
    out.notes.push_back(n);
    if (!shape.empty()) {
      std::string names;
      for (uint32_t v : shape) names += (names.empty() ? "" : ", ") + p.vars[v].name;
      if (skipped_shapes)
        out.notes.push_back("loop-bound params (" + names + ") checked for " + std::to_string(shapes.size()) +
                            " iteration counts (the smallest ones and the largest); " + std::to_string(skipped_shapes) +
                            " more would pass the budget of " + std::to_string(o.event_budget) +
                            " events (--event-budget); not proved for those");
      else if (all_counts)
        out.notes.push_back("loop-bound params (" + names + ") checked for every admissible iteration count (" +
                            std::to_string(shapes.size()) + ")");
      else
        out.notes.push_back("loop-bound params (" + names + ") checked by unrolling " + std::to_string(shapes.size()) +
                            " iteration counts (the smallest ones and the largest that unrolls); not proved for the others: "
                            "induction over iterations is not implemented");
    }
  }
  return out;
}

constexpr size_t kStreamBytes = 8u << 20;

bool streamable(const std::string& text) {
  if (text.size() < kStreamBytes) return false;
  size_t i = text.find_first_not_of(" \t\r\n");
  if (i == std::string::npos || text[i] == '{') return false;
  for (size_t b = 0; b < text.size();) {  // any `param` declaration: verify for every value instead
    size_t k = text.find_first_not_of(" \t", b);
    if (k != std::string::npos && text.compare(k, 6, "param ") == 0) return false;
    size_t e = text.find('\n', b);
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return true;
}

bool load_streamed(SourceSet& src, const std::string& file, std::string text, const LoadOptions& opt,
                   std::optional<Program>& keep, Trace& t, std::optional<Diagnostic>& error, double* elaborate_s) {
  Program empty;
  TraceBuilder builder(empty, text.size() / 40);
  StatementSink sink = [&](const Program& p, const Stmt& s) {
    if (s.kind < StmtKind::Submit) return false;  // declarations stay in the program
    auto t0 = std::chrono::steady_clock::now();
    builder.statement(p, s);
    if (elaborate_s) *elaborate_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return true;
  };
  LoadResult r = load_program_text(src, file, std::move(text), &sink, opt);
  if (!r.program) {
    error = std::move(r.error);
    return false;
  }
  keep = std::move(*r.program);
  t = builder.finish(*keep);
  return true;
}

}  // namespace qvet
