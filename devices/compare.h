// Predicted against observed: the engine's happens-before relation and the checkers' findings
// for a Trace (the prediction), checked against runs of a back end (observed.h).
//
// Soundness, per run: every happens-before edge the engine predicts holds in the run's order
// (end(a) <= start(b)); every overlap of conflicting accesses, and every read that saw a version
// the prediction does not allow (one ordered after it, one an ordered write overwrote, or an
// unordered one) is a predicted and reported race; every hang is a predicted deadlock, and no
// event the engine says never runs ran. Across runs: a signal whose final value differs is a
// reported signal-race. Coverage: which predicted races some run made happen (the accesses
// overlapped, or ran in both orders).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/diagnostic.h"
#include "devices/observed.h"
#include "model/engine.h"

namespace qvet {

// What the engine and the checkers predict for a Trace.
class Prediction {
 public:
  // The predicted races are found pair by pair, per buffer: quadratic, so meant for programs of
  // at most this many accesses (the corpus, random programs, hand-written cases).
  static constexpr size_t kMaxAccesses = 20000;
  explicit Prediction(const Trace& t);
  const Trace& trace() const { return t_; }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  bool ran(EventRef e) const { return e.host ? host_ran_[e.id] : cmd_ran_[e.id]; }
  // end(a) -> start(b) (a host statement is its own start and end).
  bool before(EventRef a, EventRef b) const;
  // end(a) -> end(b).
  bool before_end(EventRef a, EventRef b) const;
  const Clock& start_clock(EventRef e) const { return e.host ? host_[e.id] : cmd_start_[e.id]; }
  const Clock& end_clock(EventRef e) const { return e.host ? host_[e.id] : cmd_end_[e.id]; }
  // Conflicting, unordered access pairs of events that run (use-after-free accesses excepted):
  // the races the relation predicts, as (earlier-submitted, later-submitted) events.
  const std::vector<std::pair<EventRef, EventRef>>& races() const { return races_; }
  // Whether a diagnostic of `rule` (race or visibility) names the two events' lines (as its
  // locations or in its list).
  bool reported(Rule rule, EventRef a, EventRef b) const;
  // Whether a diagnostic of `rule` has the pair in its group: its primary is one event's line and
  // its related location is on the other's queue (diagnostics.md, "Grouped per queue").
  bool group_reported(Rule rule, EventRef a, EventRef b) const;
  // Whether a lost-wakeup diagnostic is at wait `w`'s line.
  bool lost_wakeup_reported(EventRef w) const { return lost_wakeup_lines_.count(line(w)) > 0; }
  const std::set<uint32_t>& lost_wakeup_lines() const { return lost_wakeup_lines_; }
  // Whether a value-width diagnostic is at wait `w`'s line: its threshold does not fit the wait's
  // width, so the hardware compares another value than the one written (a hang there is that error's).
  bool value_width_reported(EventRef w) const { return value_width_lines_.count(line(w)) > 0; }
  // Whether a signal-race diagnostic points at a write of signal `s`.
  bool signal_race_reported(uint32_t s) const;
  // Whether the engine counts a 32-bit write among the candidates of 64-bit wait `w` on a signal
  // whose 32-bit writes may keep different high halves (Engine::reads_every_word): where it runs,
  // its word depends on the high half it keeps.
  bool high_half_candidate(EventRef w) const { return high_half_.count(w.key()) > 0; }
  uint32_t line(EventRef e) const { return t_.loc(e).line; }
  // The event an access belongs to.
  EventRef owner(uint32_t access) const { return access_owner_[access]; }
  // Write accesses per base buffer.
  const std::vector<uint32_t>& writes_of(uint32_t buffer) const { return writes_[buffer]; }
  // The race diagnostics, as (primary line, related line), and each one's race pairs.
  struct RaceFinding {
    uint32_t line, related_line;
    std::vector<uint32_t> pairs;  // indices into races()
  };
  const std::vector<RaceFinding>& race_findings() const { return findings_; }

