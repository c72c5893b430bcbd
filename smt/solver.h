// The SMT layer: the only place Z3 is visible (the way Alive2 keeps Z3 behind smt/).
//
// Everything qvet asks a solver is about affine integer expressions over a program's params
// (core/expr.h) under the params' constraints: which combinations of comparison outcomes are
// possible, and a binding that witnesses each one. Values are value types (Expr in, i128 out);
// Z3 objects never leave this folder. Not thread-safe: one Solver per thread.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir.h"

namespace qvet::smt {

// `a >= b` (Ge) or `a == b` (Eq), compared at `width` bits: a 32-bit wait compares low dwords,
// so both sides are taken modulo 2^32 (64: as they are).
struct Atom {
  Expr a, b;
  enum Op : uint8_t { Ge, Eq } op = Ge;
  int width = 64;
};

struct Cover {
  std::vector<std::vector<i128>> bindings;  // one binding (value per Program var) per region
  bool complete = true;   // false: the region limit or a time limit was reached
  size_t queries = 0;
};

class Solver {
 public:
  // Declares every param of `p` as an integer in [0, 2^64) under its constraints.
  Solver(const Program& p, unsigned timeout_ms);
  ~Solver();
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  // Splits the admissible param space by the truth of each atom and returns one binding per
  // non-empty region (at most `limit`). Variables that are not params keep `base`'s values.
  // `assume`: atoms that hold everywhere (not split on).
  Cover cover(const std::vector<Atom>& atoms, const std::vector<i128>& base, size_t limit,
              const std::vector<Atom>& assume = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "tv = 0, k = 2^31" for the params of a binding.
std::string describe_binding(const Program& p, const std::vector<i128>& binding);

}  // namespace qvet::smt
