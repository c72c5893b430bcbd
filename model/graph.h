// The happens-before graph as Graphviz DOT: one cluster per queue (and one for the host),
// program order solid, signal -> wait edges dashed and labelled with the signal, races red.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "model/engine.h"

namespace qvet {

struct GraphOptions {
  uint32_t around_line = 0;  // 0: whole program; else only events near the commands on this line
  int radius = 3;            // hops kept around those commands
};

// `races`: pairs of locations (primary, related) to draw in red.
std::string happens_before_dot(const Engine& e, const std::vector<std::pair<Loc, Loc>>& races, const GraphOptions& opt);

}  // namespace qvet
