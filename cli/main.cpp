// qvet: the command-line front end. The commands other than `check` (cli/check.cpp), their help,
// and dispatch; options in cli/args.h, reading programs and writing outputs in cli/files.h. Exit
// codes follow diagnostics.md (0 clean, 1 errors, 2 bad input or usage, 3 internal failure). No
// exception or crash escapes main.
#include <algorithm>
#include <memory>
#include <cctype>
#include <functional>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "checkers/checker.h"
#include "verify/verify.h"
#include "verify/fix.h"
#include "cli/args.h"
#include "cli/check.h"
#include "cli/encode.h"
#include "cli/files.h"
#include "cli/gen.h"
#include "core/atomic_file.h"
#include "core/rule_pages.h"
#include "core/render.h"
#include "core/syntax/json_io.h"
#include "core/syntax/parser.h"
#include "core/syntax/printer.h"
#include "devices/backend.h"
#include "devices/compare.h"
#include "devices/plan.h"
#include "devices/replay.h"
#include "devices/schedule.h"
#include "devices/streams.h"
#include "devices/sim/render.h"
#include "devices/sim/sim.h"
#include "devices/sim/summary.h"
#include "model/graph.h"

using namespace qvet;
using namespace qvet::cli;

namespace {

constexpr const char* kVersion = "0.1.0";

const char* kUsage =
    "usage: qvet COMMAND [options] FILE...\n"
    "\n"
    "Checks GPU command-queue programs (.hcq or qvet JSON) against the device-semantics model.\n"
    "\n"
    "commands:\n"
    "  check     report races, deadlocks, lost wakeups, lifetime, peer, width, engine and visibility findings\n"
    "  print     print the canonical .hcq form, or the IR as JSON (--format json)\n"
    "  decode    print the program with its binary streams decoded, each command with its FILE:DWORD\n"
    "  encode    write the program's batches as the binary streams its devices run (-o DIR)\n"
    "  graph     print the happens-before graph as Graphviz DOT\n"
    "  fix       repair races with verified waits and print the diff\n"
    "  sim       execute the program on a simulated machine under many schedules\n"
    "  run       replay the program on a GPU (cuda, hip) or the simulated back end (sim)\n"
    "  gen       write a deterministic synthetic program (for benchmarks)\n"
    "  version   print the version\n"
    "  help      print this help, `qvet help COMMAND`, or a rule's page: `qvet help RULE` (docs/rules/RULE.md)\n"
    "\n"
    "exit codes: 0 no error, 1 errors found (or --expect mismatch), 2 invalid input or usage, 3 internal failure,\n"
    "            4 the requested device is not available (qvet run)\n";

const char* kPrintHelp =
    "usage: qvet print [--format hcq|json] FILE\n"
    "\n"
    "  Prints the program in canonical .hcq form (default) or as qvet's JSON IR (docs/json.md).\n";

const char* kEncodeHelp =
    "usage: qvet encode FILE.hcq -o DIR [--format FMT]...\n"
    "  Writes DIR/STEM.hcq, the program with each concrete batch as a binary stream the queue's device\n"
    "  runs (amd-pm4 for amd compute queues, ...; docs/encoded.md), the stream files and STEM.mem (kernel\n"
    "  arguments, QMDs). `# expect:` places follow the commands to their dwords, so `qvet check --expect\n"
    "  DIR/STEM.hcq` checks the encoding. Batches a format cannot carry stay text, with a note.\n"
    "  --format FMT               encode only batches of this format (repeatable; default: every format)\n";

const char* kDecodeHelp =
    "usage: qvet decode FILE\n"
    "\n"
    "  Prints the program in canonical .hcq form with every `submit Q stream FORMAT \"FILE\"` expanded\n"
    "  into the commands it decodes to, each followed by `# FILE:DWORD` (the packet's 1-based dword\n"
    "  number in the stream or region file; docs/encoded.md).\n";

const char* kFixHelp =
    "usage: qvet fix [-o OUT] [--param NAME=VALUE] FILE\n"
    "\n"
    "  Repairs races, signal races, frees in flight and AMD visibility with the waits, signals and\n"
    "  memory barriers qvet proposes (raising a stale wait rather than adding one; none redundant),\n"
    "  checks the repaired program again, and prints a unified diff; line ends are kept. -o OUT\n"
    "  writes the repaired program (through a temporary file: on failure OUT is unchanged).\n"
    "  Findings that need a person (peer-access, value-width, engine, deadlock, use-after-free)\n"
    "  are listed, not changed.\n"
    "  Exit 0 when the result is clean.\n";

const char* kGraphHelp =
    "usage: qvet graph [--around LINE] [--radius N] [--param NAME=VALUE] FILE\n"
    "\n"
    "  Prints the happens-before graph as DOT: one cluster per queue, program order solid,\n"
    "  signal->wait edges dashed, races red. --around keeps only events within --radius hops\n"
    "  (default 3) of the commands on LINE.\n";

const char* kSimHelp =
    "usage: qvet sim [options] FILE\n"
    "\n"
    "Executes the program on a simulated machine (docs/simulator.md) under --runs schedules and\n"
    "prints what was observed: races (overlapping conflicting accesses, reads that saw different\n"
    "versions in different runs), hangs, and the final value of every signal. Exit 1 when a race\n"
    "or a hang was observed.\n"
    "\n"
    "  --runs N                   schedules to run (default 100)\n"
    "  --seed S                   the schedule family (default 1): the same seed gives the same runs\n"
    "  --policy random|pct|delay  how schedules are drawn (default random); a list (pct,delay)\n"
    "                             runs --runs schedules of each\n"
    "  --policy witness --witness=FILE\n"
    "                             replay each schedule of `qvet check --witness=FILE` exactly; exit 1\n"
    "                             when one cannot be replayed or its accesses do not overlap\n"
    "  --depth D                  pct: the bug depth searched for (default 3)\n"
    "  --compare                  check the runs against `check`'s prediction (soundness and\n"
    "                             coverage); exit 1 on a soundness violation\n"
    "  --format text|json         the --compare report (default text)\n"
    "  --trace OUT.json           write a run as Chrome trace events (Perfetto, chrome://tracing): the first in\n"
    "                             which a race or hang was observed (else the first); its title says which\n"
    "  --timeline OUT.svg         write that run as an SVG timeline, titled the same way\n"
    "  --run K                    draw run K instead (0-based, numbered across the policies)\n"
    "  --param NAME=VALUE         bind a param (others take their smallest admissible value)\n"
    "  --stats                    print time per phase and peak memory on standard error\n";

const char* kRunHelp =
    "usage: qvet run --on cuda|hip|sim [options] FILE\n"
    "\n"
    "Replays the program through a back end (docs/replay.md): queues become streams, execs probe\n"
    "kernels that log their times and the versions of memory they read, waits and signals the API's\n"
    "operations on 64-bit words. A program with errors is refused unless --force; a predicted\n"
    "deadlock is never submitted. A watchdog releases any wait that outlives --timeout-ms by writing\n"
    "its word from the host, and reports the hang. Exit 1 when a race or a hang was observed (with\n"
    "--compare: on a soundness violation), 4 when the device is not available.\n"
    "\n"
    "  --on cuda|hip|sim          the back end (sim: an in-process machine with the APIs' semantics)\n"
    "  --runs N                   runs (default 10)\n"
    "  --seed S                   exec durations and the sim back end's schedules (default 1)\n"
    "  --compare                  check the runs against `check`'s prediction, as `qvet sim --compare`\n"
    "  --format text|json         the --compare report (default text)\n"
    "  --force                    run a program with errors, to observe its races (never a deadlock)\n"
    "  --map gpu0=0,gpu1=0        logical devices onto physical GPUs (default round robin)\n"
    "  --timeout-ms T             the watchdog's bound on any wait (default 2000)\n"
    "  --trace OUT.json           write the first run as Chrome trace events\n"
    "  --plan                     print the replay plan (the API calls) and exit\n"
    "  --param NAME=VALUE         bind a param (others take their smallest admissible value)\n";


// `print`, and `decode` (the same with each decoded command's `# FILE:DWORD`; .hcq only).
int cmd_print(const Args& a, bool decode) {
  if (a.help) return std::cout << (decode ? kDecodeHelp : kPrintHelp), 0;
  if (a.files.size() != 1) throw UsageError{std::string(decode ? "decode" : "print") + " needs exactly one FILE"};
  std::string fmt = a.format.empty() ? "hcq" : a.format;
  if (fmt != "hcq" && (fmt != "json" || decode)) throw UsageError{"unknown --format '" + fmt + (decode ? "' (decode prints .hcq)" : "' (hcq or json)")};
  SourceSet src;
  LoadResult r = load_program(src, a.files[0], a.load);
  if (!r.program) return report_input_error(*r.error, src);
  std::cout << (fmt == "json" ? write_json_program(*r.program, src) : decode ? print_decoded(*r.program, src) : print_program(*r.program));
  return 0;
}

// `encode`: the program's batches as binary streams (cli/encode.h), written into -o DIR.
int cmd_encode(const Args& a) {
  if (a.help) return std::cout << kEncodeHelp, 0;
  if (a.files.size() != 1) throw UsageError{"encode needs exactly one FILE"};
  if (a.out.empty()) throw UsageError{"encode needs -o DIR"};
  SourceSet src;
  LoadResult l = load_program(src, a.files[0], a.load);
  if (!l.program) return report_input_error(*l.error, src);
  if (l.program->file != 1) throw UsageError{"encode needs .hcq text (print JSON back to .hcq first: qvet print FILE.json)"};
  namespace fs = std::filesystem;
  EncodeOptions opt;
  opt.formats = a.formats;
  opt.stem = fs::path(a.files[0] == "-" ? "stdin" : a.files[0]).stem().string();
  // The stem names the files the encoded program quotes, whose names are printable ASCII without
  // quotes (docs/encoded.md): anything else becomes '_'.
  for (char& ch : opt.stem)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-' && ch != '.') ch = '_';
  if (opt.stem.empty()) opt.stem = "program";
  EncodeOutput e;
  try {
    e = encode_program(*l.program, src, opt);
  } catch (const InputError& err) {
    return report_input_error(input_diagnostic(err), src);
  }
  std::error_code ec;
  fs::create_directories(a.out, ec);
  if (!fs::is_directory(a.out)) {
    std::cerr << "qvet: error: cannot create directory '" << a.out << "'" << (ec ? ": " + ec.message() : "") << "\n";
    return 2;
  }
  // Never over the program it reads: the encoded text replaces the batches it came from.
  if (a.files[0] != "-" && fs::equivalent(a.files[0], fs::path(a.out) / e.files[0].name, ec)) {
    std::cerr << "qvet: error: encode would write over its input '" << a.files[0] << "' (choose another -o DIR)\n";
    return 2;
  }
  for (const EncodeOutput::File& f : e.files) {
    std::string err;
    if (!write_file_atomic((fs::path(a.out) / f.name).string(), f.bytes, err)) {
      std::cerr << "qvet: error: " << err << "\n";
      return 2;
    }
  }
  for (const std::string& n : e.notes) std::cerr << a.files[0] << ": note: " << n << "\n";
  std::cout << "qvet encode: " << e.encoded << " batch(es) encoded, " << e.kept << " kept as text: " << (fs::path(a.out) / e.files[0].name).string()
            << "\n";
  return 0;
}

int cmd_graph(const Args& a) {
  if (a.help) return std::cout << kGraphHelp, 0;
  if (a.files.size() != 1) throw UsageError{"graph needs exactly one FILE"};
  SourceSet src;
  int rc = 0;
  std::optional<Program> l;
  Trace t;
  if (!load_elaborated(src, a, l, t, rc)) return rc;
  CheckResult res = check_trace(t);
  std::vector<std::pair<Loc, Loc>> races;
  for (auto& d : res.diagnostics)
    if (d.is(Rule::Race) && !d.related.empty()) races.push_back({d.loc, d.related[0].loc});
  std::cout << render_dot(happens_before_graph(*res.engine, races, {a.around, a.radius}));
  return 0;
}

int cmd_fix(const Args& a) {
  if (a.help) return std::cout << kFixHelp, 0;
  if (a.files.size() != 1) throw UsageError{"fix needs exactly one FILE"};
  SourceSet src;
  LoadResult l = load_program(src, a.files[0]);
  if (!l.program) return report_input_error(*l.error, src);
  if (l.program->file != 1) throw UsageError{"fix needs .hcq text (print JSON back to .hcq first: qvet print FILE.json)"};
  std::function<bool(const std::vector<Stmt>&)> streams = [&](const std::vector<Stmt>& ss) {
    return std::any_of(ss.begin(), ss.end(), [&](const Stmt& st) {
      return streams(st.body) ||
             std::any_of(st.cmds.begin(), st.cmds.end(), [&](const Command& c) { return c.loc.file != l.program->file; });
    });
  };
  if (streams(l.program->stmts))
    throw UsageError{"fix edits .hcq text, and this program submits binary streams (docs/encoded.md); fix `qvet decode FILE` instead"};
  VerifyOptions o;
  o.fixed = a.params;
  if (a.event_budget) o.event_budget = a.event_budget;
  RepairResult r = repair_program(src.name(l.program->file), src.text(l.program->file), o);
  if (!r.input_ok) return report_input_error(r.input_error, src);
  std::string name = src.name(l.program->file);
  std::cout << r.diff << std::flush;  // all of it before the summary on standard error
  for (auto& f : r.applied) std::cerr << "applied: " << f.description << "\n";
  for (auto& d : r.unfixable)
    std::cerr << format_loc(d.loc, src) << ": cannot fix [" << d.rule << "]: " << d.message
              << (d.fixes.empty() ? "" : " (" + d.fixes[0].description + ")") << "\n";
  if (!a.out.empty() && !write_output(a.out, r.fixed_text, true)) return 2;  // (-o FILE: repaired in place)
  size_t errors = 0;
  for (auto& d : r.after) errors += d.severity != Severity::Note;
  if (r.applied.empty() && r.clean) std::cerr << name << ": nothing to fix: the program checks clean\n";
  else if (r.clean)
    std::cerr << name << ": the repaired program checks clean (verified with " << r.checks << " check(s); " << r.applied.size()
              << " fix(es)" << (r.irredundant ? ", none of them redundant" : "") << ")\n";
  else
    std::cerr << name << ": " << errors << " error(s) and warning(s) remain in the repaired program\n";
  return r.clean ? 0 : 1;
}

// --policy witness: each schedule replayed, and whether its two accesses overlapped.
int replay_witnesses(const Trace& t, const Simulator& sim, SimOptions o, const std::vector<Schedule>& schedules,
                     const std::string& name) {
  std::vector<EventRef> owner = access_owners(t);
  int rc = 0;
  for (size_t i = 0; i < schedules.size(); ++i) {
    const Schedule& s = schedules[i];
    o.replay = &s;
    ObservedRun r = sim.run(o, 0);
    std::string error;
    bool exact = replayed(s, r, error), overlapped = false;
    for (const Hang& h : r.hung)
      if (h.missed && !exact) {
        error += " (a wait hung: the value it needed was overwritten before it looked, a lost wakeup; docs/simulator.md)";
        break;
      }
    for (const Overlap& ov : r.overlaps) {
      EventRef x = owner[ov.a], y = owner[ov.b];
      overlapped |= s.racing.size() == 2 && ((x == s.racing[0] && y == s.racing[1]) || (x == s.racing[1] && y == s.racing[0]));
    }
    std::cout << name << ": witness " << i + 1 << " (race at line " << s.line << ", related line " << s.related_line << "): "
              << (exact ? "replayed exactly" : "not replayed: " + error) << "; "
              << (overlapped ? "the two accesses overlapped" : "the two accesses did not overlap") << "\n";
    if (!exact || !overlapped) rc = 1;
  }
  return rc;
}

int cmd_sim(const Args& a) {
  if (a.help) return std::cout << kSimHelp, 0;
  if (a.files.size() != 1) throw UsageError{"sim needs exactly one FILE"};
  SimOptions o;
  std::vector<Policy> policies;  // --policy pct,delay: --runs of each
  for (size_t b = 0; b <= a.policy.size();) {
    size_t e = std::min(a.policy.find(',', b), a.policy.size());
    if (!parse_policy(a.policy.substr(b, e - b), o.policy))
      throw UsageError{"unknown --policy '" + a.policy.substr(b, e - b) + "' (random, pct or delay)"};
    policies.push_back(o.policy);
    b = e + 1;
  }
  std::string fmt = a.format.empty() ? "text" : a.format;
  if (fmt != "text" && fmt != "json") throw UsageError{"unknown --format '" + fmt + "' (text or json)"};
  if (a.runs == 0) throw UsageError{"--runs needs at least 1"};
  if (a.depth < 1) throw UsageError{"--depth needs at least 1"};
  o.seed = a.seed;
  o.pct_depth = a.depth;
  SourceSet src;
  int rc = 0;
  std::optional<Program> l;
  Trace t;
  Stopwatch sw;
  if (!load_elaborated(src, a, l, t, rc)) return rc;
  double t_load = sw.lap();
  std::string name = src.name(l->file);
  // The prediction: what --compare checks, and the races the delay policy stretches.
  std::optional<Prediction> pred;
  if (a.compare || std::count(policies.begin(), policies.end(), Policy::Delay)) {
    if (t.accesses.size() > Prediction::kMaxAccesses)
      throw UsageError{"--compare and --policy delay pair up accesses, for programs of at most " +
                       std::to_string(Prediction::kMaxAccesses) + " accesses (this one has " + std::to_string(t.accesses.size()) + ")"};
    pred.emplace(t);
    o.delay_pairs = pred->races();
  }
  std::vector<Schedule> schedules;  // --policy witness
  if (std::count(policies.begin(), policies.end(), Policy::Witness)) {
    if (policies.size() != 1 || a.witness_file.empty()) throw UsageError{"--policy witness needs --witness=FILE, and no other policy"};
    std::string text, error;
    if (!read_file(a.witness_file, text, &error) || !read_witnesses(text, t, schedules, error)) {
      std::cerr << "qvet: error: " << a.witness_file << ": " << error << "\n";
      return 2;
    }
    if (schedules.empty()) throw UsageError{a.witness_file + " holds no schedule"};
    o.replay = &schedules[0];
  }
  // Reads' versions name the writers a race involves; a very large program keeps fingerprints only.
  o.record_seen = t.accesses.size() <= 1'000'000;
  Simulator sim(t);
  if (!a.trace_file.empty() || !a.timeline_file.empty()) {
    // The run drawn: --run K (numbered across the policies, as --compare numbers them), else the
    // first in which a race or a hang was observed, else the first; the title says which.
    const uint64_t total = a.runs * policies.size();
    if (a.run_given && a.run >= total)
      throw UsageError{"--run " + std::to_string(a.run) + ": there are " + std::to_string(total) + " run(s) (0 to " + std::to_string(total - 1) + ")"};
    auto run_k = [&](uint64_t k) { return o.policy = policies[k / a.runs], sim.run(o, k % a.runs); };
    uint64_t k = a.run_given ? a.run : 0;
    ObservedRun r = run_k(k);
    std::string finding = run_finding(t, r);
    for (uint64_t j = 1; !a.run_given && finding.empty() && j < total; ++j)
      if (ObservedRun rj = run_k(j); !run_finding(t, rj).empty()) k = j, r = std::move(rj), finding = run_finding(t, r);
    std::string title = "run " + std::to_string(k) + " of " + std::to_string(total) + ", policy " + policy_name(policies[k / a.runs]) + ": " +
                        (!finding.empty() ? finding : a.run_given ? "no race or hang observed in it" : "no race or hang observed in any run");
    if (!a.trace_file.empty() && !write_output(a.trace_file, chrome_trace(t, r, src, title))) return 2;
    if (!a.timeline_file.empty() && !write_output(a.timeline_file, timeline_svg(t, r, src, title))) return 2;
  }
  if (!schedules.empty()) return replay_witnesses(t, sim, o, schedules, name);
  if (a.compare) {
    Comparison cmp(*pred);
    for (size_t k = 0; k < policies.size(); ++k)  // runs are numbered across the policies
      for (uint64_t i = 0; i < a.runs; ++i) o.policy = policies[k], cmp.add(sim.run(o, i), k * a.runs + i);
    cmp.finish();
    std::cout << (fmt == "json" ? cmp.json(name) : cmp.table(name));
    return cmp.soundness_violations() ? 1 : 0;
  }
  SimSummary sum(t);
  double t_prepare = sw.lap(), t_run = 0, t_sum = 0;
  for (Policy p : policies)
    for (uint64_t i = 0; i < a.runs; ++i) {
      o.policy = p;
      ObservedRun r = sim.run(o, i);
      t_run += sw.lap();
      sum.add(r);
      t_sum += sw.lap();
    }
  if (a.stats)
    std::cerr << "stats: " << t.cmds.size() << " commands; load+elaborate " << t_load << " s, prepare " << t_prepare
              << " s, simulate " << t_run << " s (" << t_run / double(a.runs * policies.size()) << " s per run), summarise "
              << t_sum << " s, peak RSS " << peak_rss_kb() / 1024 << " MiB\n";
  std::cout << name << ": " << a.runs * policies.size() << " run(s), policy " << a.policy << ", seed " << o.seed << ": "
            << t.cmds.size() << " command(s), " << t.host.size() << " host statement(s)\n"
            << sum.text(src) << "qvet sim: " << sum.races() << " race(s), " << sum.hangs() << " hang(s), " << sum.unacquired()
            << " unacquired read(s) observed\n";
  return sum.races() || sum.hangs() ? 1 : 0;
}


// --map gpu0=0,gpu1=0: per logical device, its physical GPU (kNone: round robin).
std::vector<uint32_t> parse_map(const std::string& map, const Program& p) {
  std::vector<uint32_t> out;
  if (map.empty()) return out;
  out.assign(p.devices.size(), kNone);
  for (size_t b = 0; b <= map.size();) {
    size_t e = std::min(map.find(',', b), map.size());
    std::string item = map.substr(b, e - b);
    auto eq = item.find('=');
    if (eq == std::string::npos) throw UsageError{"--map needs DEVICE=GPU items, got '" + item + "'"};
    std::string dev = item.substr(0, eq);
    auto it = std::find_if(p.devices.begin(), p.devices.end(), [&](const Device& d) { return d.name == dev; });
    if (it == p.devices.end()) throw UsageError{"--map: the program has no device '" + dev + "'"};
    i128 g = parse_number(item.substr(eq + 1), "--map " + dev);
    if (g < 0 || g > 1024) throw UsageError{"--map " + dev + ": no GPU " + item.substr(eq + 1)};
    out[size_t(it - p.devices.begin())] = uint32_t(g);
    b = e + 1;
  }
  uint32_t next = 0;  // devices the map leaves out: round robin over GPU numbers from 0
  for (uint32_t& g : out)
    if (g == kNone) g = next++;
  return out;
}

int cmd_run(const Args& a) {
  if (a.help) return std::cout << kRunHelp, 0;
  if (a.files.size() != 1) throw UsageError{"run needs exactly one FILE"};
  if (a.on.empty()) throw UsageError{"run needs --on cuda, hip or sim"};
  std::string fmt = a.format.empty() ? "text" : a.format;
  if (fmt != "text" && fmt != "json") throw UsageError{"unknown --format '" + fmt + "' (text or json)"};
  uint64_t runs = a.runs_given ? a.runs : 10;
  if (runs == 0) throw UsageError{"--runs needs at least 1"};
  if (a.timeout_ms == 0 || a.timeout_ms > 3'600'000) throw UsageError{"--timeout-ms is between 1 and 3600000"};
  SourceSet src;
  int rc = 0;
  std::optional<Program> l;
  Trace t;
  if (!load_elaborated(src, a, l, t, rc)) return rc;
  std::string name = src.name(l->file);
  std::vector<uint32_t> map = parse_map(a.map, *l);
  PlanOptions po;
  po.seed = a.seed;
  std::optional<Plan> plan;
  try {
    plan.emplace(make_plan(t, po));
  } catch (const InputError& e) {
    Diagnostic d = input_diagnostic(e);
    if (!d.loc.file) d.loc.file = l->file;
    return report_input_error(d, src);
  }
  if (a.plan) return std::cout << describe(*plan, t), 0;
  if (t.accesses.size() > Prediction::kMaxAccesses)
    throw UsageError{"run checks the program first, pairing up accesses, for programs of at most " +
                     std::to_string(Prediction::kMaxAccesses) + " accesses (this one has " + std::to_string(t.accesses.size()) + ")"};
  Prediction pred(t);
  size_t errors = 0, deadlocks = 0;
  for (const Diagnostic& d : pred.diagnostics()) {
    errors += d.severity == Severity::Error;
    deadlocks += d.rule == rule_info(Rule::Deadlock).id;
  }
  if (deadlocks) {
    std::cerr << name << ": qvet run: the program has " << deadlocks
              << " predicted deadlock(s) (see `qvet check`); a deadlock is never submitted to a device\n";
    return 1;
  }
  if (errors && !a.force) {
    std::cerr << name << ": qvet run: the program has " << errors
              << " error(s) (see `qvet check`); --force runs it anyway, to observe its races\n";
    return 1;
  }
  std::string error;
  std::unique_ptr<Backend> b = make_backend(a.on, error);
  if (!b && error.rfind("unknown back end", 0) == 0) throw UsageError{error};
  if (!b || !b->open(plan->layout, map, error)) {
    std::cerr << "qvet run: device not available: " << error << "\n";
    return 4;
  }
  ReplayOptions ro;
  ro.timeout_ns = a.timeout_ms * 1'000'000;
  Comparison cmp(pred);
  SimSummary sum(t);
  for (uint64_t i = 0; i < runs; ++i) {
    if (i) po.seed = a.seed + i, redraw_durations(*plan, t, po);  // the same plan; other durations
    ReplayRun r = replay(t, *plan, *b, a.seed + i, ro);
    for (const std::string& n : r.notes) std::cerr << name << ": run " << i + 1 << ": " << n << "\n";
    if (!r.error.empty()) {
      std::cerr << "qvet run: device failed in run " << i + 1 << ": " << r.error << "\n";
      return 4;
    }
    if (i == 0 && !a.trace_file.empty() && !write_output(a.trace_file, chrome_trace(t, r.run, src))) return 2;
    if (a.compare) cmp.add(r.run, i + 1);  // runs count from 1, as in the notes
    else sum.add(r.run);
  }
  if (a.compare) {
    cmp.finish();
    std::cout << (fmt == "json" ? cmp.json(name) : cmp.table(name));
    return cmp.soundness_violations() ? 1 : 0;
  }
  std::cout << name << ": " << runs << " run(s) on " << b->name() << ", seed " << a.seed << ": " << t.cmds.size()
            << " command(s), " << t.host.size() << " host statement(s)\n"
            << sum.text(src) << "qvet run: " << sum.races() << " race(s), " << sum.hangs() << " hang(s) observed\n";
  return sum.races() || sum.hangs() ? 1 : 0;
}

int run(int argc, char** argv) {
  if (argc < 2) return std::cerr << kUsage, 2;
  std::string cmd = argv[1];
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::string topic = argc > 2 ? argv[2] : "";
    if (topic == "check") std::cout << kCheckHelp;
    else if (topic == "print") std::cout << kPrintHelp;
    else if (topic == "decode") std::cout << kDecodeHelp;
    else if (topic == "encode") std::cout << kEncodeHelp;
    else if (topic == "graph") std::cout << kGraphHelp;
    else if (topic == "gen") std::cout << gen_help();
    else if (topic == "fix") std::cout << kFixHelp;
    else if (topic == "sim") std::cout << kSimHelp;
    else if (topic == "run") std::cout << kRunHelp;
    else if (!rule_page(topic).empty()) std::cout << rule_page(topic);
    else if (!topic.empty()) return std::cerr << "qvet: help: no command or rule '" << topic << "'\n" << kUsage, 2;
    else std::cout << kUsage;
    return 0;
  }
  if (cmd == "version" || cmd == "--version") return std::cout << "qvet " << kVersion << "\n", 0;
  if (cmd == "gen") return run_gen(argc, argv);
  Args a = parse_args(argc, argv, 2);
  if (cmd == "check") return cmd_check(a);
  if (cmd == "print" || cmd == "decode") return cmd_print(a, cmd == "decode");
  if (cmd == "graph") return cmd_graph(a);
  if (cmd == "encode") return cmd_encode(a);
  if (cmd == "fix") return cmd_fix(a);
  if (cmd == "sim") return cmd_sim(a);
  if (cmd == "run") return cmd_run(a);
  throw UsageError{"unknown command '" + cmd + "'"};
}

// Output that could not be written (a full disk, a file-size limit) must not pass for success.
int check_stdout(int rc) {
  errno = 0;
  bool failed = !std::cout.flush() || std::fflush(stdout) != 0 || std::ferror(stdout);
  if (!failed) return rc;
  std::cerr << "qvet: error: cannot write standard output" << (errno ? std::string(": ") + std::strerror(errno) : "") << "\n";
  return std::max(rc, 2);
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGXFSZ, SIG_IGN);  // past `ulimit -f` writes fail with EFBIG: reported, not fatal
  try {
    return check_stdout(run(argc, argv));
  } catch (const UsageError& e) {
    std::cerr << "qvet: error: " << e.message << "\n(see `qvet help`)\n";
    return 2;
  } catch (const GenUsageError& e) {
    std::cerr << "qvet gen: error: " << e.what() << "\n(see `qvet help gen`)\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "qvet: internal error: out of memory\n";
    return 3;
  } catch (const std::exception& e) {
    std::cerr << "qvet: internal error: " << e.what() << "\n";
    return 3;
  } catch (...) {
    std::cerr << "qvet: internal error\n";
    return 3;
  }
}
