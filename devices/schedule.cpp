#include "devices/schedule.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace qvet {

bool read_witnesses(const std::string& text, const Trace& t, std::vector<Schedule>& out, std::string& error) {
  using json = nlohmann::json;
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("witnesses") || !j["witnesses"].is_array()) {
    error = "not a witness file (qvet check --witness=FILE writes one)";
    return false;
  }
  for (const json& w : j["witnesses"]) {
    Schedule s;
    if (w.contains("location") && w["location"].contains("line")) s.line = w["location"]["line"].get<uint32_t>();
    if (w.contains("related") && w["related"].contains("line")) s.related_line = w["related"]["line"].get<uint32_t>();
    if (!w.contains("schedule") || !w["schedule"].is_array()) {
      error = "a witness without a schedule";
      return false;
    }
    for (const json& st : w["schedule"]) {
      if (!st.is_object() || !st.contains("event") || !st.contains("id") || !st.contains("host") || !st.contains("time") ||
          !st["id"].is_number_unsigned() || !st["time"].is_number_unsigned() || !st["host"].is_boolean()) {
        error = "a schedule step without `event`, `host`, `id` and `time` (written by an older qvet?)";
        return false;
      }
      std::string kind = st["event"].get<std::string>();
      bool host = st["host"].get<bool>();
      uint64_t id = st["id"].get<uint64_t>();
      Schedule::Kind k = kind == "start" ? Schedule::Kind::Start : kind == "end" ? Schedule::Kind::End : Schedule::Kind::At;
      bool known = host ? id < t.host.size() && kind == "at" : id < t.cmds.size() && (kind == "start" || kind == "end");
      uint32_t line = !known ? 0 : t.loc({host, uint32_t(id)}).line;
      if (!known || !st.contains("line") || st["line"] != line) {
        error = "the witness names an event this program does not have (" + kind + " of " + (host ? "host statement " : "command ") +
                std::to_string(id) + "): was it written for another program, or other --param values?";
        return false;
      }
      s.events.push_back({k, {host, uint32_t(id)}, st["time"].get<uint64_t>()});
      EventRef ev{host, uint32_t(id)};
      if (st.value("racing", false) && std::find(s.racing.begin(), s.racing.end(), ev) == s.racing.end()) s.racing.push_back(ev);
    }
    out.push_back(std::move(s));
  }
  return true;
}

bool replayed(const Schedule& s, const ObservedRun& r, std::string& error) {
  uint64_t last = 0;
  for (size_t i = 0; i < s.events.size(); ++i) {
    const Schedule::Event& e = s.events[i];
    // A chained release ends with its exec, whatever later time a schedule gives it.
    if (e.kind == Schedule::Kind::End && !e.event.host && r.fired_by[e.event.id] != kNone) continue;
    uint64_t at = e.kind == Schedule::Kind::End ? r.end(e.event) : r.start(e.event);
    if (at == kNever || (i && at < last)) {
      error = "step " + std::to_string(i) + " (the " + (e.kind == Schedule::Kind::End ? "end" : "start") + " of " +
              (e.event.host ? "host statement " : "command ") + std::to_string(e.event.id) + ") " +
              (at == kNever ? "did not happen" : "came earlier than the schedule puts it");
      return false;
    }
    last = at;
  }
  return true;
}

}  // namespace qvet
