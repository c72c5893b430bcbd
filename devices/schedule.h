// A typed schedule: the events of a Trace in the order (and at the times) one execution puts
// them. `qvet check --witness=FILE` writes one per race (core/diagnostic.h ScheduleStep, as
// JSON); the simulator replays them (Policy::Witness).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "devices/observed.h"
#include "model/trace.h"

namespace qvet {

struct Schedule {
  enum class Kind : uint8_t { Start, End, At };  // At: a host statement (its start and end)
  struct Event {
    Kind kind;
    EventRef event;
    uint64_t time;
  };
  std::vector<Event> events;            // in time order
  uint32_t line = 0, related_line = 0;  // the race it shows: its primary and related lines
  std::vector<EventRef> racing;         // the two events whose accesses it overlaps
};

// The schedules of a witness file (docs/json.md) for `t`. Returns false, with `error`, when the
// text is not a witness file or an event does not exist in `t` (another program, or another
// binding of its params).
bool read_witnesses(const std::string& text, const Trace& t, std::vector<Schedule>& out, std::string& error);

// Whether run `r` put the schedule's events in the schedule's order (a chained release's end,
// which comes with its exec's, excepted); else `error` names the first event out of place.
bool replayed(const Schedule& s, const ObservedRun& r, std::string& error);

}  // namespace qvet
