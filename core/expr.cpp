#include "core/expr.h"

#include <algorithm>

namespace qvet {

namespace {
constexpr i128 kSat = ~(i128(1) << 127);  // 2^127 - 1; saturation is symmetric, so negation is safe
i128 saturated(bool negative) { return negative ? -kSat : kSat; }
i128 abs_sat(i128 v) { return v < -kSat ? kSat : v < 0 ? -v : v; }
}  // namespace

i128 sat_add(i128 a, i128 b) {
  i128 r;
  if (__builtin_add_overflow(a, b, &r) || r < -kSat) return saturated(b < 0);
  return r;
}

i128 sat_mul(i128 a, i128 b) {
  i128 r;
  if (__builtin_mul_overflow(a, b, &r) || r < -kSat) return saturated((a < 0) != (b < 0));
  return r;
}

std::string i128_to_string(i128 v) {
  if (v == 0) return "0";
  bool neg = v < 0;
  unsigned __int128 u = neg ? (unsigned __int128)(-v) : (unsigned __int128)v;
  std::string s;
  while (u) s += char('0' + int(u % 10)), u /= 10;
  if (neg) s += '-';
  std::reverse(s.begin(), s.end());
  return s;
}

std::string format_hex(uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  do s += digits[v & 15], v >>= 4;
  while (v);
  std::reverse(s.begin(), s.end());
  return "0x" + s;
}

std::string format_int(i128 v) {
  if (v >= (i128(1) << 64)) {
    // No literal is that wide (language.md): digits in base 2^60, in parentheses so that the
    // text parses back to the same value wherever it stands.
    const i128 base = i128(1) << 60;
    const i128 digits[] = {v / (base * base), v / base % base, v % base};
    const char* scales[] = {"*2^60*2^60", "*2^60", ""};
    std::string s;
    for (int i = 0; i < 3; ++i)
      if (digits[i] != 0) s += (s.empty() ? "" : " + ") + format_int(digits[i]) + scales[i];
    return "(" + s + ")";
  }
  if (v >= (i128(1) << 16) && (v & (v - 1)) == 0) {
    int n = 0;
    while ((i128(1) << n) != v) ++n;
    return "2^" + std::to_string(n);
  }
  return i128_to_string(v);
}

static Expr combine(const Expr& a, const Expr& b, i128 kb) {
  Expr r;
  r.constant = sat_add(a.constant, sat_mul(b.constant, kb));
  size_t i = 0, j = 0;
  while (i < a.terms.size() || j < b.terms.size()) {
    if (j == b.terms.size() || (i < a.terms.size() && a.terms[i].first < b.terms[j].first)) {
      r.terms.push_back(a.terms[i++]);
    } else if (i == a.terms.size() || b.terms[j].first < a.terms[i].first) {
      r.terms.push_back({b.terms[j].first, sat_mul(b.terms[j].second, kb)});
      ++j;
    } else {
      i128 c = sat_add(a.terms[i].second, sat_mul(b.terms[j].second, kb));
      if (c != 0) r.terms.push_back({a.terms[i].first, c});
      ++i, ++j;
    }
  }
  return r;
}

Expr Expr::operator+(const Expr& o) const { return combine(*this, o, 1); }
Expr Expr::operator-(const Expr& o) const { return combine(*this, o, -1); }

Expr Expr::scaled(i128 k) const {
  if (k == 0) return Expr::of(0);
  Expr r{sat_mul(constant, k), {}};
  for (auto& [v, c] : terms) r.terms.push_back({v, sat_mul(c, k)});
  return r;
}

Expr Expr::substitute(uint32_t v, const Expr& e) const {
  Expr r = *this;
  auto it = std::find_if(r.terms.begin(), r.terms.end(), [&](auto& t) { return t.first == v; });
  if (it == r.terms.end()) return r;
  i128 c = it->second;
  r.terms.erase(it);
  return r + e.scaled(c);
}

i128 evaluate(const Expr& e, const std::vector<i128>& values) {
  i128 r = e.constant;
  for (auto& [v, c] : e.terms) r = sat_add(r, sat_mul(c, v < values.size() ? values[v] : 0));
  return r;
}

Interval bounds(const Expr& e, const std::vector<Interval>& ranges) {
  Interval r{e.constant, e.constant};
  for (auto& [v, c] : e.terms) {
    Interval x = v < ranges.size() ? ranges[v] : Interval{0, kU64Max};
    i128 a = sat_mul(c, x.lo), b = sat_mul(c, x.hi);
    r.lo = sat_add(r.lo, std::min(a, b));
    r.hi = sat_add(r.hi, std::max(a, b));
  }
  return r;
}

i128 magnitude(const Expr& e, const std::vector<Interval>& ranges) {
  i128 m = abs_sat(e.constant);
  for (auto& [v, c] : e.terms) {
    Interval x = v < ranges.size() ? ranges[v] : Interval{0, kU64Max};
    m = sat_add(m, sat_mul(abs_sat(c), std::max(abs_sat(x.lo), abs_sat(x.hi))));
  }
  return m;
}

std::string to_string(const Expr& e, const std::vector<std::string>& names) {
  std::string s;
  for (auto& [v, c] : e.terms) {
    i128 mag = c < 0 ? -c : c;
    if (s.empty()) s += c < 0 ? "-" : "";
    else s += c < 0 ? " - " : " + ";
    if (mag != 1) s += format_int(mag) + "*";
    s += v < names.size() ? names[v] : "?";
  }
  if (s.empty()) {
    if (e.constant < 0) return "-" + format_int(-e.constant);
    return format_int(e.constant);
  }
  if (e.constant > 0) s += " + " + format_int(e.constant);
  if (e.constant < 0) s += " - " + format_int(-e.constant);
  return s;
}

}  // namespace qvet
