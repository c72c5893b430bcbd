// The differential test: random small programs checked by qvet (engine and checkers) and by the
// oracle; their findings (rule, primary line, related line, the size of its group) must be identical.
//
//   qvet_differential [--seed S] [--count N] [--mixed] [--print] [--save DIR] [--engine plain|indexed|checked]
//   qvet_differential --files FILE...     (param-free programs, e.g. the corpus)
//
// Program k uses seed S + k, so a failure reproduces with `--seed S+k --count 1 --print`.
// `--mixed`: only the programs where some signal has both 32-bit and 64-bit writes count (the
// others are skipped): N of them.
// `--save DIR` writes each disagreeing program there (to be kept as a corpus program).
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include "checkers/checker.h"
#include "core/syntax/parser.h"
#include "model/profile.h"
#include "tests/oracle/oracle.h"
#include "tests/oracle/random_program.h"

using namespace qvet;

namespace {

std::vector<oracle::Finding> qvet_findings(const std::vector<Diagnostic>& ds) {
  std::vector<oracle::Finding> out;
  for (const Diagnostic& d : ds) {
    uint32_t rel = d.severity == Severity::Note ? 0 : d.related_loc().line;
    out.push_back({d.rule, d.loc.line, rel, d.group.others});
  }
  std::sort(out.begin(), out.end());
  // Notes are compared by rule and line (the oracle does not choose their related location).
  out.erase(std::unique(out.begin(), out.end(), [](auto& a, auto& b) { return a == b && a.related == 0; }), out.end());
  return out;
}

std::string join(const std::vector<oracle::Finding>& fs) {
  std::string s;
  for (auto& f : fs) s += (s.empty() ? "" : " ") + oracle::to_string(f);
  return s.empty() ? "(clean)" : s;
}

// Whether some signal of `t` has both 32-bit and 64-bit writes.
bool mixed_widths(const Trace& t) {
  std::vector<uint8_t> widths(t.program->signals.size(), 0);  // 1: a 32-bit write, 2: a 64-bit one
  for (const TraceCmd& c : t.cmds)
    if (c.op == CmdOp::Signal) widths[c.signal] |= signal_width(*t.program, c.queue) < 64 ? 1 : 2;
  for (const HostEvent& h : t.host)
    if (h.op == HostOp::Signal) widths[h.signal] |= 2;
  return std::find(widths.begin(), widths.end(), 3) != widths.end();
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = 1, count = 2000;
  bool print = false, mixed = false;
  std::string save;
  std::vector<std::string> files;
  EngineMode mode = EngineMode::Indexed;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seed" && i + 1 < argc) seed = std::stoull(argv[++i]);
    else if (a == "--count" && i + 1 < argc) count = std::stoull(argv[++i]);
    else if (a == "--print") print = true;
    else if (a == "--mixed") mixed = true;
    else if (a == "--engine" && i + 1 < argc && parse_engine_mode(argv[i + 1], mode)) ++i;
    else if (a == "--save" && i + 1 < argc) save = argv[++i];
    else if (a == "--files") files.assign(argv + i + 1, argv + argc), i = argc;
    else {
      std::cerr << "usage: qvet_differential [--seed S] [--count N] [--mixed] [--print] [--save DIR] [--engine plain|indexed|checked]\n";
      return 2;
    }
  }
  if (!files.empty()) count = files.size();
  else std::cout << "differential: seed " << seed << ", " << count << " programs\n";
  uint64_t agree = 0, disagree = 0, skipped = 0;
  for (uint64_t k = 0; agree + disagree < count; ++k) {
    std::string text = oracle::random_program(seed + k), name = "random.hcq";
    if (!files.empty()) {
      name = files[k];
      if (!read_file(name, text)) text.clear();
    }
    SourceSet src;
    LoadResult r = load_program_text(src, name, text);
    std::vector<oracle::Finding> mine, theirs;
    std::string error;
    if (!r.program) {
      error = r.error->message;
    } else {
      try {
        Trace t = elaborate(*r.program, bind_params(*r.program, {}));
        if (mixed && files.empty() && !mixed_widths(t)) {
          ++skipped;
          continue;
        }
        mine = qvet_findings(check_trace(t, {}, false, mode).diagnostics);
        theirs = oracle::check(t);
      } catch (const InputError& e) {
        error = "input error (a generator bug): " + input_diagnostic(e).message;
      } catch (const EngineMismatch& m) {
        error = "line " + std::to_string(m.at.line) + ": " + m.what();
      }
    }
    bool ok = error.empty() && mine == theirs;
    if (print || !ok) {
      std::cout << "--- " << (files.empty() ? "seed " + std::to_string(seed + k) : name) << (ok ? " agrees" : " DISAGREES") << "\n";
      if (!error.empty()) std::cout << error << "\n";
      std::cout << "qvet:   " << join(mine) << "\noracle: " << join(theirs) << "\n";
      if (files.empty()) {  // a generated program: show it
        int n = 0;
        for (size_t p = 0, q; p < text.size(); p = q + 1) {
          q = text.find('\n', p);
          std::printf("%3d  %s\n", ++n, text.substr(p, q - p).c_str());
        }
      }
      if (!ok && !save.empty()) std::ofstream(save + "/diff_" + std::to_string(seed + k) + ".hcq") << text;
    }
    (ok ? agree : disagree)++;
  }
  std::cout << agree << " passed, " << disagree << " failed";
  if (mixed) std::cout << " (" << skipped << " programs without mixed widths skipped)";
  std::cout << "\n";
  return disagree == 0 ? 0 : 1;
}
