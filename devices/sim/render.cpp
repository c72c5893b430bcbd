#include "devices/sim/render.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "checkers/checker.h"
#include "core/diagnostic.h"
#include "devices/sim/sim.h"

namespace qvet {

namespace {

// TrackLayout: 0 is the host; then each queue's lanes. A command goes to the first lane of its queue
// whose last slice ended before it started (interval partitioning: as few lanes as overlap needs).
struct TrackLayout {
  struct Track {
    std::string name;
    uint32_t queue;  // kNone: the host
  };
  std::vector<Track> tracks;
  std::vector<uint32_t> track_of;  // per command (kNone: it never started)
  std::set<uint32_t> racing;       // commands and (with bit 31) host statements that overlapped another
  uint64_t end_time = 0;
};

uint64_t end_or_start(const ObservedRun& r, uint32_t c) { return r.cmd_t1[c] == kNever ? r.cmd_t0[c] : r.cmd_t1[c]; }

TrackLayout track_layout(const Trace& t, const ObservedRun& r) {
  TrackLayout l;
  l.tracks.push_back({"host", kNone});
  l.track_of.assign(t.cmds.size(), kNone);
  for (uint32_t q = 0; q < t.queue_cmds.size(); ++q) {
    const Queue& qu = t.program->queues[q];
    std::string base = t.program->devices[qu.device].name + "/" + qu.name + " (" + engine_name(qu.engine) + ", " +
                       mode_name(queue_mode(*t.program, q)) + ")";
    std::vector<uint32_t> ids;
    for (uint32_t c : t.queue_cmds[q])
      if (r.cmd_t0[c] != kNever) ids.push_back(c);
    std::stable_sort(ids.begin(), ids.end(), [&](uint32_t a, uint32_t b) { return r.cmd_start[a] < r.cmd_start[b]; });
    std::vector<std::pair<uint64_t, uint32_t>> lanes;  // (last end order, track)
    for (uint32_t c : ids) {
      size_t k = 0;
      while (k < lanes.size() && lanes[k].first > r.cmd_start[c]) ++k;
      if (k == lanes.size()) {
        lanes.push_back({0, uint32_t(l.tracks.size())});
        l.tracks.push_back({k ? base + " #" + std::to_string(k + 1) : base, q});
      }
      lanes[k].first = r.cmd_end[c] == kNever ? UINT64_MAX : r.cmd_end[c];
      l.track_of[c] = lanes[k].second;
      l.end_time = std::max(l.end_time, end_or_start(r, c));
    }
  }
  for (uint64_t h : r.host_time)
    if (h != kNever) l.end_time = std::max(l.end_time, h);
  auto owners = access_owners(t);
  for (const Overlap& o : r.overlaps)
    for (uint32_t a : {o.a, o.b}) l.racing.insert(owners[a].host ? (owners[a].id | 0x80000000u) : owners[a].id);
  return l;
}

std::string label(const Trace& t, EventRef e) {
  std::string s = describe_event(t, e);
  s.erase(std::remove(s.begin(), s.end(), '`'), s.end());
  return s;
}

}  // namespace

std::string chrome_trace(const Trace& t, const ObservedRun& r, const SourceSet& src, const std::string& title) {
  using json = nlohmann::ordered_json;
  TrackLayout l = track_layout(t, r);
  json ev = json::array();
  ev.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 0}, {"args", {{"name", "qvet sim: " + src.name(t.program->file)}}}});
  for (uint32_t k = 0; k < l.tracks.size(); ++k) {
    ev.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", k}, {"args", {{"name", l.tracks[k].name}}}});
    ev.push_back({{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", 1}, {"tid", k}, {"args", {{"sort_index", k}}}});
  }
  auto us = [](uint64_t ns) { return double(ns) / 1000.0; };  // trace-event times are microseconds
  auto args = [&](EventRef e, uint64_t order) {
    Loc loc = t.loc(e);
    return json{{"source", format_loc(loc, src)}, {"line", loc.line}, {"order", order}};
  };
  for (uint32_t c = 0; c < t.cmds.size(); ++c) {
    if (l.track_of[c] == kNone) continue;
    bool hung = r.cmd_t1[c] == kNever;
    json e{{"name", label(t, {false, c}) + (hung ? " (hung)" : "")},
           {"cat", std::string(cmd_op_name(t.cmds[c].op)) + (l.racing.count(c) ? ",race" : "")},
           {"ph", "X"},
           {"ts", us(r.cmd_t0[c])},
           {"dur", us((hung ? l.end_time : r.cmd_t1[c]) - r.cmd_t0[c])},
           {"pid", 1},
           {"tid", l.track_of[c]},
           {"args", args({false, c}, r.cmd_start[c])}};
    if (l.racing.count(c)) e["cname"] = "terrible";  // chrome://tracing's red
    ev.push_back(std::move(e));
  }
  for (uint32_t h = 0; h < t.host.size(); ++h) {
    if (r.host_time[h] == kNever) continue;
    bool race = l.racing.count(h | 0x80000000u);
    json e{{"name", label(t, {true, h})}, {"cat", std::string("host") + (race ? ",race" : "")}, {"ph", "i"}, {"s", "t"},
           {"ts", us(r.host_time[h])}, {"pid", 1}, {"tid", 0}, {"args", args({true, h}, r.host_order[h])}};
    if (race) e["cname"] = "terrible";
    ev.push_back(std::move(e));
  }
  // Flow arrows: from the slice of each signal write to the slice of the wait it released.
  uint64_t id = 0;
  auto place = [&](EventRef e, uint64_t& ts, uint32_t& tid) {
    if (e.host) {
      ts = r.host_time[e.id], tid = 0;
      return ts != kNever;
    }
    ts = r.cmd_t0[e.id], tid = l.track_of[e.id];
    return tid != kNone;
  };
  for (const Release& rel : r.releases) {
    uint64_t ts0, ts1;
    uint32_t tid0, tid1;
    if (rel.writer.id == kNone || !place(rel.writer, ts0, tid0) || !place(rel.wait, ts1, tid1)) continue;
    ++id;
    ev.push_back({{"name", "release"}, {"cat", "signal"}, {"ph", "s"}, {"id", id}, {"ts", us(ts0)}, {"pid", 1}, {"tid", tid0}, {"bp", "e"}});
    ev.push_back({{"name", "release"}, {"cat", "signal"}, {"ph", "f"}, {"id", id}, {"ts", us(ts1)}, {"pid", 1}, {"tid", tid1}, {"bp", "e"}});
  }
  json j{{"traceEvents", ev}, {"displayTimeUnit", "ns"}, {"otherData", {{"title", title}}}};
  return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";  // (names need not be UTF-8)
}

std::string timeline_svg(const Trace& t, const ObservedRun& r, const SourceSet& src, const std::string& title) {
  TrackLayout l = track_layout(t, r);
  const double left = 260, width = 1000, row = 28, top = 40;
  double span = double(std::max<uint64_t>(l.end_time, 1));
  auto x = [&](uint64_t ns) { return left + width * double(ns) / span; };
  auto y = [&](uint32_t track) { return top + row * track; };
  auto esc = [](std::string s) {  // well-formed XML whatever the names hold (bytes past UTF-8, controls)
    std::string o;
    for (size_t i = 0; i < s.size();) {
      const unsigned char c = static_cast<unsigned char>(s[i]);
      size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
      for (size_t k = 1; k < n; ++k)
        if (i + k >= s.size() || (static_cast<unsigned char>(s[i + k]) >> 6) != 2) n = 0;
      if (n == 0) o += "\xEF\xBF\xBD", ++i;  // U+FFFD for a byte that is not UTF-8
      else if (n > 1) o += s.substr(i, n), i += n;
      else o += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : c == '"' ? "&quot;" : c < 0x20 && c != '\t' ? "?" : std::string(1, char(c)), ++i;
    }
    return o;
  };
  auto num = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", v);
    return std::string(b);
  };
  double h = top + row * double(l.tracks.size()) + 40;
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(left + width + 40) + "\" height=\"" + num(h) +
                  "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  s += "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"6\" markerHeight=\"6\" orient=\"auto\">"
       "<path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker></defs>\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"10\" y=\"20\" font-size=\"14\">qvet sim: " + esc(src.name(t.program->file)) + " (" + esc(title) + "; " +
       std::to_string(l.end_time) + " ns; red: accesses that overlapped a conflicting one)</text>\n";
  for (uint32_t k = 0; k < l.tracks.size(); ++k) {
    s += "<text x=\"10\" y=\"" + num(y(k) + 17) + "\">" + esc(l.tracks[k].name) + "</text>\n";
    s += "<line x1=\"" + num(left) + "\" x2=\"" + num(left + width) + "\" y1=\"" + num(y(k) + row) + "\" y2=\"" +
         num(y(k) + row) + "\" stroke=\"#eee\"/>\n";
  }
  for (uint32_t c = 0; c < t.cmds.size(); ++c) {
    if (l.track_of[c] == kNone) continue;
    bool hung = r.cmd_t1[c] == kNever, race = l.racing.count(c);
    double x0 = x(r.cmd_t0[c]), x1 = std::max(x(hung ? l.end_time : r.cmd_t1[c]), x0 + 2);
    const char* fill = race ? "#e74c3c" : hung ? "#bbb" : t.cmds[c].op == CmdOp::Exec || t.cmds[c].op == CmdOp::Copy ? "#5b9bd5" : "#a9d18e";
    s += "<rect x=\"" + num(x0) + "\" y=\"" + num(y(l.track_of[c]) + 4) + "\" width=\"" + num(x1 - x0) + "\" height=\"" +
         num(row - 8) + "\" fill=\"" + fill + "\" stroke=\"#333\" stroke-width=\"0.5\"><title>" +
         esc(label(t, {false, c}) + " at " + format_loc(t.cmds[c].loc, src) + (hung ? " (hung)" : "")) + "</title></rect>\n";
    if (x1 - x0 > 40)
      s += "<text x=\"" + num(x0 + 3) + "\" y=\"" + num(y(l.track_of[c]) + 18) + "\" font-size=\"9\">" +
           esc(cmd_op_name(t.cmds[c].op)) + " :" + std::to_string(t.cmds[c].loc.line) + "</text>\n";
  }
  for (uint32_t hh = 0; hh < t.host.size(); ++hh) {
    if (r.host_time[hh] == kNever) continue;
    bool race = l.racing.count(hh | 0x80000000u);
    double xx = x(r.host_time[hh]);
    s += "<line x1=\"" + num(xx) + "\" x2=\"" + num(xx) + "\" y1=\"" + num(y(0) + 4) + "\" y2=\"" + num(y(0) + row - 4) +
         "\" stroke=\"" + (race ? "#e74c3c" : "#333") + "\" stroke-width=\"2\"><title>" +
         esc(label(t, {true, hh}) + " at " + format_loc(t.host[hh].loc, src)) + "</title></line>\n";
  }
  for (const Release& rel : r.releases) {
    if (rel.writer.id == kNone) continue;
    auto at = [&](EventRef e, double& px, double& py, bool end) {
      if (e.host) {
        if (r.host_time[e.id] == kNever) return false;
        px = x(r.host_time[e.id]), py = y(0) + row / 2;
        return true;
      }
      if (l.track_of[e.id] == kNone || (end && r.cmd_t1[e.id] == kNever)) return false;
      px = x(end ? r.cmd_t1[e.id] : r.cmd_t1[e.id] == kNever ? l.end_time : r.cmd_t1[e.id]), py = y(l.track_of[e.id]) + row / 2;
      return true;
    };
    double x0, y0, x1, y1;
    if (!at(rel.writer, x0, y0, true) || !at(rel.wait, x1, y1, false)) continue;
    s += "<line x1=\"" + num(x0) + "\" y1=\"" + num(y0) + "\" x2=\"" + num(x1) + "\" y2=\"" + num(y1) +
         "\" stroke=\"#555\" stroke-width=\"0.8\" marker-end=\"url(#arrow)\"/>\n";
  }
  s += "</svg>\n";
  return s;
}

}  // namespace qvet

namespace qvet {

std::string run_finding(const Trace& t, const ObservedRun& r) {
  if (!r.overlaps.empty()) {
    std::vector<EventRef> owner = access_owners(t);
    uint32_t a = t.loc(owner[r.overlaps[0].a]).line, b = t.loc(owner[r.overlaps[0].b]).line;
    return "race between line " + std::to_string(std::max(a, b)) + " and line " + std::to_string(std::min(a, b));
  }
  if (!r.hung.empty()) return "hang at line " + std::to_string(t.loc(r.hung[0].wait).line);
  return "";
}

}  // namespace qvet
