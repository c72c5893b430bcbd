// qvet_syncval: the same programs through qvet and through Vulkan synchronization validation.
//
//   qvet_syncval compare [--random N --seed S --commands C] [--raw] FILE...
//       a table of qvet's race findings and syncval's hazards per program in the subset, the
//       disagreements, and `agreement: A/B programs`
//   qvet_syncval time FILE      syncval's validation time: record + submit + wait with the layer,
//                               and the same without it (seconds, best of 5, runs taking turns)
//   qvet_syncval gen --seed S --commands N [-o FILE]   a random program in the subset
//
// Exit 0, or 2 for bad usage, or 4 when Vulkan, lavapipe or the layer is missing (a skip).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "bench/peers/syncval/subset.h"
#include "bench/peers/syncval/vulkan_peer.h"
#include "checkers/checker.h"
#include "core/syntax/parser.h"

using namespace qvet;
using namespace qvet::peers;

namespace {

int usage() {
  std::cerr << "usage: qvet_syncval compare [--random N --seed S --commands C] [--raw] FILE...\n"
               "       qvet_syncval time FILE\n"
               "       qvet_syncval gen --seed S --commands N [-o FILE]\n";
  return 2;
}

struct Loaded {
  SourceSet src;
  std::optional<Program> program;
  std::optional<Trace> trace;
  std::string error;
};

// Keeps the program and the trace together (the trace points into the program).
std::unique_ptr<Loaded> load(const std::string& name, std::string text) {
  auto l = std::make_unique<Loaded>();
  LoadResult r = load_program_text(l->src, name, std::move(text));
  if (!r.program) {
    l->error = r.error->message;
    return l;
  }
  l->program = std::move(*r.program);
  try {
    l->trace.emplace(elaborate(*l->program, bind_params(*l->program, {})));
  } catch (const InputError& e) {
    l->error = e.message;
  }
  return l;
}

// A finding as both tools can name it: the later command's line, the earlier one's.
using Pair = std::pair<uint32_t, uint32_t>;

struct Row {
  std::string program;
  std::set<uint32_t> qvet_lines, syncval_lines;  // commands with a finding (the later one of a pair)
  std::set<Pair> qvet_pairs, syncval_pairs;
  size_t unmapped = 0;                               // syncval messages that name no command we know
  std::vector<std::string> raw;
  std::vector<std::string> why;                      // each disagreement, explained
};

std::string lines(const std::set<uint32_t>& s) {
  std::string out;
  for (uint32_t l : s) out += (out.empty() ? "" : " ") + std::to_string(l);
  return out.empty() ? "-" : out;
}

std::string pairs(const std::set<Pair>& s) {
  std::string out;
  for (auto [a, b] : s) out += (out.empty() ? "" : " ") + std::to_string(a) + "," + std::to_string(b);
  return out.empty() ? "-" : out;
}

int compare(int argc, char** argv) {
  uint64_t random = 0, seed = 1, commands = 40;
  bool raw = false;
  std::vector<std::string> files;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--random" && i + 1 < argc) random = std::stoull(argv[++i]);
    else if (a == "--seed" && i + 1 < argc) seed = std::stoull(argv[++i]);
    else if (a == "--commands" && i + 1 < argc) commands = std::stoull(argv[++i]);
    else if (a == "--raw") raw = true;
    else if (!a.empty() && a[0] == '-') return usage();
    else files.push_back(a);
  }
  VulkanPeer peer(true);
  if (std::string e = peer.open(); !e.empty()) {
    std::cout << "skip: " << e << "\n";
    return 4;
  }
  std::vector<std::pair<std::string, std::string>> inputs;  // (name, text)
  for (const std::string& f : files) {
    std::string text, err;
    if (!read_file(f, text, &err)) {
      std::cerr << f << ": " << err << "\n";
      return 2;
    }
    inputs.push_back({f, text});
  }
  for (uint64_t k = 0; k < random; ++k)
    inputs.push_back({"random seed " + std::to_string(seed + k), random_subset_program(seed + k, commands)});
  std::vector<Row> rows;
  size_t outside = 0;
  for (auto& [name, text] : inputs) {
    auto l = load(name, text);
    if (!l->trace) {
      std::cout << "error: " << name << ": " << l->error << "\n";
      return 2;
    }
    const Trace& t = *l->trace;
    if (std::string why = outside_subset(t, peer.storage_alignment()); !why.empty()) {
      ++outside;
      if (!files.empty() && raw) std::cout << "outside the subset: " << name << ": " << why << "\n";
      continue;
    }
    Row row;
    row.program = name;
    std::map<uint32_t, std::set<uint32_t>> partners;  // qvet: later line -> the earlier lines
    std::set<uint32_t> partial;                        // lines whose partner list was cut at 8
    for (const Diagnostic& d : check_trace(t).diagnostics) {
      if (!d.is(Rule::Race)) continue;
      row.qvet_lines.insert(d.loc.line);
      row.qvet_pairs.insert({d.loc.line, d.related_loc().line});
      partners[d.loc.line].insert(d.related_loc().line);  // and the others of its group
      partners[d.loc.line].insert(d.group.lines.begin(), d.group.lines.end());
      if (d.group.cut) partial.insert(d.loc.line);
    }
    PeerRun run = peer.run(t);
    if (!run.skipped.empty()) {
      std::cout << "skip: " << run.skipped << "\n";
      return 4;
    }
    for (const Hazard& h : run.hazards) {
      if (raw) row.raw.push_back(h.message);
      if (h.cmd == kNone) {
        ++row.unmapped;
        continue;
      }
      uint32_t a = t.cmds[h.cmd].loc.line;
      row.syncval_lines.insert(a);
      if (h.prior != kNone) row.syncval_pairs.insert({a, t.cmds[h.prior].loc.line});
    }
    // Explain each difference. A line's commands (a loop repeats lines) and their buffers.
    std::map<uint32_t, std::vector<uint32_t>> cmds_of_line;
    for (uint32_t id = 0; id < t.cmds.size(); ++id) cmds_of_line[t.cmds[id].loc.line].push_back(id);
    std::set<uint32_t> submit_reported;  // command buffers with a hazard reported at vkQueueSubmit
    for (const Hazard& h : run.hazards)
      if (h.at_submit && h.cmd != kNone) submit_reported.insert(run.cb_of[h.cmd]);
    // Whether x and y write some byte both.
    auto waw = [&](uint32_t x, uint32_t y) {
      for (uint32_t i = t.cmds[x].acc_begin; i < t.cmds[x].acc_end; ++i)
        for (uint32_t j = t.cmds[y].acc_begin; j < t.cmds[y].acc_end; ++j) {
          const Access &p = t.accesses[i], &q = t.accesses[j];
          if (p.write && q.write && p.buffer == q.buffer && p.lo < q.hi && q.lo < p.hi) return true;
        }
      return false;
    };
    // Vulkan's rules, read plainly for this subset: command y (earlier on the queue) is ordered
    // before x by a barrier between them, or by a host wait, before x's batch, on the fence of
    // a signal after y.
    auto vulkan_orders = [&](uint32_t y, uint32_t x) {
      if (t.cmds[y].index > t.cmds[x].index) std::swap(x, y);
      const auto& q = t.queue_cmds[0];
      for (uint32_t i = t.cmds[y].index + 1; i < t.cmds[x].index; ++i)
        if (t.cmds[q[i]].op == CmdOp::Barrier) return true;
      for (uint32_t h = 0; h < t.cmds[x].submit; ++h) {
        if (t.host[h].op != HostOp::Wait) continue;
        for (uint32_t s : q)  // the first signal that satisfies it: the fence waited for
          if (t.cmds[s].op == CmdOp::Signal && t.cmds[s].signal == t.host[h].signal && t.cmds[s].value >= t.host[h].value) {
            if (t.cmds[s].index > t.cmds[y].index && t.cmds[s].submit < h) return true;
            break;
          }
      }
      return false;
    };
    for (uint32_t l : row.qvet_lines) {
      if (row.syncval_lines.count(l)) continue;
      std::string why;
      bool genuine = false;  // some partner pair is unordered by Vulkan's rules too
      for (uint32_t o : partners[l])
        for (uint32_t x : cmds_of_line[l])
          for (uint32_t y : cmds_of_line[o]) genuine |= x != y && !vulkan_orders(y, x);
      // Seen on two- and three-line programs (docs/peers.md): within a command buffer, syncval
      // does not report a dispatch writing bytes an earlier dispatch wrote, and it stops at the
      // first hazard of a binding's range, so the hazards of that binding past it go too.
      bool same_cb = false, dispatch_waw = false;
      for (uint32_t o : partners[l])
        for (uint32_t x : cmds_of_line[l])
          for (uint32_t y : cmds_of_line[o]) {
            if (run.cb_of[x] != run.cb_of[y]) continue;
            same_cb = true;
            dispatch_waw |= t.cmds[x].op == CmdOp::Exec && t.cmds[y].op == CmdOp::Exec && waw(x, y);
          }
      bool submit_shadowed = true;
      for (uint32_t x : cmds_of_line[l]) submit_shadowed &= submit_reported.count(run.cb_of[x]) > 0;
      if (partial.count(l)) why = "UNEXPLAINED: qvet's list of partners is cut at 8";
      else if (dispatch_waw) why = "syncval limitation: a write after a write by two dispatches of one command buffer is not reported";
      else if (!genuine) why = "UNEXPLAINED: qvet reports a pair that Vulkan's rules order (a qvet bug?)";
      else if (same_cb) why = "syncval false negative: one command buffer, no barrier between the two (cause not known)";
      else if (submit_shadowed) why = "syncval limitation: at vkQueueSubmit only the first hazard of a command buffer is reported";
      else why = "syncval false negative: between command buffers, no barrier or fence wait orders the two (cause not known)";
      row.why.push_back("line " + std::to_string(l) + ": " + why);
    }
    for (uint32_t l : row.syncval_lines)
      if (!row.qvet_lines.count(l)) row.why.push_back("line " + std::to_string(l) + ": UNEXPLAINED: a hazard qvet does not report (a missed race?)");
    rows.push_back(std::move(row));
  }
  size_t agree = 0;
  std::cout << "| program | qvet races (later line) | syncval hazards (later line) | qvet pairs | syncval pairs | agree |\n"
               "| --- | --- | --- | --- | --- | --- |\n";
  for (const Row& r : rows) {
    bool ok = r.qvet_lines == r.syncval_lines && r.unmapped == 0;
    agree += ok;
    std::cout << "| " << r.program << " | " << lines(r.qvet_lines) << " | " << lines(r.syncval_lines)
              << (r.unmapped ? " (+" + std::to_string(r.unmapped) + " unmapped)" : "") << " | " << pairs(r.qvet_pairs) << " | "
              << pairs(r.syncval_pairs) << " | " << (ok ? "yes" : "**no**") << " |\n";
    for (const std::string& m : r.raw) std::cout << "    " << m << "\n";
  }
  // The disagreements, by explanation.
  std::map<std::string, std::vector<std::string>> by_reason;
  for (const Row& r : rows)
    for (const std::string& w : r.why) by_reason[w.substr(w.find(": ") + 2)].push_back(r.program + " " + w.substr(0, w.find(": ")));
  if (!by_reason.empty()) std::cout << "\nDisagreements (a finding one tool has and the other has not):\n";
  for (auto& [reason, where] : by_reason) {
    std::cout << "- " << where.size() << " x " << reason << ": ";
    for (size_t i = 0; i < where.size() && i < 6; ++i) std::cout << (i ? "; " : "") << where[i];
    std::cout << (where.size() > 6 ? "; ..." : "") << "\n";
  }
  std::cout << "outside the subset: " << outside << " program(s)\n";
  std::cout << "agreement: " << agree << "/" << rows.size() << " programs\n";
  return 0;
}

