// Affine integer expressions over symbolic variables (params, loop variables, command-list
// parameters): constant + sum(coef * var). Evaluated exactly over the integers: the parser keeps
// every expression's magnitude within kValueLimit (an input error beyond it), which leaves the
// 128-bit arithmetic here room for the sums and differences that checking builds from them.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace qvet {

using i128 = __int128;
constexpr i128 kU64Max = (i128(1) << 64) - 1;
// The largest magnitude an expression may reach (for any admissible value of its variables).
constexpr i128 kValueLimit = i128(1) << 124;

// Exact within 128 bits; a result beyond them saturates (to +-(2^127 - 1)), which stays beyond
// kValueLimit, so a check of the result against the limit still sees it.
i128 sat_add(i128 a, i128 b);
i128 sat_mul(i128 a, i128 b);
std::string i128_to_string(i128 v);

// Closed interval of integers.
struct Interval {
  i128 lo = 0, hi = 0;
};

struct Expr {
  i128 constant = 0;
  std::vector<std::pair<uint32_t, i128>> terms;  // (variable id, coefficient), sorted, no zero coefficients

  static Expr of(i128 c) { return Expr{c, {}}; }
  static Expr var(uint32_t v) { return Expr{0, {{v, 1}}}; }
  bool is_constant() const { return terms.empty(); }
  Expr operator+(const Expr& o) const;
  Expr operator-(const Expr& o) const;
  Expr scaled(i128 k) const;
  // Replaces variable `v` by expression `e` (used to substitute command-list arguments).
  Expr substitute(uint32_t v, const Expr& e) const;
  friend bool operator==(const Expr&, const Expr&) = default;
};

// Value for a binding: values[var] for every variable the expression uses.
i128 evaluate(const Expr& e, const std::vector<i128>& values);
// Exact range of an affine expression whose variables range independently over `ranges`.
Interval bounds(const Expr& e, const std::vector<Interval>& ranges);
// The largest |value| of any term-by-term partial sum of `e` over `ranges` (saturating): at most
// kValueLimit means every evaluation and bound of `e` is exact.
i128 magnitude(const Expr& e, const std::vector<Interval>& ranges);
// "2*i + tv - 1" using names[var]; constants in canonical form.
std::string to_string(const Expr& e, const std::vector<std::string>& names);
// Canonical text of an integer literal: decimal, or 2^N for large powers of two.
std::string format_int(i128 v);
// "0x1f": addresses and dword offsets in messages (encoded streams, docs/encoded.md).
std::string format_hex(uint64_t v);

}  // namespace qvet
