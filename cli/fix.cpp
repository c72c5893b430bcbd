#include "cli/fix.h"

#include <algorithm>
#include <functional>
#include <map>

#include "core/parser.h"

namespace qvet {

namespace {

const char* const kFixable[] = {"race", "visibility", "signal-race", "free-in-flight"};
bool fixable_rule(const std::string& r) { return std::find(std::begin(kFixable), std::end(kFixable), r) != std::end(kFixable); }

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t b = 0;
  while (b < text.size()) {
    size_t e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    lines.push_back(text.substr(b, e - b));
    b = e + 1;
  }
  return lines;
}

struct Checked {
  bool ok = false;
  std::vector<Diagnostic> diags;
};

Checked check_text(const std::string& name, const std::string& text, const VerifyOptions& o) {
  Checked c;
  SourceSet src;
  LoadResult r = load_program_text(src, name, text);
  if (!r.program) return c;
  try {
    c.diags = verify_program(*r.program, o).diagnostics;
    c.ok = true;
  } catch (const InputError&) {
  }
  return c;
}

size_t count(const std::vector<Diagnostic>& ds, bool fixable) {
  size_t n = 0;
  for (auto& d : ds)
    if (d.severity != Severity::Note && fixable_rule(d.rule) == fixable) ++n;
  return n;
}

}  // namespace

std::string apply_edits(const std::string& text, const std::vector<TextEdit>& edits, std::vector<bool>* inserted) {
  std::vector<std::string> lines = split_lines(text);
  std::map<uint32_t, std::vector<std::string>> before, after;
  auto indent = [&](uint32_t line) {
    if (line == 0 || line > lines.size()) return std::string();
    const std::string& l = lines[line - 1];
    return l.substr(0, l.find_first_not_of(" \t") == std::string::npos ? l.size() : l.find_first_not_of(" \t"));
  };
  for (const TextEdit& e : edits) {
    std::string t = (e.at.col == 1 ? std::string() : indent(e.at.line)) + e.text;
    auto& list = (e.after ? after : before)[e.at.line];
    if (std::find(list.begin(), list.end(), t) == list.end()) list.push_back(t);
  }
  std::string out;
  if (inserted) inserted->clear();
  auto put = [&](const std::string& l, bool ins) {
    out += l + "\n";
    if (inserted) inserted->push_back(ins);
  };
  for (uint32_t i = 1; i <= lines.size(); ++i) {
    for (auto& l : before[i]) put(l, true);
    put(lines[i - 1], false);
    for (auto& l : after[i]) put(l, true);
  }
  return out;
}

std::string unified_diff(const std::string& name, const std::string& fixed, const std::vector<bool>& inserted) {
  std::vector<std::string> lines = split_lines(fixed);
  std::string out = "--- a/" + name + "\n+++ b/" + name + "\n";
  size_t n = lines.size();
  size_t i = 0;
  while (i < n) {
    if (!inserted[i]) {
      ++i;
      continue;
    }
    // A hunk: from 3 lines before the first insertion to 3 lines after the last one within reach.
    size_t start = i >= 3 ? i - 3 : 0, end = i;
    while (true) {
      size_t j = end;
      while (j < n && inserted[j]) ++j;
      size_t next = j;
      while (next < n && !inserted[next] && next - j < 7) ++next;
      if (next < n && inserted[next]) {
        end = next;
        continue;
      }
      end = std::min(n, j + 3);
      break;
    }
    size_t old_start = 0, new_start = start + 1, old_len = 0, new_len = end - start;
    for (size_t k = 0; k < start; ++k) old_start += !inserted[k];
    for (size_t k = start; k < end; ++k) old_len += !inserted[k];
    out += "@@ -" + std::to_string(old_start + 1) + "," + std::to_string(old_len) + " +" + std::to_string(new_start) + "," +
           std::to_string(new_len) + " @@\n";
    for (size_t k = start; k < end; ++k) out += (inserted[k] ? "+" : " ") + lines[k] + "\n";
    i = end;
  }
  return out;
}

