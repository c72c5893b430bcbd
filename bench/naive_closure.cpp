// The naive baseline for bench/run.sh: the same happens-before graph as explicit edges
// (start/end per command, one node per host statement), and its transitive closure as one
// bitset per node. Quadratic in memory: it only runs where that fits.
// Usage: qvet_bench_naive FILE.hcq   (prints nodes, edges, seconds, MiB)
#include <chrono>
#include <cstdio>
#include <vector>

#include "core/syntax/parser.h"
#include "model/engine.h"
#include "model/queue_rules.h"

using namespace qvet;

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: qvet_bench_naive FILE.hcq\n"), 2;
  SourceSet src;
  LoadResult r = load_program(src, argv[1]);
  if (!r.program) return std::fprintf(stderr, "%s\n", r.error->message.c_str()), 2;
  Trace t = elaborate(*r.program, bind_params(*r.program, {}));
  Engine e(t);  // for the wait resolutions (which write satisfies which wait)
  EngineObserver none;
  e.run(none);
  auto t0 = std::chrono::steady_clock::now();
  const Program& p = *r.program;
  size_t n = t.cmds.size(), V = 2 * n + t.host.size();
  auto S = [](uint32_t c) { return size_t(2 * c); };
  auto E = [](uint32_t c) { return size_t(2 * c + 1); };
  auto H = [&](uint32_t h) { return 2 * n + h; };
  std::vector<std::vector<uint32_t>> preds(V);
  auto edge = [&](size_t a, size_t b) { preds[b].push_back(uint32_t(a)); };
  for (uint32_t c = 0; c < n; ++c) edge(S(c), E(c));
  // Queue order: the engine's rules (model/queue_rules.h) as edges.
  for (uint32_t q = 0; q < t.queue_cmds.size(); ++q) {
    QueueOrder order(queue_mode(p, q));
    const auto& list = t.queue_cmds[q];
    std::vector<uint32_t> since_all;  // ends not yet folded into an all-ended point
    int64_t last_all = -1, last_exec = -1;
    for (size_t i = 0; i < list.size(); ++i) {
      uint32_t c = list[i];
      QueueStep rule = order.next(t.cmds[c].op, t.cmds[c].submit);
      if (i) edge(S(list[i - 1]), S(c));
      if (rule.after_chain) edge(E(uint32_t(last_exec)), S(c));
      if (rule.release) edge(E(uint32_t(last_exec)), E(c));
      if (rule.after_all) {
        for (uint32_t x : since_all) edge(E(x), E(c));
        if (last_all >= 0) edge(E(uint32_t(last_all)), E(c));
        since_all.clear();
        last_all = c;
      } else {
        since_all.push_back(c);
      }
      if (rule.blocks && i + 1 < list.size()) edge(E(c), S(list[i + 1]));
      if (rule.starts_chain) last_exec = c;
    }
  }
  for (uint32_t h = 0; h < t.host.size(); ++h) {
    if (h) edge(H(h - 1), H(h));
    for (uint32_t c = t.host[h].cmd_begin; c < t.host[h].cmd_end && t.host[h].op == HostOp::Submit; ++c) edge(H(h), S(c));
  }
  auto node_of = [&](EventRef ev) { return ev.host ? H(ev.id) : E(ev.id); };
  for (uint32_t c = 0; c < n; ++c)
    if (auto* res = e.resolution({false, c}); res && res->count() == 1 && !res->initial_candidate)
      edge(node_of(e.writes(res->cond.signal)[res->candidate(0)].event), E(c));
  for (uint32_t h = 0; h < t.host.size(); ++h)
    if (auto* res = e.resolution({true, h}); res && res->count() == 1 && !res->initial_candidate)
      edge(node_of(e.writes(res->cond.signal)[res->candidate(0)].event), H(h));
  size_t edges = 0;
  for (auto& pl : preds) edges += pl.size();
  // Kahn's order, then closure: reach(v) = union of reach(u) + u over predecessors u.
  std::vector<std::vector<uint32_t>> succ(V);
  std::vector<uint32_t> indeg(V, 0), order;
  for (size_t v = 0; v < V; ++v)
    for (uint32_t u : preds[v]) succ[u].push_back(uint32_t(v)), ++indeg[v];
  for (size_t v = 0; v < V; ++v)
    if (!indeg[v]) order.push_back(uint32_t(v));
  for (size_t i = 0; i < order.size(); ++i)
    for (uint32_t w : succ[order[i]])
      if (!--indeg[w]) order.push_back(w);
  size_t words = (V + 63) / 64;
  std::vector<uint64_t> reach(V * words, 0);
  for (uint32_t v : order)
    for (uint32_t u : preds[v]) {
      uint64_t* rv = &reach[size_t(v) * words];
      const uint64_t* ru = &reach[size_t(u) * words];
      for (size_t w = 0; w < words; ++w) rv[w] |= ru[w];
      rv[u / 64] |= uint64_t(1) << (u % 64);
    }
  // The race query the checker answers: is end(a) before start(b), for every pair of commands.
  size_t ordered = 0;
  for (uint32_t b = 0; b < n; ++b)
    for (uint32_t a = 0; a < n; a += 97) ordered += (reach[S(b) * words + E(a) / 64] >> (E(a) % 64)) & 1;
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%zu nodes, %zu edges, closure %.3f s, %.1f MiB (%zu sampled ordered pairs)\n", V, edges, secs,
              double(reach.size() * 8) / (1 << 20), ordered);
  return 0;
}
