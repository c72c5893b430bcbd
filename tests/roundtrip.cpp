// The corpus round trip of the stream encoders (docs/encoded.md): for each program, `qvet
// encode` into a directory, read the encoded program back (its streams decoded by the parser),
// and compare the two, apart from the encoder's own decode check:
//   - the same resolved program: declarations and host statements as `qvet print` prints them,
//     and every batch's commands with their ops, signals, values and base-buffer byte ranges
//     (a stream carries pointers into base buffers, not which view a range was written through;
//     kernel names aside: a kernel bound twice with different arguments is NAME_2);
//   - the same verdict: the same findings (rule and severity, with their counts), and the
//     encoded program's remapped `# expect:` lines match its findings.
// Usage: qvet_roundtrip --out DIR [--format FMT]... FILE...   (exit 0 when every file round trips;
// a line for each that does not; --format as `qvet encode`'s)
#include <filesystem>
#include <iostream>
#include <map>

#include "cli/encode.h"
#include "core/atomic_file.h"
#include "core/input_error.h"
#include "core/syntax/expect.h"
#include "core/syntax/parser.h"
#include "core/syntax/printer.h"
#include "verify/verify.h"

using namespace qvet;

namespace {

// Every batch's commands, resolved: "submit c0: wait tl >= 3 | exec k r a[0:4096] w b[16:4096]".
void resolved(const Program& p, const std::vector<Stmt>& ss, std::string& out) {
  auto range = [&](const Range& r) {
    const Buffer& b = p.buffers[r.buffer];
    if (!r.lo.is_constant() || !b.base_lo.is_constant()) return p.buffers[r.base].name + "[symbolic]";
    return p.buffers[r.base].name + "[" + i128_to_string(b.base_lo.constant + r.lo.constant) + ":" +
           i128_to_string(b.base_lo.constant + r.hi.constant) + "]";
  };
  for (const Stmt& s : ss) {
    if (s.kind == StmtKind::Repeat) {
      out += "repeat {\n";
      resolved(p, s.body, out);
      out += "}\n";
    }
    if (s.kind != StmtKind::Submit) continue;
    out += "submit " + p.queues[s.id].name + ":";
    for (const Command& c : s.cmds) {
      out += std::string(" | ") + cmd_op_name(c.op);
      if (c.signal != kNone) out += " " + p.signals[c.signal].name;
      if (c.op == CmdOp::Wait || c.op == CmdOp::Signal) out += " " + to_string(c.value, p.var_names());
      if (c.op == CmdOp::Exec) {
        std::string k = p.kernels[c.kernel];
        // Names aside: NAME_2, NAME_3 are NAME bound with other arguments.
        if (auto u = k.rfind('_'); u != std::string::npos && u + 1 < k.size() &&
                                   k.find_first_not_of("0123456789", u + 1) == std::string::npos)
          k = k.substr(0, u);
        out += " " + k;
      }
      for (const Range& r : c.reads) out += " r " + range(r);
      for (const Range& r : c.writes) out += " w " + range(r);
    }
    out += "\n";
  }
}

// The program without its batches' commands, as printed: declarations and host statements.
std::string skeleton(Program p) {
  std::function<void(std::vector<Stmt>&)> strip = [&](std::vector<Stmt>& ss) {
    for (Stmt& s : ss) s.cmds.clear(), strip(s.body);
  };
  strip(p.stmts);
  return print_program(p);
}

std::map<std::string, int> verdict(const std::vector<Diagnostic>& ds) {
  std::map<std::string, int> v;
  for (const Diagnostic& d : ds) ++v[d.rule + "/" + severity_name(d.severity)];
  return v;
}

std::string show(const std::map<std::string, int>& v) {
  std::string s;
  for (auto& [k, n] : v) s += (s.empty() ? "" : " ") + k + "x" + std::to_string(n);
  return s.empty() ? "clean" : s;
}

// "" when `file` round trips, else why not.
std::string round_trip(const std::string& file, const std::string& out_dir, const std::vector<std::string>& formats, size_t& encoded,
                       size_t& kept) {
  namespace fs = std::filesystem;
  SourceSet src;
  LoadResult a = load_program(src, file);
  if (!a.program) return "does not load: " + a.error->message;
  EncodeOptions opt;
  opt.stem = fs::path(file).stem().string();
  opt.formats = formats;
  EncodeOutput e = encode_program(*a.program, src, opt);
  encoded += e.encoded, kept += e.kept;
  fs::path dir = fs::path(out_dir) / opt.stem;
  fs::create_directories(dir);
  for (auto& f : e.files) {
    std::string err;
    if (!write_file_atomic((dir / f.name).string(), f.bytes, err)) return err;
  }
  SourceSet src2;
  LoadResult b = load_program(src2, (dir / e.files[0].name).string());
  if (!b.program) return "the encoded program does not load: " + format_loc(b.error->loc, src2) + ": " + b.error->message;
  std::string ra, rb;
  resolved(*a.program, a.program->stmts, ra);
  resolved(*b.program, b.program->stmts, rb);
  if (ra != rb) return "the batches differ:\n--- original\n" + ra + "--- encoded\n" + rb;
  if (skeleton(*a.program) != skeleton(*b.program)) return "the declarations or host statements differ";
  VerifyResult va = verify_program(*a.program, {}), vb = verify_program(*b.program, {});
  if (verdict(va.diagnostics) != verdict(vb.diagnostics))
    return "the verdicts differ: " + show(verdict(va.diagnostics)) + " / " + show(verdict(vb.diagnostics));
  if (!b.program->expects.empty()) {
    ExpectOutcome o = match_expectations(b.program->expects, vb.diagnostics, src2);
    if (!o.ok) return "the encoded program's expectations fail: " + o.problems[0];
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir;
  std::vector<std::string> files, formats;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--out" && i + 1 < argc) out_dir = argv[++i];
    else if (s == "--format" && i + 1 < argc) formats.push_back(argv[++i]);
    else files.push_back(s);
  }
  if (out_dir.empty() || files.empty()) return std::cerr << "usage: qvet_roundtrip --out DIR [--format FMT]... FILE...\n", 2;
  int failed = 0;
  size_t encoded = 0, kept = 0;
  for (const std::string& f : files) {
    std::string why;
    try {
      why = round_trip(f, out_dir, formats, encoded, kept);
    } catch (const InputError& e) {
      why = "input error: " + e.message;
    } catch (const std::exception& e) {
      why = std::string("internal error: ") + e.what();
    }
    if (!why.empty()) ++failed, std::cout << "FAIL " << f << ": " << why << "\n";
  }
  std::cout << "qvet_roundtrip: " << files.size() - failed << "/" << files.size() << " programs round trip; " << encoded
            << " batch(es) encoded, " << kept << " kept as text\n";
  return failed ? 1 : 0;
}
