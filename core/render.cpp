#include "core/render.h"
#include "core/rule_pages.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace qvet {

namespace {

void quote_line(std::string& out, const Loc& loc, const SourceSet& src) {
  if (!loc.valid()) return;
  std::string_view line = src.line(loc.file, loc.line);
  if (line.empty()) return;
  constexpr size_t kMax = 200;  // never echo a 2 MB line
  size_t col = loc.col ? std::min<size_t>(loc.col - 1, line.size()) : 0;  // past the end: just after it
  size_t start = col > kMax / 2 && line.size() > kMax ? col - kMax / 2 : 0;
  std::string_view shown = line.substr(start, kMax);
  out += "  ";
  for (char c : shown) out += (c == '\t' ? ' ' : (c >= 32 && c < 127 ? c : '?'));
  out += "\n";
  if (loc.col) out += "  " + std::string(col - start, ' ') + "^\n";
}

}  // namespace

std::string render_text(const std::vector<Diagnostic>& ds, const SourceSet& src) {
  std::string out;
  for (const Diagnostic& d : ds) {
    out += format_loc(d.loc, src) + ": " + severity_name(d.severity) + ": " + d.message;
    if (d.rule != "input") out += " [" + d.rule + "]";
    out += "\n";
    quote_line(out, d.loc, src);
    for (const Related& r : d.related) {
      out += (r.loc.valid() ? format_loc(r.loc, src) + ": " : std::string()) + "note: " + r.message + "\n";
      quote_line(out, r.loc, src);
    }
    for (const Related& n : d.notes)
      out += (n.loc.valid() ? format_loc(n.loc, src) + ": " : std::string()) + "note: " + n.message + "\n";
    for (const Fix& f : d.fixes) {
      out += "  fix: " + f.description + "\n";
    }
    if (!d.witness.empty()) {
      out += "  witness schedule (an execution the model allows in which the accesses overlap):\n";
      constexpr size_t kShown = 60;
      size_t first = 0;  // show the steps around the overlap
      for (size_t i = 0; i < d.witness.size(); ++i)
        if (d.witness[i].racing) {
          first = i > 10 ? i - 10 : 0;
          break;
        }
      if (first) out += "    ... " + std::to_string(first) + " earlier step(s)\n";
      for (size_t i = first; i < d.witness.size() && i < first + kShown; ++i) {
        const ScheduleStep& st = d.witness[i];
        out += "    t=" + std::to_string(st.time) + "  " + st.event + " " + st.what +
               (st.loc.line ? " (line " + std::to_string(st.loc.line) + ")" : "") + (st.racing ? "  <== race" : "") + "\n";
      }
      if (d.witness.size() > first + kShown) out += "    ... " + std::to_string(d.witness.size() - first - kShown) + " later step(s)\n";
    }
  }
  return out;
}

namespace {

nlohmann::ordered_json loc_json(const Loc& l, const SourceSet& src) {
  nlohmann::ordered_json j;
  j["file"] = src.name(l.file);
  j["line"] = l.line;
  j["column"] = l.col;
  return j;
}

nlohmann::ordered_json witness_json(const std::vector<ScheduleStep>& steps) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (auto& st : steps)
    a.push_back({{"time", st.time}, {"event", st.event}, {"what", st.what}, {"line", st.loc.line}, {"racing", st.racing},
                 {"host", st.host}, {"id", st.id}});
  return a;
}

}  // namespace

