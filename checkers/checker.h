// Checkers: one file per rule family of diagnostics.md. Each checker observes the engine's run
// (model/engine.h) and/or reads the Trace, and files Diagnostics into a DiagnosticSink, which
// merges findings that repeat with the same rule and locations (loop iterations) into one.
#pragma once
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "core/diagnostic.h"
#include "core/ir.h"
#include "model/engine.h"
#include "model/trace.h"

namespace qvet {

// Collects diagnostics; one per rule and pair of locations (diagnostics.md: findings that repeat,
// in loop iterations or with the two locations swapped, are one; of a pair found both ways, the
// one whose primary was submitted first is kept; of one primary's groups that name the same line,
// the one whose related command was submitted first).
class DiagnosticSink {
 public:
  explicit DiagnosticSink(const Trace& t) : t_(t) {}
  // `ctx`: where the finding holds (Trace context of the event reported); `order`: the submission
  // keys (Engine::submit_key) of its primary and related events. Of repeats, the least is kept.
  using Order = std::pair<uint64_t, uint64_t>;
  void add(Diagnostic d, uint32_t ctx = 0, Order order = {});
  std::vector<Diagnostic> take();

 private:
  struct Entry {
    Diagnostic d;
    Order order;
    std::vector<uint32_t> ctxs;
    size_t count = 0;
  };
  const Trace& t_;
  std::map<std::tuple<std::string, Loc, Loc>, size_t> index_;
  std::vector<Entry> entries_;
};

// "`exec gemm` on c0" / "host `read`", for messages.
std::string describe_event(const Trace& t, EventRef ev);

struct CheckContext {
  const Program& p;
  const Trace& t;
  const Engine& e;
  DiagnosticSink& sink;
  bool witness = false;  // races carry a witness schedule

  std::string what(EventRef ev) const { return describe_event(t, ev); }
  Loc loc(EventRef ev) const { return t.loc(ev); }
  // "line 12" in messages, or "c0.pm4:45" for a command decoded from a stream (its file and dword).
  std::string line_text(const Loc& l) const { return p.line_text(l); }
  uint32_t ctx(EventRef ev) const { return t.ctx(ev); }
  // The agent (device index or kHostAgent) an event runs on.
  uint32_t agent(EventRef ev) const { return ev.host ? kHostAgent : p.queues[t.cmds[ev.id].queue].device; }
  std::string signal_write_text(const SignalWrite& w) const;
  // The first write that `ev`'s agent makes after it and whose end follows it (a signal a waiter
  // can use to know that `ev` ended), or null.
  const SignalWrite* write_after(EventRef ev) const;
  // Per queue (and the host, last): the positions of its signal commands (queue index, or host
  // event id), and of its waits. Built on first use: findings look them up, and a scan of the
  // queue per finding would make many findings quadratic.
  const std::vector<uint32_t>& positions(uint32_t queue_or_host, bool waits) const;
  mutable std::vector<std::vector<uint32_t>> signal_pos_, wait_pos_;
  // Whether the wait's threshold fits its width: one that does not is a value-width error, and
  // what the engine made of its truncated value says nothing about the program's ordering.
  bool threshold_fits(const WaitResolution& r) const {
    i128 v = t.value(r.wait);
    return v >= 0 && v <= i128(r.cond.mask);
  }
};

// Items named in a message (the writes that can satisfy a wait, say): the first kMax, then "and
// N more", so a message stays short when there are thousands (a signal that many queues write).
class TextList {
 public:
  static constexpr size_t kMax = 8;
  template <class Text>  // called only for the items that are named
  void add(Text&& text) {
    if (n_++ < kMax) s_ += (s_.empty() ? "" : ", ") + text();
  }
  bool empty() const { return n_ == 0; }
  bool full() const { return n_ >= kMax; }
  void count(uint64_t n) { n_ += n; }  // items past the named ones, counted only
  std::string str() const { return n_ > kMax ? s_ + " and " + std::to_string(n_ - kMax) + " more" : s_; }

