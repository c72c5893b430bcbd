#include "verify/fix.h"

#include <fcntl.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "core/syntax/parser.h"
#include "model/profile.h"

namespace qvet {

namespace {

bool fixable_rule(const std::string& r) {
  const RuleInfo* info = find_rule(r);
  return info && info->fixable;
}
constexpr int kMaxRounds = 8;  // a round's fixes can reveal findings that the races they remove hid
constexpr size_t kOneByOne = 8;  // findings whose fixes failed together are split in halves down to this many

// ---- the text being repaired --------------------------------------------------------------
// One line: its text, its own line end (kept as it was: CRLF stays CRLF; "" for a last line
// without one), the input line it is (0: added by the repair), the line of the previous text it
// came from (0: new in the last edit) and the applied fix that added it (-1: none).
struct Line {
  std::string text, eol;
  uint32_t origin = 0, from = 0;
  int fix = -1;
};
using Lines = std::vector<Line>;

Lines split_lines(const std::string& text) {
  Lines out;
  for (size_t b = 0; b < text.size();) {
    size_t e = text.find('\n', b);
    Line l;
    l.origin = l.from = uint32_t(out.size() + 1);
    l.text = text.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (e != std::string::npos) l.eol = "\n";
    if (!l.eol.empty() && !l.text.empty() && l.text.back() == '\r') l.text.pop_back(), l.eol = "\r\n";
    out.push_back(std::move(l));
    b = e == std::string::npos ? text.size() : e + 1;
  }
  return out;
}

// The line end that added lines get: the one most input lines have.
std::string usual_eol(const Lines& ls) {
  size_t crlf = std::count_if(ls.begin(), ls.end(), [](const Line& l) { return l.eol == "\r\n"; });
  return crlf * 2 > ls.size() ? "\r\n" : "\n";
}

// A line's text with the line end it has in the joined text (only the last line may lack one).
std::string rendered(const Lines& ls, size_t i, const std::string& eol) {
  return ls[i].text + (ls[i].eol.empty() && i + 1 < ls.size() ? eol : ls[i].eol);
}

std::string join(const Lines& ls, const std::string& eol) {
  std::string out;
  for (size_t i = 0; i < ls.size(); ++i) out += rendered(ls, i, eol);
  return out;
}

std::string indent_of(const std::string& l) { return l.substr(0, std::min(l.size(), l.find_first_not_of(" \t"))); }
std::string trimmed(const std::string& l) {
  size_t b = l.find_first_not_of(" \t"), e = l.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : l.substr(b, e - b + 1);
}

// ---- edits ----------------------------------------------------------------------------------
// A line inserted before or after a line of the current text, or put in its place (its text
// carries its indentation).
struct LineEdit {
  enum Kind : uint8_t { Before, After, Replace };
  uint32_t line = 0;
  Kind kind = Before;
  std::string text;
  int fix = -1;  // the applied fix it belongs to
  friend bool operator==(const LineEdit& a, const LineEdit& b) {
    return a.line == b.line && a.kind == b.kind && a.text == b.text;
  }
};

// `wait NAME >= VALUE` in a line of .hcq text (comment and spacing aside).
struct WaitText {
  std::string signal, value;
};
std::optional<WaitText> parse_wait(const std::string& line) {
  std::string t = trimmed(line.substr(0, line.find('#')));
  if (t.rfind("wait ", 0) != 0) return std::nullopt;
  size_t ge = t.find(">=");
  if (ge == std::string::npos) return std::nullopt;
  WaitText w{trimmed(t.substr(5, ge - 5)), trimmed(t.substr(ge + 2))};
  if (w.signal.empty() || w.value.empty()) return std::nullopt;
  return w;
}
// A decimal constant (the form the checkers write values in), or nothing.
std::optional<i128> decimal(const std::string& s) {
  if (s.empty() || s.size() > 30 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  i128 v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v;
}

// Two fixes raising one wait: the higher threshold serves both.
bool raises_higher(const LineEdit& a, const LineEdit& b) {
  auto wa = parse_wait(a.text), wb = parse_wait(b.text);
  auto va = wa ? decimal(wa->value) : std::nullopt, vb = wb ? decimal(wb->value) : std::nullopt;
  return va && vb && *va > *vb;
}

Lines apply(const Lines& base, const std::vector<LineEdit>& edits, const std::string& eol) {
  std::map<uint32_t, std::vector<const LineEdit*>> before, after;
  std::map<uint32_t, const LineEdit*> replace;
  for (const LineEdit& e : edits) {
    if (e.kind == LineEdit::Replace) {
      auto [it, fresh] = replace.emplace(e.line, &e);
      if (!fresh && raises_higher(e, *it->second)) it->second = &e;
      continue;
    }
    auto& list = (e.kind == LineEdit::After ? after : before)[e.line];
    if (std::none_of(list.begin(), list.end(), [&](const LineEdit* x) { return x->text == e.text; })) list.push_back(&e);
  }
  Lines out;
  auto add = [&](const LineEdit& e, const Line& anchor) { out.push_back({e.text, anchor.eol.empty() ? eol : anchor.eol, 0, 0, e.fix}); };
  for (uint32_t i = 1; i <= base.size(); ++i) {
    const Line& l = base[i - 1];
    for (const LineEdit* e : before[i]) add(*e, l);
    if (auto it = replace.find(i); it != replace.end()) add(*it->second, l);
    else out.push_back({l.text, l.eol, l.origin, i, l.fix});
    for (const LineEdit* e : after[i]) add(*e, l);
  }
  if (!out.empty() && !base.empty() && base.back().eol.empty()) out.back().eol.clear();  // no line end added at the end
  return out;
}

// ---- checking -------------------------------------------------------------------------------
constexpr uint32_t kDeclared = ~0u;  // a name the program declares (not one a fix adds)

struct Checked {
  std::optional<Diagnostic> error;  // the text is not a valid program
  bool ok = false;
  std::vector<Diagnostic> diags;
  std::vector<int> wait_width;  // per line: the width a wait there would have (0: no statement or command)
  std::vector<bool> on_queue;   // per line: a device command (a `barrier` may go there)
  std::map<std::string, uint32_t> names;  // every declared name, to kDeclared (new signal names stay free)
};

void note_lines(const Program& p, const std::vector<Stmt>& stmts, Checked& c) {
  auto note = [&](uint32_t line, int w, bool queue) {
    if (line >= c.wait_width.size()) c.wait_width.resize(line + 1, 0), c.on_queue.resize(line + 1, false);
    c.wait_width[line] = c.wait_width[line] ? std::min(c.wait_width[line], w) : w;
    c.on_queue[line] = queue;
  };
  for (const Stmt& s : stmts) {
    if (s.kind == StmtKind::Repeat) note_lines(p, s.body, c);
    if (s.kind == StmtKind::Submit || s.kind == StmtKind::SubmitList)
      for (const Command& cmd : s.kind == StmtKind::Submit ? s.cmds : p.lists[s.id2].body) note(cmd.loc.line, wait_width(p, s.id), true);
    if (s.kind >= StmtKind::Submit) note(s.loc.line, kHostWidth, false);
  }
}

Checked check_text(const std::string& name, const std::string& text, const VerifyOptions& o) {
  Checked c;
  SourceSet src;
  LoadResult r = load_program_text(src, name, text);
  if (!r.program) {
    c.error = r.error;
    return c;
  }
  const Program& p = *r.program;
  note_lines(p, p.stmts, c);
  for (auto& n : p.var_names()) c.names.emplace(n, kDeclared);
  for (auto& d : p.devices) c.names.emplace(d.name, kDeclared);
  for (auto& b : p.buffers) c.names.emplace(b.name, kDeclared);
  for (auto& s : p.signals) c.names.emplace(s.name, kDeclared);
  for (auto& q : p.queues) c.names.emplace(q.name, kDeclared);
  for (auto& l : p.lists) c.names.emplace(l.name, kDeclared);
  try {
    c.diags = verify_program(p, o).diagnostics;
    c.ok = true;
  } catch (const InputError& e) {
    c.error = input_diagnostic(e);
  }
  return c;
}

size_t count(const std::vector<Diagnostic>& ds, bool fixable) {
  size_t n = 0;
  for (auto& d : ds)
    if (d.severity != Severity::Note && fixable_rule(d.rule) == fixable) ++n;
  return n;
}

// ---- candidates -----------------------------------------------------------------------------
struct Candidate {
  std::vector<LineEdit> edits;
  std::string finding;  // "the race at line 12" (input lines)
};

// A fixable finding of the current text and its fixes, best first.
struct Finding {
  std::string rule;
  uint32_t line = 0, related = 0;  // lines of the current text
  std::vector<Candidate> cands;
};

uint32_t related_line(const Diagnostic& d) { return d.related.empty() ? 0 : d.related[0].loc.line; }

// "line 12" of the input, for a line of the current text.
std::string input_line(const Lines& cur, uint32_t line) {
  uint32_t origin = line && line <= cur.size() ? cur[line - 1].origin : 0;
  return origin ? "line " + std::to_string(origin) : "a line added by another fix";
}

// The wait nearest above `line` in its straight run of commands (no block boundary between).
std::optional<uint32_t> wait_above(const Lines& cur, uint32_t line) {
  for (uint32_t i = line - 1; i >= 1; --i) {
    std::string t = trimmed(cur[i - 1].text.substr(0, cur[i - 1].text.find('#')));
    if (t.empty()) continue;
    if (t == "}" || t.back() == '{') return std::nullopt;
    if (parse_wait(t)) return i;
  }
  return std::nullopt;
}

// Variants of one proposed fix, best first: an added wait whose queue already waits on the same
// signal just before (a stale wait) raises that wait instead; then the fix as proposed; then with
// a `barrier` after the added wait (on a chained NV queue a wait unchains the next exec, and the
// barrier keeps it after the earlier ones). A 32-bit wait (AMD) compares the low dword, so its
// threshold is the low dword of the value.
std::vector<std::vector<LineEdit>> variants(std::vector<LineEdit> edits, const Lines& cur, const Checked& c) {
  for (LineEdit& e : edits) {
    auto w = e.kind == LineEdit::Before ? parse_wait(e.text) : std::nullopt;
    auto v = w ? decimal(w->value) : std::nullopt;
    if (v && *v > 0xffffffff && e.line < c.wait_width.size() && c.wait_width[e.line] == 32)
      e.text = indent_of(e.text) + "wait " + w->signal + " >= " + i128_to_string(*v & 0xffffffff);
  }
  std::vector<std::vector<LineEdit>> out;
  for (size_t k = 0; k < edits.size(); ++k) {
    auto w = edits[k].kind == LineEdit::Before ? parse_wait(edits[k].text) : std::nullopt;
    auto at = w ? wait_above(cur, edits[k].line) : std::nullopt;
    auto old = at ? parse_wait(cur[*at - 1].text) : std::nullopt;
    if (!old || old->signal != w->signal) continue;
    auto vn = decimal(w->value), vo = decimal(old->value);
    if (vn && vo && *vn <= *vo) continue;
    std::vector<LineEdit> raised = edits;
    raised[k] = {*at, LineEdit::Replace, indent_of(cur[*at - 1].text) + trimmed(edits[k].text)};
    out.push_back(std::move(raised));
  }
  out.push_back(edits);
  for (size_t k = 0; k < edits.size(); ++k)
    if (edits[k].kind == LineEdit::Before && parse_wait(edits[k].text) && edits[k].line < c.on_queue.size() && c.on_queue[edits[k].line]) {
      std::vector<LineEdit> with_barrier = edits;
      with_barrier.insert(with_barrier.begin() + long(k) + 1, {edits[k].line, LineEdit::Before, indent_of(edits[k].text) + "barrier"});
      out.push_back(std::move(with_barrier));
      break;
    }
  return out;
}

std::vector<LineEdit> line_edits(const Fix& f, const Lines& cur) {
  std::vector<LineEdit> out;
  for (const TextEdit& e : f.edits) {
    if (e.at.line == 0 || e.at.line > cur.size()) return {};
    std::string indent = e.at.col == 1 ? "" : indent_of(cur[e.at.line - 1].text);
    out.push_back({e.at.line, e.after ? LineEdit::After : LineEdit::Before, indent + e.text});
  }
  return out;
}

std::vector<Finding> findings_of(const std::vector<Diagnostic>& diags, const Lines& cur, const Checked& c) {
  std::vector<Finding> out;
  for (const Diagnostic& d : diags) {
    if (d.severity == Severity::Note || !fixable_rule(d.rule)) continue;
    Finding f{d.rule, d.loc.line, related_line(d), {}};
    std::string what = "the " + d.rule + " at " + input_line(cur, d.loc.line);
    std::vector<Candidate> reverse;  // fixes that touch only the other access: they invert the program's order
    for (const Fix& fix : d.fixes) {
      std::vector<LineEdit> edits = line_edits(fix, cur);
      if (edits.empty()) continue;
      bool at_finding = std::any_of(fix.edits.begin(), fix.edits.end(), [&](const TextEdit& e) { return e.at.line == d.loc.line; });
      for (auto& v : variants(edits, cur, c)) (at_finding ? f.cands : reverse).push_back({std::move(v), what});
    }
    f.cands.insert(f.cands.end(), reverse.begin(), reverse.end());
    if (!f.cands.empty()) out.push_back(std::move(f));
  }
  return out;
}

// A fix that declares a signal names it after the producer's queue (`done_c0`); two fixes in one
// set that release it after different commands need different names.
void give_fresh_names(Candidate& cand, std::map<std::string, uint32_t>& taken) {
  for (const LineEdit& decl : std::vector<LineEdit>(cand.edits)) {
    std::string t = trimmed(decl.text);
    if (decl.kind != LineEdit::Before || t.rfind("signal ", 0) != 0 || t.size() < 16 || t.substr(t.size() - 8) != " on host") continue;
    std::string name = t.substr(7, t.size() - 15);
    uint32_t released_after = 0;
    for (const LineEdit& e : cand.edits)
      if (e.kind == LineEdit::After && trimmed(e.text).rfind("signal " + name + " =", 0) == 0) released_after = e.line;
    std::string fresh = name;
    for (int i = 2; taken.count(fresh) && taken[fresh] != released_after; ++i) fresh = name + "_" + std::to_string(i);
    taken[fresh] = released_after;
    if (fresh == name) continue;
    for (LineEdit& e : cand.edits) {  // whole-word replacement: the name ends each statement's signal operand
      for (size_t at = e.text.find(name); at != std::string::npos; at = e.text.find(name, at + fresh.size())) {
        auto ident = [](char ch) { return std::isalnum((unsigned char)ch) || ch == '_'; };
        bool whole = (at == 0 || !ident(e.text[at - 1])) && (at + name.size() == e.text.size() || !ident(e.text[at + name.size()]));
        if (whole) e.text.replace(at, name.size(), fresh);
      }
    }
  }
}

// "add `wait s >= 1` before line 15", in lines of the input.
std::string describe(const std::vector<LineEdit>& edits, const Lines& cur, const std::string& finding) {
  std::string out;
  for (const LineEdit& e : edits) {
    std::string where = input_line(cur, e.line);
    if (!out.empty()) out += ", ";
    std::string old = trimmed(cur[e.line - 1].text.substr(0, cur[e.line - 1].text.find('#')));
    if (e.kind == LineEdit::Replace) out += "raise `" + old + "` at " + where + " to `" + trimmed(e.text) + "`";
    else out += "add `" + trimmed(e.text) + "` " + (e.kind == LineEdit::After ? "after " : "before ") + where;
  }
  return out + " (for " + finding + ")";
}

// ---- the search -----------------------------------------------------------------------------
class Repair {
 public:
  Repair(const std::string& name, const std::string& text, const VerifyOptions& o, RepairResult& r)
      : name_(name), o_(o), r_(r), input_(split_lines(text)), eol_(usual_eol(input_)), cur_(input_) {}

  void run(const Checked& first, size_t base_unfixable) {
    base_unfixable_ = base_unfixable;
    Checked state = first;
    for (int round = 0; round < kMaxRounds && !done(state.diags); ++round) {
      std::vector<Finding> fs = findings_of(state.diags, cur_, state);
      Step s{{}, state, cur_, state.names};
      std::vector<size_t> all(fs.size());
      for (size_t i = 0; i < fs.size(); ++i) all[i] = i;
      settle(fs, all, s);
      if (s.kept.empty()) break;
      for (size_t i = 0; i < s.kept.size(); ++i) {
        r_.applied.push_back({describe(s.kept[i].edits, cur_, s.kept[i].finding), {}});
        raises_.push_back(std::any_of(s.kept[i].edits.begin(), s.kept[i].edits.end(),
                                      [](const LineEdit& e) { return e.kind == LineEdit::Replace; }));
        for (LineEdit& e : s.kept[i].edits) e.fix = int(r_.applied.size() - 1);
      }
      std::vector<LineEdit> edits;
      for (auto& k : s.kept) edits.insert(edits.end(), k.edits.begin(), k.edits.end());
      cur_ = apply(cur_, edits, eol_);
      for (uint32_t i = 0; i < cur_.size(); ++i) cur_[i].from = i + 1;  // the next round's lines are these
      state = std::move(s.result);
    }
    drop_redundant_waits(state);
    r_.after = state.diags;
    r_.clean = state.ok && count(state.diags, true) == 0 && count(state.diags, false) == 0;
    r_.fixed_text = join(cur_, eol_);
  }
  const Lines& input() const { return input_; }
  const Lines& result() const { return cur_; }

 private:
  struct Step {
    std::vector<Candidate> kept;            // in the current text's lines
    Checked result;                         // the check of the current text with them
    Lines text;                             // the current text with them
    std::map<std::string, uint32_t> names;  // names declared, by the program or by them
  };

  bool done(const std::vector<Diagnostic>& ds) const { return count(ds, true) == 0 && count(ds, false) <= base_unfixable_; }
  bool acceptable(const Checked& c) const { return c.ok && count(c.diags, false) <= base_unfixable_; }

  Checked check(const Lines& ls) {
    ++r_.checks;
    return check_text(name_, join(ls, eol_), o_);
  }
  Lines with(const std::vector<Candidate>& cands) const {
    std::vector<LineEdit> edits;
    for (auto& c : cands) edits.insert(edits.end(), c.edits.begin(), c.edits.end());
    return apply(cur_, edits, eol_);
  }

  // Fixes for the findings `which` (indices into `fs`) on top of the ones kept so far: the best
  // fix of each, all at once (one check for any number of independent findings); when that does
  // not hold, each half on its own, down to a few findings, which try their fixes in turn. A set
  // is kept when it removes its findings without adding findings that need a person or more
  // fixable ones than it removes (those it reveals are the next round's).
  void settle(const std::vector<Finding>& fs, std::vector<size_t> which, Step& s) {
    which.erase(std::remove_if(which.begin(), which.end(), [&](size_t i) { return !present(fs[i], s.result.diags, s.text); }),
                which.end());  // removed by fixes kept before
    if (which.size() > 1) {
      std::vector<Candidate> best;
      for (size_t i : which)
        if (std::none_of(best.begin(), best.end(), [&](const Candidate& b) { return b.edits == fs[i].cands[0].edits; }))
          best.push_back(fs[i].cands[0]);
      if (try_keep(best, which, fs, s)) return;
    }
    if (which.size() <= kOneByOne) {
      for (size_t i : which)
        if (which.size() == 1 || present(fs[i], s.result.diags, s.text))
          for (const Candidate& c : fs[i].cands)
            if (try_keep({c}, {i}, fs, s)) break;
      return;
    }
    size_t half = which.size() / 2;
    settle(fs, {which.begin(), which.begin() + long(half)}, s);
    settle(fs, {which.begin() + long(half), which.end()}, s);
  }

  bool try_keep(std::vector<Candidate> cands, const std::vector<size_t>& which, const std::vector<Finding>& fs, Step& s) {
    std::map<std::string, uint32_t> names = s.names;
    for (Candidate& c : cands) give_fresh_names(c, names);
    std::vector<Candidate> trial = s.kept;
    trial.insert(trial.end(), cands.begin(), cands.end());
    Lines t = with(trial);
    Checked res = check(t);
    if (!acceptable(res) || count(res.diags, true) > count(s.result.diags, true)) return false;
    if (std::any_of(which.begin(), which.end(), [&](size_t i) { return present(fs[i], res.diags, t); })) return false;
    s.kept = std::move(trial), s.result = std::move(res), s.text = std::move(t), s.names = std::move(names);
    return true;
  }

  // Whether finding `f` (lines of the current text) is among `diags` of `ls` (the current text with edits).
  static bool present(const Finding& f, const std::vector<Diagnostic>& diags, const Lines& ls) {
    auto from = [&](uint32_t line) { return line && line <= ls.size() ? ls[line - 1].from : 0; };
    return std::any_of(diags.begin(), diags.end(), [&](const Diagnostic& d) {
      return d.rule == f.rule && from(d.loc.line) == f.line && from(related_line(d)) == f.related;
    });
  }

  // A fix whose added waits the repaired program calls redundant (a later fix orders the same
  // accesses, or an earlier one covers them) is dropped, if the program still checks the same.
  void drop_redundant_waits(Checked& state) {
    std::set<uint32_t> redundant_lines;
    for (auto& d : state.diags)
      if (d.is(Rule::RedundantWait)) redundant_lines.insert(d.loc.line);
    std::set<int> droppable;
    for (int fix = 0; fix < int(r_.applied.size()); ++fix) {
      bool any = false, all = true;
      for (uint32_t i = 1; i <= cur_.size(); ++i) {
        if (cur_[i - 1].fix != fix || !parse_wait(cur_[i - 1].text)) continue;
        any = true;
        all &= redundant_lines.count(i) != 0;
      }
      if (any && all && !raises_[size_t(fix)]) droppable.insert(fix);  // a raised wait has no line to fall back to
    }
    r_.irredundant = droppable.empty();
    if (droppable.empty()) return;
    Lines kept;
    for (const Line& l : cur_)
      if (!droppable.count(l.fix)) kept.push_back(l);
    Checked c = check(kept);
    if (!acceptable(c) || count(c.diags, true) > count(state.diags, true)) return;
    std::vector<Fix> applied;
    for (int fix = 0; fix < int(r_.applied.size()); ++fix)
      if (!droppable.count(fix)) applied.push_back(r_.applied[size_t(fix)]);
    r_.applied = std::move(applied);
    cur_ = std::move(kept);
    state = std::move(c);
    r_.irredundant = true;
  }

  const std::string& name_;
  const VerifyOptions& o_;
  RepairResult& r_;
  const Lines input_;
  const std::string eol_;
  Lines cur_;
  std::vector<bool> raises_;  // per applied fix: it raises an existing wait
  size_t base_unfixable_ = 0;
};

// ---- the diff -------------------------------------------------------------------------------
struct DiffLine {
  char op;  // ' ', '-', '+'
  std::string text;  // with its line end ("" at the end of a file that has none)
};

std::vector<DiffLine> diff_lines(const Lines& input, const Lines& result, const std::string& eol) {
  std::vector<DiffLine> out, removed, added;
  auto flush = [&] {
    out.insert(out.end(), removed.begin(), removed.end());
    out.insert(out.end(), added.begin(), added.end());
    removed.clear(), added.clear();
  };
  uint32_t next = 1;  // the next input line not yet in the diff
  for (size_t i = 0; i < result.size(); ++i) {
    std::string text = rendered(result, i, eol);
    uint32_t o = result[i].origin;
    if (o && text == input[o - 1].text + input[o - 1].eol) {
      for (; next < o; ++next) removed.push_back({'-', input[next - 1].text + input[next - 1].eol});
      flush();
      out.push_back({' ', text});
      next = o + 1;
    } else {
      added.push_back({'+', text});
    }
  }
  for (; next <= input.size(); ++next) removed.push_back({'-', input[next - 1].text + input[next - 1].eol});
  flush();
  return out;
}

std::string hunk_range(size_t start, size_t len) {
  return std::to_string(len ? start + 1 : start) + "," + std::to_string(len);
}

std::string unified_diff(const std::string& name, const Lines& input, const Lines& result, const std::string& eol) {
  std::vector<DiffLine> ls = diff_lines(input, result, eol);
  std::string out;
  constexpr size_t kContext = 3;
  size_t n = ls.size(), old_line = 0, new_line = 0, i = 0;  // lines of each side before ls[i]
  while (i < n) {
    if (ls[i].op == ' ') {
      ++old_line, ++new_line, ++i;
      continue;
    }
    // One hunk: changes whose context would touch or overlap, with kContext lines around them.
    size_t start = i >= kContext ? i - kContext : 0, last = i;
    for (size_t k = i + 1; k < n && k - last <= 2 * kContext + 1; ++k)
      if (ls[k].op != ' ') last = k;
    size_t end = std::min(n, last + 1 + kContext);
    size_t old_start = old_line - (i - start), new_start = new_line - (i - start), old_len = 0, new_len = 0;
    for (size_t k = start; k < end; ++k) old_len += ls[k].op != '+', new_len += ls[k].op != '-';
    out += "@@ -" + hunk_range(old_start, old_len) + " +" + hunk_range(new_start, new_len) + " @@\n";
    for (size_t k = start; k < end; ++k) {
      out += ls[k].op + ls[k].text;
      if (ls[k].text.empty() || ls[k].text.back() != '\n') out += "\n\\ No newline at end of file\n";
    }
    for (size_t k = i; k < end; ++k) old_line += ls[k].op != '+', new_line += ls[k].op != '-';
    i = end;
  }
  return out.empty() ? out : "--- a/" + name + "\n+++ b/" + name + "\n" + out;
}

}  // namespace

RepairResult repair_program(const std::string& name, const std::string& text, const VerifyOptions& o) {
  RepairResult r;
  r.fixed_text = text;
  Checked first = check_text(name, text, o);
  if (first.error) {
    r.input_ok = false;
    r.input_error = *first.error;
    return r;
  }
  r.before = r.after = first.diags;
  for (auto& d : r.before)
    if (d.severity != Severity::Note && !fixable_rule(d.rule)) r.unfixable.push_back(d);
  if (count(r.before, true) == 0) {
    r.clean = count(r.before, false) == 0;
    r.irredundant = true;
    return r;
  }
  Repair repair(name, text, o, r);
  repair.run(first, count(r.before, false));
  r.diff = unified_diff(name, repair.input(), repair.result(), usual_eol(repair.input()));
  return r;
}

}  // namespace qvet