std::string render_json(const std::vector<Diagnostic>& ds, const SourceSet& src) {
  nlohmann::ordered_json out;
  out["version"] = 1;
  auto& arr = out["diagnostics"] = nlohmann::ordered_json::array();
  for (const Diagnostic& d : ds) {
    nlohmann::ordered_json j;
    j["rule"] = d.rule;
    j["severity"] = severity_name(d.severity);
    j["message"] = d.message;
    j["location"] = loc_json(d.loc, src);
    j["related"] = nlohmann::ordered_json::array();
    for (auto& r : d.related) j["related"].push_back({{"location", loc_json(r.loc, src)}, {"message", r.message}});
    j["notes"] = nlohmann::ordered_json::array();
    for (auto& r : d.notes) {
      nlohmann::ordered_json nj{{"message", r.message}};
      if (r.loc.valid()) nj["location"] = loc_json(r.loc, src);
      j["notes"].push_back(nj);
    }
    j["fixes"] = nlohmann::ordered_json::array();
    for (auto& f : d.fixes) {
      nlohmann::ordered_json fj{{"description", f.description}};
      fj["edits"] = nlohmann::ordered_json::array();
      for (auto& e : f.edits)
        fj["edits"].push_back({{"location", loc_json(e.at, src)}, {"where", e.after ? "after" : "before"}, {"text", e.text}});
      j["fixes"].push_back(fj);
    }
    if (!d.witness.empty()) j["witness"] = witness_json(d.witness);
    arr.push_back(std::move(j));
  }
  int e, w, n;
  count_severities(ds, e, w, n);
  out["summary"] = {{"errors", e}, {"warnings", w}, {"notes", n}};
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string render_witnesses(const std::vector<Diagnostic>& ds, const SourceSet& src) {
  nlohmann::ordered_json out{{"version", 1}, {"witnesses", nlohmann::ordered_json::array()}};
  for (const Diagnostic& d : ds) {
    if (d.witness.empty()) continue;
    nlohmann::ordered_json w{{"rule", d.rule}, {"location", loc_json(d.loc, src)}};
    if (!d.related.empty()) w["related"] = loc_json(d.related[0].loc, src);
    w["schedule"] = witness_json(d.witness);
    out["witnesses"].push_back(std::move(w));
  }
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {

// RFC 3986 percent-encoding of a path: unreserved characters and '/' stay, every other byte
// (spaces, '%', ':', '#', bytes of non-ASCII or non-UTF-8 names) becomes %XX.
std::string percent_encode(const std::string& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') out += char(c);
    else out += {'%', hex[c >> 4], hex[c & 15]};
  }
  return out;
}

}  // namespace

std::string sarif_uri(const std::string& file) {
  namespace fs = std::filesystem;
  fs::path p = fs::path(file).lexically_normal();  // ".//sub/x.hcq" is "sub/x.hcq": still relative
  std::error_code ec;
  fs::path cwd = p.is_absolute() ? fs::current_path(ec) : fs::path();
  if (p.is_absolute() && !ec) {  // relative to the working directory when it is inside it
    fs::path rel = p.lexically_relative(cwd);
    if (!rel.empty() && *rel.begin() != "..") p = rel;
  }
  return percent_encode(p.generic_string());
}

std::string render_sarif(const std::vector<Diagnostic>& ds, const SourceSet& src, const std::vector<std::string>& failures) {
  using J = nlohmann::ordered_json;
  auto level = [](Severity s) { return s == Severity::Error ? "error" : s == Severity::Warning ? "warning" : "note"; };
  auto phys = [&](const Loc& l) {
    J region{{"startLine", l.line ? l.line : 1}};
    if (l.col) region["startColumn"] = l.col;
    return J{{"physicalLocation", {{"artifactLocation", {{"uri", sarif_uri(src.name(l.file))}}}, {"region", region}}}};
  };
  J rules = J::array();
  for (auto& r : all_rules()) {
    // help: the rule's page (docs/rules), by its path in the repository and its first paragraph.
    std::string page = "docs/rules/" + std::string(r.id) + ".md", help(rule_page_summary(rule_page(r.id)));
    std::replace(help.begin(), help.end(), '\n', ' ');
    rules.push_back({{"id", r.id},
                     {"shortDescription", {{"text", r.summary}}},
                     {"fullDescription", {{"text", r.summary}}},
                     {"helpUri", page},
                     {"help", {{"text", help.empty() ? std::string(r.summary) : help}}},
                     {"defaultConfiguration", {{"level", level(r.severity)}}}});
  }
  J results = J::array();
  for (const Diagnostic& d : ds) {
    J r{{"ruleId", d.rule}, {"level", level(d.severity)}, {"message", {{"text", d.message}}}};
    if (auto* info = find_rule(d.rule)) r["ruleIndex"] = int(info - all_rules().data());
    r["locations"] = J::array({phys(d.loc)});
    J rel = J::array();
    int id = 0;
    for (auto& x : d.related) {
      if (!x.loc.valid()) continue;
      J l = phys(x.loc);
      l["id"] = id++;
      l["message"] = {{"text", x.message}};
      rel.push_back(l);
    }
    if (!rel.empty()) r["relatedLocations"] = rel;
    results.push_back(std::move(r));
  }
  J run{{"tool", {{"driver", {{"name", "qvet"}, {"informationUri", "https://example.invalid/qvet"},
                              {"version", "0.1.0"}, {"rules", rules}}}}},
        {"results", results}};
  J invocation{{"executionSuccessful", failures.empty()}};
  if (!failures.empty()) {
    J notes = J::array();
    for (const std::string& f : failures) notes.push_back({{"level", "error"}, {"message", {{"text", f}}}});
    invocation["toolExecutionNotifications"] = notes;
  }
  run["invocations"] = J::array({invocation});
  J out{{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"}, {"version", "2.1.0"}, {"runs", J::array({run})}};
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}


namespace {

std::string dot_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

}  // namespace

std::string render_dot(const DotGraph& g) {
  std::string out = "digraph " + g.name + " {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n";
  for (const DotGraph::Cluster& c : g.clusters) {
    out += "  subgraph cluster_" + c.id + " {\n    label=\"" + dot_escape(c.label) + "\";\n";
    for (const DotGraph::Node& n : c.nodes)
      out += "    n" + std::to_string(n.id) + " [label=\"" + dot_escape(n.label) + "\"" + (n.ellipse ? ", shape=ellipse" : "") +
             (n.dashed ? ", style=dashed" : "") + "];\n";
    out += "  }\n";
  }
  for (const DotGraph::Edge& e : g.edges) {
    std::string attrs;
    switch (e.kind) {
      case DotGraph::Edge::Order: break;
      case DotGraph::Edge::Submit: attrs = "style=dotted, color=gray"; break;
      case DotGraph::Edge::Wait: attrs = "style=dashed, label=\"" + dot_escape(e.label) + "\""; break;
      case DotGraph::Edge::Race: attrs = "color=red, penwidth=2, dir=none, label=\"race\", fontcolor=red"; break;
    }
    out += "  n" + std::to_string(e.from) + " -> n" + std::to_string(e.to) + (attrs.empty() ? "" : " [" + attrs + "]") + ";\n";
  }
  return out + "}\n";
}

}  // namespace qvet