 private:
  const Trace& t_;
  std::vector<Diagnostic> diagnostics_;
  std::vector<Clock> cmd_start_, cmd_end_, host_;
  std::vector<uint8_t> cmd_ran_, host_ran_;
  std::set<uint64_t> high_half_;  // waits, as (host << 32 | id)
  std::vector<std::pair<EventRef, EventRef>> races_;
  struct Reported {  // the findings of one grouped rule
    std::set<std::pair<uint32_t, uint32_t>> lines;   // (min, max) line pairs
    std::set<uint32_t> any;                          // primaries whose list was cut short
    std::set<std::pair<uint32_t, uint32_t>> groups;  // (primary line, related agent)
  };
  Reported race_, visibility_;
  std::set<uint32_t> signal_race_lines_, lost_wakeup_lines_, value_width_lines_;
  std::map<uint32_t, std::set<uint32_t>> line_agents_;   // source line -> queues (kHostAgent: host) of its events
  std::vector<EventRef> access_owner_;
  std::vector<std::vector<uint32_t>> writes_;
  std::vector<RaceFinding> findings_;
};

// One kind of disagreement at one pair of lines, with the runs it happened in. Soundness
// violations fail `--compare`; the other kinds are differences the spec's own wording leaves
// (docs/simulator.md lists them): they are reported, and counted apart.
struct Violation {
  // Soundness: edge, overlap, unreported-race, unreported-visibility, stale-read, hang,
  // ran-deadlocked, signal-value. Other: race-unlisted, visibility-unlisted, hang-high-half.
  std::string kind;
  std::string message;  // of the first run it happened in
  uint32_t line = 0, related_line = 0;
  uint64_t first_run = 0, runs = 0;
  bool soundness = true;
  uint64_t last_run = UINT64_MAX;
};

class Comparison {
 public:
  explicit Comparison(const Prediction& p);
  void add(const ObservedRun& r, uint64_t run);  // per-run soundness, coverage
  void finish();                                 // cross-run soundness
  const std::vector<Violation>& violations() const { return violations_; }
  size_t soundness_violations() const;
  size_t runs() const { return runs_; }
  // Event times checked against everything the engine orders before them (a start or end of a
  // timed command, a host statement), summed over runs.
  size_t ordering_checks() const { return ordering_checks_; }
  // Per race_findings(): whether some run made it happen, and how.
  struct Coverage {
    bool overlapped = false, both_orders = false;
    bool manifested() const { return overlapped || both_orders; }
  };
  std::vector<Coverage> coverage() const;
  // The lines of reported lost wakeups that some run hung at.
  const std::set<uint32_t>& lost_wakeups_seen() const { return lost_wakeups_seen_; }
  std::string table(const std::string& file) const;
  std::string json(const std::string& file) const;

 private:
  void violate(const std::string& kind, const std::string& message, uint32_t line, uint32_t related, uint64_t run,
               bool soundness = true);
  void check_edges(const ObservedRun& r, uint64_t run);
  void check_overlaps(const ObservedRun& r, uint64_t run);
  void check_seen(const ObservedRun& r, uint64_t run);
  void check_hangs(const ObservedRun& r, uint64_t run);
  void check_unacquired(const ObservedRun& r, uint64_t run);
  // Whether event w writes bytes [lo, hi) of `buffer` with a use-after-free access (which takes
  // part in no race nor visibility finding: the bytes it wrote are not the live buffer's).
  bool freed_write(EventRef w, uint32_t buffer, uint64_t lo, uint64_t hi) const;
  void unreported(Rule rule, EventRef a, EventRef b, const std::string& what_happened, uint64_t run);
  std::string what(EventRef e) const;

  const Prediction& p_;
  const Trace& t_;
  std::vector<Violation> violations_;
  std::map<std::tuple<std::string, uint32_t, uint32_t>, size_t> violation_index_;
  size_t runs_ = 0, ordering_checks_ = 0;
  std::set<uint32_t> lost_wakeups_seen_;
  // Per set of hung waits (runs that hang differently end differently): per signal, final values.
  std::map<std::vector<uint64_t>, std::vector<std::set<uint64_t>>> finals_;
  struct PairSeen {
    bool overlapped = false, ab = false, ba = false;
  };
  std::vector<PairSeen> pair_seen_;  // per predicted race
};

}  // namespace qvet
