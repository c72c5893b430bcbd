#include "smt/solver.h"

#include <z3++.h>

#include <functional>

namespace qvet::smt {

struct Solver::Impl {
  const Program& p;
  z3::context ctx;
  z3::solver s;
  std::vector<std::optional<z3::expr>> vars;  // per Program var; params only
  size_t queries = 0;

  Impl(const Program& prog, unsigned timeout_ms) : p(prog), s(ctx) {
    z3::params ps(ctx);
    ps.set("timeout", timeout_ms);
    s.set(ps);
    for (size_t v = 0; v < p.vars.size(); ++v) {
      if (p.vars[v].kind != Var::Param) {
        vars.emplace_back();
        continue;
      }
      z3::expr x = ctx.int_const(p.vars[v].name.c_str());
      vars.emplace_back(x);
      s.add(x >= ctx.int_val(uint64_t(p.vars[v].range.lo)));
      s.add(x <= ctx.int_val(uint64_t(p.vars[v].range.hi)));
    }
  }

  z3::expr num(i128 v) { return ctx.int_val(i128_to_string(v).c_str()); }

  z3::expr term(const Expr& e, const std::vector<i128>& base) {
    z3::expr r = num(e.constant);
    for (auto& [v, c] : e.terms) r = r + num(c) * (vars[v] ? *vars[v] : num(v < base.size() ? base[v] : 0));
    return r;
  }
  z3::expr atom(const Atom& a, const std::vector<i128>& base, bool truth) {
    z3::expr x = term(a.a, base), y = term(a.b, base);
    if (a.width < 64) {
      z3::expr m = num(i128(1) << a.width);
      x = z3::mod(x, m), y = z3::mod(y, m);
    }
    z3::expr f = a.op == Atom::Ge ? x >= y : x == y;
    return truth ? f : !f;
  }
  std::vector<i128> model(const std::vector<i128>& base) {
    z3::model m = s.get_model();
    std::vector<i128> b = base;
    for (size_t v = 0; v < vars.size(); ++v) {
      if (!vars[v]) continue;
      z3::expr val = m.eval(*vars[v], true);
      std::string str = val.get_decimal_string(0);
      i128 x = 0;
      bool neg = !str.empty() && str[0] == '-';
      for (char ch : str)
        if (ch >= '0' && ch <= '9') x = x * 10 + (ch - '0');
      b[v] = neg ? -x : x;
    }
    return b;
  }
  z3::check_result check() {
    ++queries;
    return s.check();
  }
};

Solver::Solver(const Program& p, unsigned timeout_ms) : impl_(std::make_unique<Impl>(p, timeout_ms)) {}
Solver::~Solver() = default;

Cover Solver::cover(const std::vector<Atom>& atoms, const std::vector<i128>& base, size_t limit,
                    const std::vector<Atom>& assume) {
  Cover out;
  Impl& im = *impl_;
  size_t queries_before = im.queries;
  im.s.push();
  for (auto& a : assume) im.s.add(im.atom(a, base, true));
  // Depth-first over atoms; a branch is explored only if the region so far is non-empty.
  std::function<void(size_t)> go = [&](size_t k) {
    if (out.bindings.size() >= limit) {
      out.complete = false;
      return;
    }
    if (k == atoms.size()) {  // the caller just found this region satisfiable
      out.bindings.push_back(im.model(base));
      return;
    }
    for (bool truth : {true, false}) {
      im.s.push();
      im.s.add(im.atom(atoms[k], base, truth));
      z3::check_result r = im.check();
      if (r == z3::unknown) out.complete = false;
      if (r == z3::sat) go(k + 1);
      im.s.pop();
      if (out.bindings.size() >= limit) {
        out.complete = false;
        return;
      }
    }
  };
  if (im.check() == z3::sat) go(0);
  im.s.pop();
  out.queries = im.queries - queries_before;
  return out;
}

std::string describe_binding(const Program& p, const std::vector<i128>& b) {
  std::string s;
  for (size_t v = 0; v < p.vars.size(); ++v)
    if (p.vars[v].kind == Var::Param) s += (s.empty() ? "" : ", ") + p.vars[v].name + " = " + format_int(b[v]);
  return s;
}

}  // namespace qvet::smt