RepairResult repair_program(const std::string& name, const std::string& text, const VerifyOptions& o) {
  RepairResult r;
  r.fixed_text = text;
  r.inserted.assign(split_lines(text).size(), false);
  {
    SourceSet src;
    LoadResult l = load_program_text(src, name, text);
    if (!l.program) {
      r.input_ok = false;
      r.input_error = *l.error;
      return r;
    }
    try {
      r.before = verify_program(*l.program, o).diagnostics;
    } catch (const InputError& e) {
      r.input_ok = false;
      r.input_error = input_diagnostic(e);
      return r;
    }
  }
  r.after = r.before;
  size_t base_unfixable = count(r.before, false);
  auto done = [&](const std::vector<Diagnostic>& ds) { return count(ds, true) == 0 && count(ds, false) <= base_unfixable; };
  for (auto& d : r.before)
    if (d.severity != Severity::Note && !fixable_rule(d.rule)) r.unfixable.push_back(d);
  if (done(r.before)) {
    r.clean = count(r.before, false) == 0;
    r.minimal = true;
    return r;
  }

  // Rounds: the candidates of the current findings; the smallest subset (up to 3 fixes) whose
  // program checks clean wins; otherwise the first candidate is kept and its program is the next
  // round's input (a fix can reveal a finding that the race it removes hid).
  std::string cur = text;
  std::vector<TextEdit> kept;
  std::vector<Fix> kept_fixes;
  std::vector<Diagnostic> cur_diags = r.before;
  for (int round = 0; round < 8; ++round) {
    std::vector<Fix> cands;
    for (auto& d : cur_diags)
      if (d.severity != Severity::Note && fixable_rule(d.rule))
        for (auto& f : d.fixes)
          if (!f.edits.empty() && std::none_of(cands.begin(), cands.end(), [&](const Fix& c) { return c.edits == f.edits; }))
            cands.push_back(f);
    if (cands.empty()) break;
    size_t maxk = std::min<size_t>(3, cands.size());
    std::vector<size_t> pick;
    bool found = false;
    std::vector<Diagnostic> found_diags;
    std::function<bool(size_t, size_t)> search = [&](size_t from, size_t k) -> bool {
      if (pick.size() == k) {
        std::vector<TextEdit> edits = kept;
        for (size_t i : pick) edits.insert(edits.end(), cands[i].edits.begin(), cands[i].edits.end());
        std::string t = apply_edits(text, edits, nullptr);
        Checked c = check_text(name, t, o);
        ++r.checks;
        if (c.ok && done(c.diags)) {
          found_diags = c.diags;
          return true;
        }
        return false;
      }
      for (size_t i = from; i < cands.size(); ++i) {
        pick.push_back(i);
        if (search(i + 1, k)) return true;
        pick.pop_back();
      }
      return false;
    };
    for (size_t k = 1; k <= maxk && !found; ++k) {
      pick.clear();
      found = search(0, k);
    }
    if (found) {
      for (size_t i : pick) {
        kept.insert(kept.end(), cands[i].edits.begin(), cands[i].edits.end());
        kept_fixes.push_back(cands[i]);
      }
      r.minimal = round == 0;
      r.fixed_text = apply_edits(text, kept, &r.inserted);
      r.applied = kept_fixes;
      Checked c = check_text(name, r.fixed_text, o);
      r.after = c.diags;
      r.clean = c.ok && count(c.diags, true) == 0 && count(c.diags, false) == 0;
      return r;
    }
    // No subset is enough: keep the first candidate that removes a finding and go on.
    bool progressed = false;
    for (auto& f : cands) {
      std::vector<TextEdit> edits = kept;
      edits.insert(edits.end(), f.edits.begin(), f.edits.end());
      Checked c = check_text(name, apply_edits(text, edits, nullptr), o);
      ++r.checks;
      if (c.ok && count(c.diags, true) < count(cur_diags, true) && count(c.diags, false) <= base_unfixable) {
        kept = edits;
        kept_fixes.push_back(f);
        cur_diags = c.diags;
        progressed = true;
        break;
      }
    }
    if (!progressed) break;
  }
  // Not every fixable finding could be removed: report what was achieved, verified.
  r.fixed_text = apply_edits(text, kept, &r.inserted);
  r.applied = kept_fixes;
  Checked c = check_text(name, r.fixed_text, o);
  r.after = c.diags;
  r.clean = false;
  return r;
}

}  // namespace qvet
