#include "model/graph.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <map>

#include "core/syntax/printer.h"

namespace qvet {

DotGraph happens_before_graph(const Engine& e, const std::vector<std::pair<Loc, Loc>>& races, const GraphOptions& opt) {
  const Trace& t = e.trace();
  const Program& p = *t.program;
  // Node ids: commands first, then host events.
  size_t nc = t.cmds.size(), n = nc + t.host.size();
  auto node = [&](EventRef ev) { return ev.host ? nc + ev.id : size_t(ev.id); };
  auto loc = [&](size_t v) { return v < nc ? t.cmds[v].loc : t.host[v - nc].loc; };
  using Edge = DotGraph::Edge;
  std::vector<Edge> edges;
  for (auto& list : t.queue_cmds)
    for (size_t i = 1; i < list.size(); ++i) edges.push_back({Edge::Order, list[i - 1], list[i], ""});
  for (size_t h = 1; h < t.host.size(); ++h) edges.push_back({Edge::Order, nc + h - 1, nc + h, ""});
  for (size_t h = 0; h < t.host.size(); ++h)
    if (t.host[h].op == HostOp::Submit && t.host[h].cmd_begin < t.host[h].cmd_end)
      edges.push_back({Edge::Submit, nc + h, t.host[h].cmd_begin, ""});
  auto add_wait_edges = [&](EventRef w) {
    const WaitResolution* r = e.resolution(w);
    if (!r) return;
    for (size_t k = 0; k < r->count(); ++k) {
      const SignalWrite& sw = e.writes(r->cond.signal)[r->candidate(k)];
      edges.push_back({Edge::Wait, node(sw.event), node(w), p.signals[r->cond.signal].name});
    }
  };
  for (uint32_t id = 0; id < nc; ++id)
    if (t.cmds[id].op == CmdOp::Wait) add_wait_edges({false, id});
  for (uint32_t h = 0; h < t.host.size(); ++h)
    if (t.host[h].op == HostOp::Wait) add_wait_edges({true, h});
  std::multimap<std::pair<uint32_t, uint32_t>, size_t> by_line;
  for (size_t v = 0; v < n; ++v) by_line.insert({{loc(v).file, loc(v).line}, v});
  for (auto& [a, b] : races) {
    auto ia = by_line.find({a.file, a.line}), ib = by_line.find({b.file, b.line});
    if (ia != by_line.end() && ib != by_line.end())
      edges.push_back({Edge::Race, ib->second, ia->second, ""});
  }

  std::vector<bool> keep(n, opt.around_line == 0);
  if (opt.around_line) {
    using G = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
    G g(n);
    for (auto& ed : edges) boost::add_edge(ed.from, ed.to, g);
    std::vector<int> dist(n, -1);
    for (size_t v = 0; v < n; ++v) {
      if (loc(v).line != opt.around_line || dist[v] == 0) continue;
      std::vector<int> d(n, -1);
      d[v] = 0;
      boost::breadth_first_search(g, v, boost::visitor(boost::make_bfs_visitor(boost::record_distances(
                                            boost::make_iterator_property_map(d.begin(), boost::get(boost::vertex_index, g)),
                                            boost::on_tree_edge()))));
      for (size_t u = 0; u < n; ++u)
        if ((u == v || d[u] > 0) && d[u] <= opt.radius) keep[u] = true;
      dist[v] = 0;
    }
  }

  DotGraph out;
  out.name = "happens_before";
  auto label = [&](size_t v) {
    std::string s = "L" + std::to_string(loc(v).line) + ": ";
    if (v < nc) {
      const TraceCmd& c = t.cmds[v];
      s += c.op == CmdOp::Exec ? "exec " + p.kernels[c.kernel]
           : c.op == CmdOp::Wait ? "wait " + p.signals[c.signal].name + " >= " + i128_to_string(c.value)
           : c.op == CmdOp::Signal ? "signal " + p.signals[c.signal].name + " = " + i128_to_string(c.value)
                                   : std::string(cmd_op_name(c.op));
      std::string ctx = t.describe(c.ctx);
      if (!ctx.empty()) s += "\\n" + ctx;
    } else {
      const HostEvent& h = t.host[v - nc];
      static const char* ops[] = {"submit", "wait", "signal", "read", "write", "free", "alloc"};
      s += ops[int(h.op)];
      if (h.op == HostOp::Submit) s += " " + p.queues[h.queue].name;
      if (h.op == HostOp::Wait || h.op == HostOp::Signal) s += " " + p.signals[h.signal].name + " " + i128_to_string(h.value);
    }
    return s;
  };
  for (size_t q = 0; q < t.queue_cmds.size(); ++q) {
    DotGraph::Cluster c{"q" + std::to_string(q),
                        p.queues[q].name + " (" + p.devices[p.queues[q].device].name + ", " + mode_name(queue_mode(p, uint32_t(q))) + ")",
                        {}};
    for (uint32_t id : t.queue_cmds[q])
      if (keep[id]) c.nodes.push_back({id, label(id), false, !e.ran({false, id})});
    out.clusters.push_back(std::move(c));
  }
  DotGraph::Cluster host{"host", "host", {}};
  for (size_t h = 0; h < t.host.size(); ++h)
    if (keep[nc + h]) host.nodes.push_back({nc + h, label(nc + h), true, false});
  out.clusters.push_back(std::move(host));
  for (auto& ed : edges)
    if (keep[ed.from] && keep[ed.to]) out.edges.push_back(ed);
  return out;
}

}  // namespace qvet