 private:
  std::string s_;
  uint64_t n_ = 0;
};

// The lines of a group's other commands, as far as a rule that counts them (rather than visit
// each) looks: the distinct lines of the commands it visits, at most kMaxVisits visits, where one
// visit may stand for a stretch of commands on one line. `more` when a line may be missing.
struct LineSample {
  static constexpr size_t kMaxVisits = 64;
  std::vector<uint32_t> lines;  // distinct
  uint64_t seen = 0;            // commands whose lines are in `lines`
  size_t visits = 0;
  bool full() const { return visits >= kMaxVisits || lines.size() > 8; }
  void add(uint32_t line, uint64_t commands = 1) {
    ++visits;
    seen += commands;
    if (std::find(lines.begin(), lines.end(), line) == lines.end()) lines.push_back(line);
  }
  bool more(uint64_t count) const { return lines.size() > 8 || seen < count; }
};

// diagnostics.md, "Grouped per queue": the findings of one rule with the same primary event and
// related events on the same queue (the host is one queue) are one diagnostic, related to the
// last of them in that queue's submission order; its message lists the others.
class PairGroups {
 public:
  explicit PairGroups(const CheckContext& c) : c_(c) {}
  // Records the finding (primary, related). Returns the diagnostic to fill in when `related` is
  // now the group's related event; null when the finding only joins the group's others.
  Diagnostic* add(EventRef primary, EventRef related);
  // Records `count` findings at once, (primary, x) for x among `count` commands of one queue that
  // the caller has not recorded before: `last` is the last of them in queue order, `first_lines`
  // lines of the others (`more`: a line may be missing). Same return as add().
  Diagnostic* add_many(EventRef primary, EventRef last, uint64_t count, const std::vector<uint32_t>& first_lines, bool more);
  // Files every group; `complete` runs on each first (explanations, fixes, witnesses).
  void flush(const std::function<void(Diagnostic&, EventRef primary, EventRef related)>& complete = {});

 private:
  struct Group {
    EventRef primary, related;
    Diagnostic d;
    std::vector<std::pair<uint64_t, uint32_t>> others;  // (queue order, line) of other events, perhaps repeated
    uint64_t many = 0;                                  // others recorded by add_many, besides `others`
    std::vector<uint32_t> many_lines;                   // lines of some of them
    bool more_lines = false;                            // and there are more
  };
  uint64_t queue_order(EventRef e) const { return e.host ? e.id : c_.t.cmds[e.id].index; }
  Group& group(EventRef primary, EventRef related, bool& fresh);
  Diagnostic* record(Group& g, bool fresh, EventRef related);  // add()'s work on its group
  const CheckContext& c_;
  std::map<std::pair<uint64_t, uint32_t>, size_t> index_;  // (primary event, related queue) -> group
  std::vector<Group> groups_;
};

class Checker : public EngineObserver {
 public:
  explicit Checker(const CheckContext& c) : c_(c) {}
  virtual void finish() {}

 protected:
  const CheckContext& c_;
};

// Factories, one per rule family (each defined in the file named after its rule).
std::unique_ptr<Checker> make_race_checker(const CheckContext&);
std::unique_ptr<Checker> make_deadlock_checker(const CheckContext&);
std::unique_ptr<Checker> make_lost_wakeup_checker(const CheckContext&);
std::unique_ptr<Checker> make_use_after_free_checker(const CheckContext&);
std::unique_ptr<Checker> make_free_in_flight_checker(const CheckContext&);
std::unique_ptr<Checker> make_peer_access_checker(const CheckContext&);
std::unique_ptr<Checker> make_value_width_checker(const CheckContext&);
std::unique_ptr<Checker> make_engine_checker(const CheckContext&);
std::unique_ptr<Checker> make_visibility_checker(const CheckContext&);
std::unique_ptr<Checker> make_signal_race_checker(const CheckContext&);
std::unique_ptr<Checker> make_stale_wait_checker(const CheckContext&);
std::unique_ptr<Checker> make_redundant_wait_checker(const CheckContext&);

struct CheckResult {
  std::vector<Diagnostic> diagnostics;  // sorted
  std::unique_ptr<Engine> engine;       // after its run (reads the trace: keep the trace alive)
};

// EngineMode::Checked found the indexes and the plain wait rule apart (an internal error: exit 3).
struct EngineMismatch : std::runtime_error {
  EngineMismatch(Loc at, const std::string& what) : std::runtime_error(what), at(at) {}
  Loc at;  // the wait
};

// Runs the engine and the checkers over a trace. `rules`: the rule ids to run (empty: all); the
// engine always runs, so {"none"} measures it alone. `mode`: how the engine finds candidates
// (model/wait_rule.h); Checked throws EngineMismatch at the first difference.
CheckResult check_trace(const Trace& t, const std::vector<std::string>& rules = {}, bool witness = false,
                        EngineMode mode = EngineMode::Indexed);

}  // namespace qvet
