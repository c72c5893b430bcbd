// Rendering, all of it in one place: diagnostics as compiler-style text, JSON, SARIF 2.1.0 and
// witness schedules, and graphs as Graphviz DOT. Pure functions of their input: the same input
// gives byte-identical output (diagnostics.md).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/diagnostic.h"

namespace qvet {

std::string render_text(const std::vector<Diagnostic>& ds, const SourceSet& src);
std::string render_json(const std::vector<Diagnostic>& ds, const SourceSet& src);
// JSON and SARIF text is UTF-8: bytes of a file name that are not are written as U+FFFD (SARIF
// URIs percent-encode them instead, exactly).
// `failures`: one line per file that could not be checked (its input error); the run's
// invocation then says it did not succeed, so that no consumer reads it as a clean run.
std::string render_sarif(const std::vector<Diagnostic>& ds, const SourceSet& src, const std::vector<std::string>& failures = {});
// A file name as a SARIF artifact URI: normalized, relative to the working directory when the
// file is inside it, percent-encoded (RFC 3986).
std::string sarif_uri(const std::string& file);
// The witness schedules of `ds` as JSON, for the simulator to replay.
std::string render_witnesses(const std::vector<Diagnostic>& ds, const SourceSet& src);

// A graph to draw: clusters of nodes (ids unique across the graph) and edges by kind. What the
// nodes and edges mean is the producer's business (model/graph.h: happens-before); how each kind
// looks is the renderer's.
struct DotGraph {
  struct Node {
    size_t id;
    std::string label;
    bool ellipse = false, dashed = false;
  };
  struct Cluster {
    std::string id, label;
    std::vector<Node> nodes;
  };
  struct Edge {
    enum Kind { Order, Submit, Wait, Race } kind;
    size_t from, to;
    std::string label;  // Wait: the signal
  };
  std::string name;
  std::vector<Cluster> clusters;
  std::vector<Edge> edges;
};
std::string render_dot(const DotGraph& g);

}  // namespace qvet