int time_it(int argc, char** argv) {
  if (argc != 1) return usage();
  std::string text, err;
  if (!read_file(argv[0], text, &err)) {
    std::cerr << argv[0] << ": " << err << "\n";
    return 2;
  }
  auto l = load(argv[0], text);
  if (!l->trace) {
    std::cerr << "error: " << l->error << "\n";
    return 2;
  }
  // Both instances first, then runs taking turns (5 each, the best kept), so that a slow moment
  // of the machine falls on both sides.
  double best[2] = {1e300, 1e300};
  size_t hazards = 0;
  VulkanPeer plain(false), layer(true);
  for (VulkanPeer* peer : {&plain, &layer}) {
    if (std::string e = peer->open(); !e.empty()) {
      std::cout << "skip: " << e << "\n";
      return 4;
    }
    if (std::string why = outside_subset(*l->trace, peer->storage_alignment()); !why.empty()) {
      std::cerr << "outside the subset: " << why << "\n";
      return 2;
    }
  }
  for (int k = 0; k < 10; ++k) {
    VulkanPeer& peer = k % 2 ? layer : plain;
    PeerRun r = peer.run(*l->trace);
    if (!r.skipped.empty()) {
      std::cout << "skip: " << r.skipped << "\n";
      return 4;
    }
    best[k % 2] = std::min(best[k % 2], r.seconds);
    if (k % 2) hazards = r.hazards.size();
  }
  std::printf("without-layer %.4f with-syncval %.4f syncval %.4f hazards %zu\n", best[0], best[1], std::max(0.0, best[1] - best[0]), hazards);
  return 0;
}

int gen(int argc, char** argv) {
  uint64_t seed = 1, commands = 1000;
  std::string out;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seed" && i + 1 < argc) seed = std::stoull(argv[++i]);
    else if (a == "--commands" && i + 1 < argc) commands = std::stoull(argv[++i]);
    else if (a == "-o" && i + 1 < argc) out = argv[++i];
    else return usage();
  }
  std::string text = random_subset_program(seed, commands);
  if (out.empty()) std::cout << text;
  else if (!(std::ofstream(out) << text)) return std::cerr << "cannot write " << out << "\n", 2;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  std::string cmd = argv[1];
  try {
    if (cmd == "compare") return compare(argc - 2, argv + 2);
    if (cmd == "time") return time_it(argc - 2, argv + 2);
    if (cmd == "gen") return gen(argc - 2, argv + 2);
  } catch (const std::exception& e) {
    std::cerr << "qvet_syncval: " << e.what() << "\n";
    return 2;
  }
  return usage();
}
