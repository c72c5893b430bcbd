// The happens-before graph, to draw (core/render.h `render_dot`): one cluster per queue (and one
// for the host), edges for program order, submits, signal -> wait (labelled with the signal) and
// races.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/render.h"
#include "model/engine.h"

namespace qvet {

struct GraphOptions {
  uint32_t around_line = 0;  // 0: whole program; else only events near the commands on this line
  int radius = 3;            // hops kept around those commands
};

// `races`: pairs of locations (primary, related) to draw in red.
DotGraph happens_before_graph(const Engine& e, const std::vector<std::pair<Loc, Loc>>& races, const GraphOptions& opt);

}  // namespace qvet
