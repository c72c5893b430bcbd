#include "cli/check.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "checkers/checker.h"
#include "cli/files.h"
#include "core/input_error.h"
#include "core/render.h"
#include "core/syntax/expect.h"
#include "verify/verify.h"

namespace qvet::cli {

const char* const kCheckHelp =
    "usage: qvet check [options] FILE...\n"
    "\n"
    "  --format text|json|sarif   output format (default text)\n"
    "  --expect                   compare findings with the file's `# expect:` lines; exit 0 exactly when they match\n"
    "  --werror                   warnings count as errors for the exit code\n"
    "  -j N, --jobs N             check N files at once (default: the number of cores); output as with -j 1\n"
    "  --param NAME=VALUE         bind a param (repeatable); unbound params are sampled (docs/language-notes.md)\n"
    "  --event-budget N           events checked across a loop-bound param's iteration counts (default 4000000)\n"
    "  --stats                    print time per phase and peak memory on standard error\n"
    "  --rules R1,R2,...          run only these rules (`none`: only the ordering engine)\n"
    "  --engine MODE              how waits find their candidates: indexed (default), plain (the wait rule\n"
    "                             alone: slow, for reference), checked (both; exit 3 where they differ)\n"
    "  --witness[=FILE]           give each race a schedule in which its accesses overlap; FILE: also as JSON\n"
    "  --ignore-packet [FMT:]0xN  an opcode (amd-pm4, the default FMT) or method a stream may hold, skipped\n"
    "                             with its body (repeatable; not one the decoder reads; docs/encoded.md)\n"
    "  FILE may be `-` for standard input.\n";

namespace {

// Verifies a program for every admissible param value (verify/verify.h).
std::optional<std::vector<Diagnostic>> check_loaded(SourceSet& src, const Program& p, int& rc, const Args& a,
                                                    std::ostream& err) {
  VerifyOptions o;
  o.fixed = a.params;
  if (a.event_budget) o.event_budget = a.event_budget;
  o.rules = a.rules;
  o.engine = a.engine;
  o.witness = a.witness;
  try {
    Stopwatch sw;
    VerifyResult res = verify_program(p, o);
    if (a.stats)
      err << "stats: " << res.commands << " commands, " << res.host << " host statements; engine+checkers " << sw.lap() << " s\n";
    for (auto& n : res.notes) err << src.name(p.file) << ": note: " << n << "\n";
    return std::move(res.diagnostics);
  } catch (const InputError& e) {
    Diagnostic d = input_diagnostic(e);
    if (!d.loc.file) d.loc.file = p.file;
    rc = report_input_error(d, src, err);
    return std::nullopt;
  }
}

std::optional<std::vector<Diagnostic>> check_streamed(SourceSet& src, const std::string& file, std::string text,
                                                      const Args& a, int& rc, std::optional<Program>& keep, std::ostream& err) {
  Trace t;
  if (!load_streamed(src, file, std::move(text), a, rc, keep, t, err)) return std::nullopt;
  Stopwatch sw;
  CheckResult res = check_trace(t, a.rules, a.witness, a.engine);
  if (a.stats)
    err << "stats: " << t.cmds.size() << " commands, " << t.host.size() << " host statements (streamed); engine+checkers "
        << sw.lap() << " s\n";
  return std::move(res.diagnostics);
}

// One file of `qvet check`, checked on its own (its own sources, its own output), so that files
// can be checked on several threads and printed in the order of the command line, as if one by one.
struct FileCheck {
  SourceSet src;
  std::vector<Diagnostic> diags;  // --expect: none (its verdict is in `out`)
  std::ostringstream out, err;
  int worst = 0;
  std::exception_ptr failed;  // what escaped it (rethrown on the main thread, in order)
};

void check_one(const std::string& file, const Args& a, FileCheck& fc) try {
  SourceSet& src = fc.src;
  int rc = 0;
  Stopwatch sw;
  std::optional<Program> l;
  std::optional<std::vector<Diagnostic>> diags;
  double t_load = 0;
  std::string text, error;
  std::string name = file == "-" ? "<stdin>" : file;
  if (!read_file(file, text, &error)) {
    uint32_t f = src.add(name, "");
    fc.worst = std::max(fc.worst, report_input_error(input_diagnostic({{f, 0, 0}, error}), src, fc.err));
    return;
  }
  if (streamable(text)) {
    diags = check_streamed(src, name, std::move(text), a, rc, l, fc.err);
    t_load = sw.lap();
  } else {
    LoadResult r = load_program_text(src, name, std::move(text), nullptr, a.load);
    if (r.program) l = std::move(*r.program);
    else rc = report_input_error(*r.error, src, fc.err);
    t_load = sw.lap();
    if (l) diags = check_loaded(src, *l, rc, a, fc.err);
  }
  double t_check = sw.lap();
  if (a.stats && l)
    fc.err << "stats: " << file << ": load " << t_load << " s, check " << t_check << " s, peak RSS " << peak_rss_kb() / 1024 << " MiB\n";
  if (!diags) {
    fc.worst = std::max(fc.worst, rc);
    return;
  }
  if (a.expect) {
    if (l->expects.empty()) {
      fc.err << src.name(l->file) << ": error: --expect needs at least one '# expect:' line\n";
      fc.worst = std::max(fc.worst, 2);
      return;
    }
    ExpectOutcome o = match_expectations(l->expects, *diags, src);
    if (o.ok) {
      fc.out << "PASS " << src.name(l->file) << "\n";
    } else {
      fc.out << "FAIL " << src.name(l->file) << "\n";
      for (auto& pr : o.problems) fc.out << "  " << pr << "\n";
      fc.worst = std::max(fc.worst, 1);
    }
    return;
  }
  for (auto& d : *diags)
    if (d.severity == Severity::Error || (a.werror && d.severity == Severity::Warning)) fc.worst = std::max(fc.worst, 1);
  fc.diags = std::move(*diags);
} catch (const EngineMismatch& m) {  // --engine checked
  fc.err << fc.src.name(m.at.file) << ":" << m.at.line << ": internal error: " << m.what() << "\n";
  fc.worst = 3;
}

// What a file that could not be checked says on standard error, in one line: its first error
// (an input error, or an internal one), else its first line that is not a --stats line.
std::string first_error_line(const std::string& err) {
  std::string first;
  for (size_t at = 0; at < err.size();) {
    size_t end = std::min(err.find('\n', at), err.size());
    std::string line = err.substr(at, end - at);
    if (line.find(": error: ") != std::string::npos || line.find(": internal error: ") != std::string::npos) return line;
    if (first.empty() && line.rfind("stats: ", 0) != 0) first = line;
    at = end + 1;
  }
  return first;
}

// Moves a file's sources into `into` and renumbers the locations of its diagnostics to match.
void merge_sources(FileCheck& fc, SourceSet& into, std::vector<Diagnostic>& all) {
  std::vector<uint32_t> to(fc.src.size(), 0);
  for (uint32_t f = 1; f < fc.src.size(); ++f) to[f] = into.add(fc.src.name(f), fc.src.text(f));
  auto fix = [&](Loc& l) {
    if (l.file < to.size()) l.file = to[l.file];
  };
  for (Diagnostic& d : fc.diags) {
    fix(d.loc);
    for (auto& r : d.related) fix(r.loc);
    for (auto& n : d.notes) fix(n.loc);
    for (auto& f : d.fixes)
      for (auto& e : f.edits) fix(e.at);
    for (auto& w : d.witness) fix(w.loc);
    all.push_back(std::move(d));
  }
}

}  // namespace

int cmd_check(const Args& a) {
  if (a.help) return std::cout << kCheckHelp, 0;
  if (a.files.empty()) throw UsageError{"check needs a FILE"};
  std::string fmt = a.format.empty() ? "text" : a.format;
  if (fmt != "text" && fmt != "json" && fmt != "sarif") throw UsageError{"unknown --format '" + fmt + "' (text, json or sarif)"};
  // -j N: files checked on N threads (default: the cores), printed in command-line order; each
  // program's check is independent (its own clocks, solver and sources), so the output is the
  // same byte for byte as one by one.
  size_t n = a.files.size();
  unsigned jobs = a.jobs ? a.jobs : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::unique_ptr<FileCheck>> done(n);
  for (auto& fc : done) fc = std::make_unique<FileCheck>();
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < n;) try {
        check_one(a.files[i], a, *done[i]);
      } catch (...) {
        done[i]->failed = std::current_exception();
      }
  };
  std::vector<std::thread> threads;
  for (unsigned k = 1; k < std::min<size_t>(jobs, n); ++k) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  int worst = 0;
  SourceSet src;
  std::vector<Diagnostic> all;
  std::vector<std::string> failures;  // per file not checked: the first line of its error
  for (auto& fc : done) {
    if (fc->failed) std::rethrow_exception(fc->failed);
    if (fc->worst >= 2) failures.push_back(first_error_line(fc->err.str()));
    std::cerr << fc->err.str();
    std::cout << fc->out.str();
    worst = std::max(worst, fc->worst);
    merge_sources(*fc, src, all);
  }
  if (a.expect) return worst;
  if (!a.witness_file.empty() && !write_output(a.witness_file, render_witnesses(all, src))) {
    worst = 2;
    failures.push_back("qvet: error: the witness file '" + a.witness_file + "' could not be written");
  }
  if (fmt == "json") std::cout << render_json(all, src);
  else if (fmt == "sarif") std::cout << render_sarif(all, src, failures);
  else {
    std::cout << render_text(all, src);
    int e = 0, w = 0, n = 0;
    count_severities(all, e, w, n);
    if (worst < 2)
      std::cout << "qvet: " << e << " error(s), " << w << " warning(s), " << n << " note(s)\n";
  }
  return worst;
}

}  // namespace qvet::cli
