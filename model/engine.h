// The happens-before engine: executes semantics.md's ordering rules over a Trace and reports,
// event by event, what each event knows has happened before it (a Clock).
//
// It processes commands in an order consistent with happens-before (a linear extension):
// every queue and the host advance in order; a wait is resolved once every write that could
// satisfy it has been processed or can only come after it. When every agent is stuck, the stuck
// waits first prove what they can of each other from below (`derive`: a wait whose pending
// candidates all sit behind one stuck head comes after it, so that head need not wait for the
// writes behind it); a wait so cleared is resolved exactly, and the run goes on. Only where
// nothing is cleared do the stuck waits form a graph (wait -> the wait that holds back a write
// it needs); in each of its sink components one wait is forced (resolved from below, see
// `refine`), or the component is a deadlock (no candidate, or a cycle).
//
// A wait's candidates are semantics.md's wait rule (model/wait_rule.h, plainly). The engine
// answers it through indexes (the writer index, latest writes, shared candidate lists, chain
// indexes, candidate trees: docs/architecture.md, "How a check runs"); EngineMode::Plain asks the
// rule alone, EngineMode::Checked both, stopping at the first difference (mismatch()). Cost is
// linear in the trace, times the number of queues for clock operations, times the rounds
// `refine` asks for (one; two or more only when a wait was forced).
//
// Files: engine.cpp (this facade, the scheduler, the agents' steps), engine_candidates.cpp (the
// indexed rule), engine_mixed.cpp (32-bit words), engine_latest.cpp (latest writes and shared
// lists), engine_stuck.cpp (derive, forcing, deadlocks), engine_rounds.cpp (the rounds).
// Checkers observe the run through EngineObserver. Not thread-safe: one engine, one thread
// (independent engines may run on different threads).
#pragma once
#include <algorithm>
#include <array>
#include <bitset>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <unordered_set>
#include <vector>

#include "core/max_tree.h"
#include "model/candidate_tree.h"
#include "model/chain_index.h"
#include "model/clock.h"
#include "model/limits.h"
#include "model/meet_above.h"
#include "model/profile.h"
#include "model/queue_rules.h"
#include "model/signal_log.h"
#include "model/trace.h"
#include "model/wait_rule.h"

namespace qvet {


// What wait `w` of `t` (a device or host `wait`) waits for.
WaitCond wait_cond(const Trace& t, EventRef w);

struct WaitResolution {
  WaitResolution(EventRef w, const WaitCond& c) : wait(w), cond(c) {}
  EventRef wait;
  WaitCond cond;
  std::vector<uint32_t> candidates;    // indices into Engine::writes(signal); read them through candidate(i)
  bool initial_candidate = false;      // the initial value can satisfy it
  std::vector<bool> candidate_known;   // per candidate: it happens before the wait starts
  bool adds_ordering = true;           // false: the result is already known at the wait's start
  // A wait that knows no write of its signal has the same candidates as every other such wait with
  // its threshold, made so far: they are shared, not copied (thousands of writers, thousands of
  // waits), and come after `candidates` (none of them known): the first `shared_count` of
  // `shared`, a list the engine appends to as writes are made (each writer's first write that
  // meets them, in the order made), so that a write made costs the list one step, not a copy.
  // Engine::resolution lists them in writer order (as pick_candidates would: by writer, a chained
  // queue's latest first); EngineObserver::on_wait sees the first of that order, `unlisted_first`.
  std::shared_ptr<const std::vector<uint32_t>> shared;
  size_t shared_count = 0;
  // Such a wait's candidates of chained queues: every one of their writes that meets it, among the
  // first `chained_made` of the signal processed, `chained_count` of them. They are counted, not
  // listed, as it resolves (a chained queue's thousands of writes, thousands of waits); after
  // `shared` in writer order once Engine::resolution lists them.
  size_t chained_count = 0, chained_made = 0;
  // A wait that knows some write of its signal: per chained writer (its place among the signal's
  // writers) the ranges [lo, hi) of its writes, in its order, whose writes that meet the wait are
  // candidates, `chained_count` of them; counted and met (ChainIndex), not listed, as it
  // resolves; Engine::resolution lists them, all in writer order. Candidates it does not know, but
  // the latest of a writer; candidates it knows (`known`, `chained_known` of the count), past the
  // latest Engine::kMaxListedKnown of a writer.
  struct ChainSpan {
    uint32_t pos, lo, hi;
    bool known;
  };
  std::vector<ChainSpan> chained_spans;
  size_t chained_known = 0;
  // A wait that knows every write of its signal made so far, one of which meets it: its candidates
  // all happen before it starts, so it adds no ordering, and they are listed only when asked for
  // (Engine::resolution lists them as of `listed_at` writes, from `start`), not as it resolves:
  // thousands of writers known to thousands of waits. EngineObserver::on_wait sees it unlisted.
  // So is a wait that knows every write but those of a few writers (Engine::unknown_writers):
  // then `candidates` holds only the unknown ones until it is listed, and the known ones follow.
  bool unlisted = false;
  size_t listed_at = 0;
  Clock start;
  // A forced wait that knows no write of its signal (Engine::settle_forced): its candidates are
  // the entries of `tree` that do not come after it, none known, after `candidates`; listed only
  // when asked for (Engine::resolution), so EngineObserver::on_wait sees the first of them only,
  // `unlisted_first`. Null when none is left.
  std::shared_ptr<const CandidateTree> tree;
  // The first of the candidates after `candidates` (of `shared` or `tree`), in writer order, as an
  // index into Engine::writes(signal), for on_wait; kNone when there are none.
  uint32_t unlisted_first = kNone;
  // A write the wait's start knows that meets it and that no processed write follows, so a
  // candidate: the last processed such (among Engine's latest writes), or kNone. stale-wait names
  // it as the older write.
  uint32_t latest_known = kNone;

  // What checkers ask of the candidates, whatever holds them (listed, shared, counted, a tree).
  size_t count() const { return candidates.size() + (shared ? shared_count : 0) + chained_count; }
  // Some candidate does not happen before the wait starts.
  bool any_unknown() const {
    return shared || chained_count > chained_known || tree || std::find(candidate_known.begin(), candidate_known.end(), false) != candidate_known.end();
  }
  // The first listed candidate the start knows, and the first it does not (else the first of
  // those not listed, all unknown); kNone where there is none.
  uint32_t first_known() const { return first_listed(true); }
  uint32_t first_unknown() const { return first_listed(false) != kNone ? first_listed(false) : unlisted_first; }
  uint32_t first_listed(bool known) const {
    for (size_t i = 0; i < candidates.size(); ++i)
      if (candidate_known[i] == known) return candidates[i];
    return kNone;
  }
  // candidate(i) reads `candidates` and `shared`: a chained count is listed first (Engine::resolution).
  uint32_t candidate(size_t i) const { return i < candidates.size() ? candidates[i] : (*shared)[i - candidates.size()]; }
  bool known(size_t i) const { return i < candidates.size() && candidate_known[i]; }
};

// Stuck waits reported as one `deadlock` (model/deadlock_roots.h). The engine's own list
// (Engine::deadlocks) is what it found stuck together while running: which agents die, not
// how semantics.md groups them.
struct Deadlock {
  std::vector<EventRef> waits;  // one wait (no candidate) or the waits of a cycle, in submission order
  bool cycle = false;
  uint32_t blocked_cmds = 0, blocked_host = 0;  // commands and host statements that never run because of it
  uint32_t blocked_waits = 0;                   // of those, the waits
};

class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  virtual void on_command(uint32_t /*cmd*/, const Clock& /*start*/, const Clock& /*end*/) {}
  virtual void on_host(uint32_t /*event*/, const Clock& /*k*/) {}
  virtual void on_wait(const WaitResolution&) {}
};

struct WriterIndex;
struct WriterIndexes;

// What a run cost and which implementation bounds it reached: tests read the counts, `qvet check`
// prints a note for each bound reached (every bound says so; no verdict changes silently).
struct EngineStats {
  uint64_t stuck_episodes = 0;  // how often every agent was stuck (unstick ran)
  uint64_t latest_steps = 0;    // latest writes of a signal looked at (LatestWrites), apart from work()
  uint64_t chained_meets = 0;   // clock meets of chained queues' writes (MeetAbove, ChainIndex)
  // limits::kMaxChainedScan or kMaxChainedCandidates cut a scan of a chained writer short (a write
  // width no profile has).
  bool bound_reached = false;
  // A 64-bit wait's signal had more than limits::kMaxMixedWrites writes whose 32-bit writes may keep
  // different high halves: they counted with one word each, not every word they may leave.
  bool mixed_bound_reached = false;
};

// On a signal whose 64-bit waits read every word (Engine::reads_every_word): per place in the
// processing order, the places of the writes that happen before (after) it, found once per pair.
struct MixedOrder {
  std::vector<std::bitset<limits::kMaxMixedWrites>> before, after;
};

class Engine {
 public:
  // A forced wait's (below) answer from an earlier round's clocks: what it learns, and whether the
  // initial value is a candidate (then it learns nothing). `release`: it ends as soon as it is
  // reached, learning nothing (deadlock_roots asks what stuck waits could take once the waits they
  // need are released); its candidates are listed from the run's final clocks, as a forced wait's.
  struct Override {
    Clock learned;
    bool initial = false;
    bool release = false;
  };
  using Overrides = std::map<uint64_t, Override>;  // key: wait.key()

  explicit Engine(const Trace& t, Overrides overrides = {}, EngineMode mode = EngineMode::Indexed);
  ~Engine();
  void run(EngineObserver& obs);
  // The least fixed point of the wait rule, in rounds: a wait forced when every agent was stuck
  // learned a lower bound; `refine` recomputes each from the final clocks and hands back the
  // overrides for the next round (check_trace), `changed` where one learns more (engine_rounds.cpp).
  Overrides refine(bool& changed) const;
  bool forced_any() const { return !forced_.empty(); }
  // Steps of agents and agents looked at per wait (deterministic, unlike time): rounds are budgeted by it.
  uint64_t work() const { return work_; }
  EngineStats stats() const;
  // EngineMode::Checked: the first difference between a wait's resolution and the plain rule's
  // (model/wait_rule.h), with both answers, at the wait; empty where there was none.
  const std::string& mismatch() const { return mismatch_; }
  Loc mismatch_at() const { return mismatch_at_; }

  // The run: what ran, the writes of each signal (in each writer's order), what each wait took.
  const Trace& trace() const { return t_; }
  bool ran(EventRef e) const { return e.host ? host_ran_[e.id] : cmd_ran_[e.id]; }
  const std::vector<SignalWrite>& writes(uint32_t signal) const { return writes_[signal]; }
  const SignalWrite* write_of(EventRef e) const;  // the write event `e` makes, or null
  uint64_t initial_value(uint32_t signal) const { return init_[signal]; }
  const std::vector<Deadlock>& deadlocks() const { return deadlocks_; }
  const WaitResolution* resolution(EventRef wait) const;
  const WaitResolution* released_resolution(EventRef wait) const;  // Override::release's, else null
  const Clock* host_clock_at(uint32_t h) const;  // the host's knowledge right after `free` h ran
  bool known(const Clock& k, EventRef a) const;   // `a`'s end happens before an event that knows `k`
  uint64_t submit_key(EventRef e) const;          // submission order: larger is submitted later
  uint64_t word_mask(uint32_t queue_or_host, bool wait) const;
  bool ordered_agent(uint32_t agent) const;  // its writes end in its order (the host, all but chained queues)

  // Which writers' processed writes of `signal` an event that knows `k` may not know. Each answers
  // or declines (false: not cheap to tell; then ask every writer): every one known; the agents
  // (increasing, some perhaps with none) that made one unknown; those of them whose unknown ones
  // may have a value other than `v` (only where the signal has more than kLatest writers).
  bool knows_every_write(uint32_t signal, const Clock& k) const;
  bool unknown_writers(uint32_t signal, const Clock& k, std::vector<uint32_t>& agents) const;
  bool writers_of_other_values(uint32_t signal, const Clock& k, uint64_t v, std::vector<uint32_t>& agents) const;

  // Whether the 64-bit waits on `signal` read its 32-bit writes with every word they may leave (its
  // 32-bit writes may keep different high halves; within limits::kMaxMixedWrites); on such a
  // signal, its processed writes in processing order (indices into writes(signal)) and their order.
  bool reads_every_word(uint32_t signal) const { return mixed_[signal]; }
  const std::vector<uint32_t>& processed_writes(uint32_t signal) const { return processed_order_[signal]; }
  const MixedOrder& mixed_order(uint32_t signal) const;  // brought up to the writes processed
 private:
  struct QueueState {
    QueueOrder order{Mode::Serial};  // the queue-order rules and the chain state (model/queue_rules.h)
    size_t pos = 0;        // next command (index into trace.queue_cmds[q])
    Clock fe;              // what the front end knows when it reaches the next command
    Clock acc;             // join of the ends of every command so far (what a WFI release waits for)
    Clock chain_end;       // chained: the end of the exec the next release ends with
    Clock chain_next;      // chained: what the next exec of the chain waits for (the exec and its releases)
    bool dead = false;
    bool forced = false;   // unstick: resolve the head wait with the writes already made
    uint32_t initial_ok = kNone;  // a head wait found blocked that the initial value meets, whose start knows no write of its signal: it learns nothing
    uint64_t blocked_at = ~uint64_t(0);  // the head wait was found blocked at this epoch of its signal
    // What `derive` proved of the queue's wait `wait` (a command id): every pending write that
    // could satisfy it comes after its end, except those of writer `only` (kNone: all of them). The
    // rest is what the proof rests on, so that a later wait of the queue may inherit it (`inherit`):
    // the signal (kNone: none to inherit), width and threshold it was made for, the episode, and how many
    // writes (of any signal) the queue had made: the waits it excluded hang below the queue's
    // pending writes, of whatever signal.
    struct Proof {
      uint32_t wait = kNone, only = kNone, signal = kNone;
      bool narrow = false;
      uint64_t v = 0, episode = 0;
      size_t own = 0;
    } proof;
    size_t writes = 0;  // signal commands run
    // `derive` cleared the queue's head as the root of a tree: the queues that hang under it
    // (tree_of_) have every pending write behind a pending write of this queue. While it writes
    // nothing, no episode passes and nothing dies, a later wait of the queue on any signal whose
    // pending writers that meet it are all in the tree is cleared too (`inherit`). Per (signal,
    // width) asked: the tree's pending values, sorted (they do not move while the tree holds).
    struct Tree {
      uint64_t episode = ~uint64_t(0), deaths = 0;
      size_t own = 0;
      std::map<std::pair<uint32_t, bool>, std::vector<uint64_t>> pending;
    } tree;
    // What `derive` foresaw of the queue's next wait `wait` (a command id): `count` writers, each
    // with a pending write that meets it, hang below the queue through writes that come after
    // that wait, so their writes come after its end. Good while nothing changed: the same episode
    // and no death since (those writers cannot move before the queue's later writes, so they are
    // still pending).
    struct Foresight {
      uint32_t wait = kNone;
      uint64_t count = 0, episode = 0, deaths = 0;
    } ahead;
  };
  bool step_queue(uint32_t q, EngineObserver& obs);
  bool step_host(EngineObserver& obs);
  // Whether wait `w` can be resolved now; if not, `blocker` gets an agent holding a needed write.
  bool resolvable(EventRef w, const WaitCond& cond, const Clock& start, uint32_t& blocker) const;
  // Resolves a wait: candidates and the clock its end learns. False when it has no candidate.
  // `not_initial` (a wait forced because the initial value is its candidate): if the candidates
  // say otherwise, nothing is resolved, and it is set.
  bool resolve(EventRef w, const WaitCond& cond, const Clock& start, Clock& learned,
               EngineObserver& obs, bool forced, bool* not_initial = nullptr);
  // The candidates of a wait among the writes that ran (`after_wait`: leaving out those that ran
  // after its end) into `r`, and the meet of their clocks into `learned`.
  void candidates(EventRef w, const WaitCond& cond, const Clock& start, bool after_wait,
                  WaitResolution& r, Clock& learned) const;
  // The candidates of waits that know no write of their signal, per signal and (threshold, mask),
  // as of `version` (the signal's writes processed so far): each ordered writer's first write that
  // meets them, in `list`, which grows as writes are made (`has`: the writers whose first match is
  // in it); and every chained queue's write that meets them, counted and met in `chained_meets_`
  // (MeetAbove), not listed (Engine::resolution lists them when asked).
  struct SharedCandidates {
    size_t version = 0;
    std::shared_ptr<std::vector<uint32_t>> list;
    std::unordered_set<uint32_t> has;
    std::vector<uint32_t> first;  // per length of `list`: its first entry in writer order (candidate_order)
    Clock ordered_meet;           // the meet of `list`'s ends
    MeetAbove::Answer chained;    // the chained writes' (as of `version`)
    Clock meet;                   // of every candidate's end: ordered_meet and chained.meet
    uint32_t first_all = kNone;   // the first candidate in writer order, or kNone
  };
  // The order candidates are listed in: by writer, a chained queue's latest first.
  uint64_t candidate_order(uint32_t signal, uint32_t write) const;
  bool in_writer_order(uint32_t signal, std::vector<uint32_t>& list) const;  // sorts it; true if it already was
  Clock meet_of_ends(uint32_t signal, const std::vector<uint32_t>& writes) const;  // what every one of them knows
  // A shared list's first `count` entries in that order, made once per list and length.
  using ListRef = std::shared_ptr<const std::vector<uint32_t>>;
  mutable std::map<std::pair<const void*, size_t>, std::pair<ListRef, ListRef>> sorted_shared_;  // (the list, kept alive: its address is the key), sorted
  // shared_[s][{threshold, mask}] brought up to the writes made so far.
  SharedCandidates& shared_candidates(const WaitCond& cond) const;
  mutable std::vector<std::map<std::pair<uint64_t, uint64_t>, SharedCandidates>> shared_;
  // Per signal, its chained queues' processed writes keyed by value at 64 and at 32 bits; added
  // to a width's treap when a wait at that width asks (most signals' waits never do).
  struct ChainedMeets {
    MeetAbove wide, narrow;
    std::vector<uint32_t> writes;      // in the order processed
    size_t in_wide = 0, in_narrow = 0;  // how many of them each treap holds (one width is asked, mostly)
  };
  mutable std::vector<ChainedMeets> chained_meets_;
  MeetAbove::Answer chained_matches(const WaitCond& cond) const;
  // The writes of chained queues among the first `made` of `cond.signal` processed that meet it,
  // with `ordered` (a shared list's first `count`), in writer order: made once per such list.
  ListRef shared_with_chained(const WaitCond& cond, size_t made, const ListRef& ordered, size_t count) const;
  mutable std::map<std::tuple<uint32_t, uint64_t, uint64_t, size_t>, ListRef> with_chained_;
  struct Scan;
  struct Span {
    size_t kb = 0;   // ordered agents: the wait knows its writes [0, kb)
    size_t run = 0;  // ... and [run, kb) is the trailing run of them that satisfies the wait
    // Chained agents read through their ChainIndex: the ranges of its writes the wait knows, and
    // where its look back ends (a known lower write that follows all earlier ones; 0: none).
    std::vector<std::pair<size_t, size_t>> known;
    size_t from = 0;
  };
  // The known writes that do not satisfy a wait, which overwrite a candidate they come after: one
  // by one, and per chained queue read through its ChainIndex the join of their ends (an event is
  // known to a join exactly when it is known to one of the joined clocks).
  // The joins are made when a candidate is first asked about (most waits know none that meets them).
  struct LowerKnown {
    std::vector<uint32_t> writes;
    struct Chain {
      const ChainIndex* index;
      const std::vector<std::pair<size_t, size_t>>* known;  // the ranges the wait knows (Span::known)
      size_t from;
    };
    std::vector<Chain> chains;
    ChainIndex::Cond cond{};  // the wait's
    const std::vector<Clock>& joins() const;

   private:
    mutable std::vector<Clock> joins_;
    mutable bool joined_ = false;
  };
  // The candidates of r.chained_spans, in r, all in writer order.
  void list_chained_spans(WaitResolution& r) const;
  // candidates(), pass 1: per agent, what the wait knows of its writes, and the known writes that
  // do not satisfy it (they may overwrite candidates). Returns whether it knows any write.
  bool scan_known(const Scan& sc, const std::vector<uint32_t>& agents, std::vector<Span>& spans, LowerKnown& lower) const;
  // Pass 2: the candidates.
  void pick_candidates(const Scan& sc, const std::vector<uint32_t>& agents, const std::vector<Span>& spans,
                       const LowerKnown& lower, WaitResolution& r) const;
  // A forced wait's resolution: the override from an earlier run, or a lower bound of it.
  void resolve_forced(const EventRef& w, const WaitCond& cond, const Clock& start,
                      WaitResolution& r, Clock& learned);
  void release(EventRef w, const WaitCond& cond, const Clock& start, Clock& learned);
  struct Forced {
    EventRef wait;
    WaitCond cond;
    Clock start, learned;  // learned: what it learned in this run
    bool initial;
    uint32_t resolution;  // index into resolutions_
    Clock next_learned;   // settle_forced: what it learns from this run's final clocks
    bool next_initial = false;
    bool released = false;  // Override::release: settled only when asked (released_resolution)
  };
  Overrides overrides_;
  // Closes an override's `learned` over this round: joins into it `start` and this round's end of
  // every write it knows and `start` does not, so that the result is down-closed in what it knows of
  // writes and no open clock (Clock::open), and the shortcuts that rest on down-closed clocks still
  // hold for it. Sound: in the fixed point the wait's end comes after each such write's end, and
  // this round's ends are lower bounds of the fixed point's. False (learned unchanged) where a
  // write it adds has not run in this round, or a joined end is open itself. Its steps (queues and
  // commands looked at) count against one budget for the run, linear in the program
  // (kCloseBudget plus kCloseBudgetPerEvent per command and host statement): past it, false too.
  static constexpr uint64_t kCloseBudget = 1 << 18, kCloseBudgetPerEvent = 16;
  bool close_override(const Clock& start, Clock& learned);
  uint64_t close_budget_ = 0;
  Clock::Derived closed_;  // close_override: per override node where start knows nothing, the join of its writes' ends
  std::vector<std::vector<uint32_t>> queue_writes_;  // per queue: the indices of its signal commands, increasing
  std::vector<uint32_t> last_host_write_;            // per host event: the last one at or before it that writes, or kNone
  std::vector<uint32_t> last_host_wait_;             // per host event: the last wait at or before it, or kNone
  std::vector<Forced> forced_;
  mutable std::map<uint32_t, std::pair<size_t, bool>> released_;  // per released wait's resolution: its entry in forced_, settled
  // After the run: each forced wait's candidates and what it learns from the final clocks, then
  // its EngineObserver::on_wait (deferred until then).
  void settle_forced(EngineObserver& obs);
  // settle_forced: how many forced waits submitted after a wait it asks whether their settled ends
  // know it. Past the window, fewer writes are shown to come after: more rounds, never another answer.
  static constexpr size_t kSettleWindow = 64, kSettleGap = 8;
  // settle_forced for a wait whose start knows no write of its signal: its candidates through the
  // signal's CandidateTree, the shared list (with the chained queues' writes that meet it) less
  // those after it (false: not such a wait).
  bool settle_through_tree(Forced& f, WaitResolution& r);
  std::vector<std::map<std::pair<uint64_t, uint64_t>, std::shared_ptr<const CandidateTree>>> trees_;  // per signal, (threshold, mask)
  // Whether `k` knows any write command of `s`, made or not, asked of each writer's entry in `k`
  // (exact on any clock, down-closed or not; walks only the subtrees of `k` that hold a writer).
  bool knows_write_command(uint32_t s, const Clock& k) const;
  void record_write(uint32_t signal, size_t index, const Clock& end);
  bool write_dead(const SignalWrite& w) const;
  void unstick();
  // Of a strongly connected component of stuck heads (stuck_nodes_ indices) that nothing can
  // release: the waits of the deadlock to report first (those in one happens-before cycle, or one
  // with no candidate and those caught with it).
  // Before forcing anything: what the stuck waits prove of each other from below (sound facts of
  // the least fixed point), so that a wait whose pending candidates all come after it resolves
  // exactly, with no forcing and no further round. True when some wait was cleared.
  bool derive();
  // A later wait of a queue whose wait was derived, on the same signal and width and at least its
  // threshold, inherits the proof while nothing it rests on changed: no episode since (nothing was
  // forced, so every wait behind the queue's pending writes still is) and no write by the queue
  // (its pending writes, of any signal, behind this wait too, are what the waits it excluded come
  // after).
  void inherit(EventRef w, uint32_t q, const WaitCond& cond);
  // The queue's wait `w` was foreseen by `derive` (QueueState::ahead): if every other pending
  // writer that meets it is one of those that hang below, it is cleared now (a proof with no
  // `only`), as if `derive` had found it at the head.
  void foresee(EventRef w, uint32_t q, const WaitCond& cond);
  std::vector<std::pair<uint64_t, uint32_t>> tree_of_;  // per queue: (episode, queue whose tree it hangs in), QueueState::Tree
  // How many of the tree's queues have a pending write of the wait's signal that meets it; and
  // how many live writers have one (WriterIndex::pending).
  uint64_t tree_pending(uint32_t q, const WaitCond& cond);
  uint64_t pending_meeting(const WaitCond& cond) const;
  std::vector<uint32_t> next_wait_;  // per command: the queue's next wait after it (a command id), or kNone
  uint64_t episodes_ = 0;  // calls of unstick
  bool has_done(const WaitCond& cond) const;  // the initial value, or a write made so far, meets it
  std::set<uint32_t> underived_;  // waits whose derivation did not hold up (their writes so far are overwritten)
  enum class WaitStep { Blocked, Resolved, Dead };
  // One attempt at the wait at the head of `agent`: blocked (a write it may need has not run),
  // resolved (`learned` holds what its end learns), or dead (a deadlock, or blocked behind one).
  WaitStep try_wait(EventRef w, uint32_t agent, const WaitCond& cond, bool& forced,
                    uint64_t& blocked_at, const Clock& start, Clock& learned, EngineObserver& obs);
  uint32_t blocked_cause(EventRef wait, const WaitCond& cond, const Clock& start);
  Clock wait_start(EventRef w) const;
  // What a command of queue `q` submitted by host statement `submit` knows as it starts, before its
  // queue's rule adds to it (step_queue).
  Clock start_at(uint32_t q, uint32_t submit) const;
  // Whether write `sw` is a device write submitted after host wait `w` (so it comes after the wait).
  bool submitted_after(EventRef w, const SignalWrite& sw) const;
  std::vector<std::array<std::unique_ptr<MaxTree>, 2>> unprocessed_;  // per signal and width (narrow): its unprocessed writes, once asked
  struct StuckNode {
    EventRef wait;
    uint32_t agent;
    WaitCond cond;
  };
  // Which queues may step: a queue leaves the work list when it cannot step, and comes back when
  // what stopped it changes (the host submits its next batch, a write of the signal its head wait
  // reads is made, an agent dies, or its wait is forced), so a step costs nothing per idle queue.
  void wake(uint32_t q);
  void park(uint32_t q);  // q cannot step: note what it waits for
  std::vector<uint32_t> ready_;  // a min-heap of queue ids (lower ids first, as submitted)
  std::vector<uint8_t> is_ready_;
  std::vector<uint32_t> parked_on_;               // per queue: the signal it is listed under, or kNone
  // Per signal, the queues parked at a wait on it. A write wakes those whose wait it meets (a write
  // that does not meet a blocked wait changes no pending write that meets it, and runs no write that
  // does); a wait whose words a 32-bit write's high half decides (mixed) is woken by every write.
  struct Parked {
    std::vector<uint32_t> any;
    std::multimap<uint64_t, uint32_t> at64, at32;  // by threshold: waits on the whole word, on the low half
  };
  std::vector<Parked> waiting_on_;
  std::vector<uint32_t> parked_;                   // queues parked at a wait (some entries stale)
  bool derived_blocker(EventRef w, const WaitCond& cond, bool& blocked, uint32_t& blocker) const;
  std::vector<StuckNode> stuck_nodes_;
  // derive, for a root with a write made that meets it, and `below` (true for its queue and those
  // whose heads hang in its tree, all of whose pending writes come after its end): whether each
  // pending candidate of other writers sits behind a wait (the writer's head or the next; or the
  // host's, for a batch not submitted yet) that only `below`'s pending writes can release, so
  // comes after the root too. Declines past a few writers.
  using AgentTest = std::function<bool(uint32_t agent)>;
  bool pending_held_by(const StuckNode& n, const AgentTest& below) const;
  // Whether wait `v` (a device or host wait not run yet) has no candidate made and some pending
  // candidate, all of them `below`'s (its own agent's writes after it are none): then its end
  // knows what they all know.
  bool released_only_by(EventRef v, const AgentTest& below) const;
  std::set<std::pair<uint64_t, uint64_t>> unforceable_;  // forced waits (submit_key) that found no candidate, at epoch
  std::vector<int> stuck_node_of_queue_;
  std::vector<std::vector<int>> stuck_out_;  // unstick's graph: the stuck heads, then its chain entries
  void stuck_edges(int node, std::vector<int>& to);
  void wake_parked();
  void kill_agent(uint32_t agent, uint32_t deadlock, bool wake_all = true);  // wake_all: wake every parked queue
  void finish_counts();

  // The plain rule (model/wait_rule.h): the whole rule in EngineMode::Plain; in Checked, its answer
  // per resolution (compared once the run has listed them all, Engine::check_listed).
  EngineMode mode_;
  WaitAnswer plain(EventRef w, const WaitCond& cond, const Clock& start, bool after_wait) const;
  bool plain_rule(const WaitCond& cond) const { return mode_ == EngineMode::Plain && !mixed(cond); }
  std::vector<std::unique_ptr<WaitAnswer>> plain_answers_;  // per resolution
  void check_learned(EventRef w, const Clock& start, const Clock& learned, const WaitAnswer& a);
  void check_listed();
  std::string mismatch_;
  Loc mismatch_at_;

  const Trace& t_;
  const Program& p_;
  size_t nq_;
  std::vector<QueueState> qs_;
  std::vector<uint8_t> cmd_ran_, host_ran_;
  size_t host_pos_ = 0;
  bool host_dead_ = false;
  bool host_forced_ = false;
  // A blocked wait need not be re-examined until a write of its signal is processed or an agent
  // dies: epoch(signal) counts both.
  std::vector<uint64_t> sig_epoch_;
  uint64_t deaths_ = 0;
  uint64_t epoch(uint32_t signal) const { return sig_epoch_[signal] + (deaths_ << 40); }
  uint64_t host_blocked_at_ = ~uint64_t(0);
  Clock host_clock_;
  // What a submit knows: the host's clock changes only at host waits; between them only the host
  // index grows. So each submit records the clock of the latest host wait (an "epoch").
  std::vector<std::shared_ptr<const Clock>> host_epochs_;
  std::vector<uint32_t> host_epoch_;  // per host submit and wait: its epoch (the host's clock after its last wait)
  std::vector<std::pair<uint32_t, std::shared_ptr<const Clock>>> kept_host_clocks_;
  std::vector<std::vector<SignalWrite>> writes_;  // per signal, in agent order within each agent
  // per signal: per agent, indices into writes_[signal] in agent order, and how many are processed
  struct AgentWrites {
    uint32_t agent;
    std::vector<uint32_t> idx;
    std::vector<uint64_t> vals;  // writes_[signal][idx[j]].value before any write runs (searched often)
    std::vector<uint64_t> suffix_max, suffix_max32;
    std::vector<uint64_t> suffix_min;  // of the values' lower bounds (a 32-bit write's high half unknown: 0)
    bool monotone = true, monotone32 = true;  // values never decrease (timelines): binary search
    size_t processed = 0;
    uint64_t processed_max = 0, processed_max32 = 0;  // the largest values written so far
    uint64_t processed_min = ~uint64_t(0);            // and the least
    std::vector<uint32_t> waiters;  // queues whose derived wait needs only this writer's writes
    // Its writes among the signal's latest (LatestWrites), in its order. Only a chained queue's
    // can be many (every other writer's write knows its earlier ones): they are found per range
    // of commands a clock knows (each_known_latest, last_unknown_latest), not write by write.
    std::set<uint32_t> latest;
    bool holder = false;  // listed in LatestWrites::holders
    std::shared_ptr<ChainIndex> chain;  // a chained queue's writes, as processed (null: not kept)
    bool chain_broken = false;          // a write was processed out of its order: none kept
  };
  // A chained writer's ChainIndex, where its first `n` writes are read through it for a wait for
  // `cond` (more than kChainDirect of them, at 64 or 32 bits), or null.
  const ChainIndex* chain_of(const AgentWrites& aw, size_t n, const WaitCond& cond) const;
  // Of the ranges of aw's first n writes that `span` says the wait knows, from its look back's end:
  // the positions of those no write of `lower` comes after (sorted, disjoint [lo, hi)).
  std::vector<std::pair<size_t, size_t>> not_overwritten(const Scan& sc, const AgentWrites& aw, size_t n, const Span& span,
                                                         const LowerKnown& lower) const;
  static constexpr size_t kChainDirect = 64;
  // The ranges of aw's first n writes (positions) whose commands `k` knows, in order.
  std::vector<std::pair<size_t, size_t>> known_positions(const Clock& k, uint32_t signal, const AgentWrites& aw, size_t n) const;
  // Per signal, the writers ordered by what they can offer a wait (pairs of value and place in
  // by_agent_): the largest value written so far, and the largest value still to come from a live
  // writer, each at both widths. A wait looks only at the writers that can matter to it, not at
  // every writer of its signal (one signal written by thousands of queues).
  // `pending` counts its members at least a value in O(log n) (foresee asks how many there are).
  // (model/writer_index.h: GCC's order-statistics tree is slow to parse, so only the engine's own
  // files see it.)
  std::unique_ptr<WriterIndexes> index_;
  WriterIndex& writer_index(uint32_t signal) const;
  void index_pending(uint32_t signal, uint32_t pos, bool add);
  // A live writer's largest value still to write (its key in WriterIndex::pending); false if none.
  bool pending_top(const AgentWrites& aw, bool narrow, uint64_t& key) const;
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> agent_signals_;  // per queue (host last): (signal, pos)
  std::vector<std::pair<uint32_t, uint32_t>>& signals_of(uint32_t agent) {
    return agent_signals_[agent == kHostAgent ? nq_ : agent];
  }
  // The writers of a wait's signal that can matter to it: those that wrote a value meeting it,
  // those its start knows of, and the host; as places in by_agent_, in order.
  // `knows_none`: start knows no write of the signal (then `out` holds only writers with a match).
  // `knows_all`: start knows every write made so far and they form a timeline (below); then only
  // the writers with a match can give candidates, and no write overwrites another's.
  void relevant_writers(const WaitCond& cond, const Clock& start, std::vector<uint32_t>& out, bool& knows_none,
                        bool& knows_all) const;
  // Per signal: the writes processed that no later processed write knows (every other write is
  // known by one of them), and whether so far every write knew every earlier one and wrote at
  // least the value of the one before (at 64 bits, at 32): a timeline, totally ordered and never
  // lower. They are kept however many: past kLatest, which of them a clock knows is asked of its
  // tree (known_latest, ManyLatest), so a thousand unordered writers cost a wait no walk over
  // every writer of its signal.
  struct LatestWrites {
    std::vector<uint32_t> order;  // in processing order; removed ones stay until it is compacted
    std::vector<uint8_t> in;      // per write of the signal: one of them now
    size_t live = 0, agents = 0;  // how many, and how many writers have one (AgentWrites::latest)
    // The writers (places in by_agent_) that have one, and until it is compacted some that lost
    // theirs: a clock is asked per writer, not per latest write, past kLatest.
    std::vector<uint32_t> holders;
    // Along each writer's writes, coverage only grows (SignalWrite::cover: each write's is at
    // least its previous one's, and an uncovered one is followed by uncovered ones), as a queue's
    // front end orders what it learns from other queues; then unknown_writers follows only each
    // writer's last unknown latest write. Checked as writes are made, not assumed.
    bool covers_in_order = true;
  };
  static constexpr size_t kLatest = 64;
  std::vector<LatestWrites> latest_;
  std::vector<uint8_t> timeline64_, timeline32_;
  // True only where `k` surely knows no processed write of `s` (false: it knows one, or that is not
  // cheap to tell). Only the writers whose queues it knows anything of are asked
  // (Clock::any_known_queue over `writer_queues_`, per signal its queue writers in order): a start
  // that knows thousands of queues, none of them a writer, is not walked queue by queue.
  bool knows_no_write(uint32_t s, const Clock& k) const;
  // Whether `k` knows any of the write commands of `aw`, made or not (fixed by its entry for the queue).
  bool knows_write_command_of(const Clock& k, uint32_t s, const AgentWrites& aw) const;
  std::vector<std::vector<uint32_t>> writer_queues_;
  // The latest writes of `s` that `k` knows, in processing order.
  void known_latest(uint32_t s, const Clock& k, std::vector<uint32_t>& out) const;
  // Calls `f(i)` for each latest write `i` of `aw` that `k` knows, in its order; and the last one
  // it does not know, or kNone. A writer with many (a chained queue whose releases finish out of
  // order) is searched per range of the commands `k` knows of its queue (Clock::known_ranges).
  template <class F>
  void each_known_latest(const Clock& k, uint32_t s, const AgentWrites& aw, F&& f) const;
  uint32_t last_unknown_latest(const Clock& k, uint32_t s, const AgentWrites& aw) const;
  bool latest_by_ranges(const AgentWrites& aw) const;  // whether those two search by ranges
  // The first latest write of `aw` whose command is at or after queue index `lo`.
  std::set<uint32_t>::const_iterator latest_from(uint32_t s, const AgentWrites& aw, uint32_t lo) const;
  // Whether `w`'s cover holds its writer's previous write's (LatestWrites::covers_in_order).
  bool covers_previous(uint32_t s, const SignalWrite& w) const;
  // Drops the latest writes of `s` that `end` knows (a new write's), keeping the lists in step.
  void drop_known_latest(uint32_t s, const Clock& end);
  // A signal with more than kLatest latest writes: what a start knows of
  // them is asked through its clock's tree, whose subtrees later starts share, not writer by
  // writer (a relay of waits that know one latest write each, among thousands of unordered
  // ones: Clock::each_known_queue, Clock::first_reaching). Over its queue writers (their places in
  // by_agent_): the rank + 1 of each one's last write made (a "none here" remembered at a stamp
  // holds while no writer under it has written since), the largest value it will write (at both
  // widths; an upper bound, fixed), and the largest it has written (values as `reach` in engine.cpp keeps them).
  struct ManyLatest {
    MaxTree last_rank, will, will32, wrote, wrote32;
    MaxTree will_below, wrote_below;  // the same for the least value, as ~v (a larger ~v is a lower v; none: 0)
  };
  // The keys of what the engine has a clock's nodes remember per signal s (Clock::Node::Memo;
  // any_known_queue's tags are apart): resolve_unlisted_many's bounds s << 1 | narrow,
  // knows_no_matching_writer's kMatchKey | s << 1 | narrow, known_latest's kLatestTag | s,
  // top_known_latest's kTopKey | s << 1 | narrow, writers_of_other_values' kBelowKey | s (and
  // resolve_unlisted_many's wide bound).
  static constexpr uint64_t kMatchKey = uint64_t(1) << 32, kLatestTag = uint64_t(2) << 32, kTopKey = uint64_t(3) << 32,
                            kBelowKey = uint64_t(4) << 32;
  mutable std::vector<std::unique_ptr<ManyLatest>> many_latest_;  // per signal, made when first asked
  // This engine's stamps (Clock::each_known_queue) are stamp_base_ + a signal's writes made so far:
  // a range of its own, taken from one counter for the process, since an override's clock shares
  // nodes with an earlier engine's.
  uint64_t stamp_base_ = 0;
  ManyLatest& many_latest(uint32_t s) const;
  // The stamp of now for `s`, and whether what was found at `stamp` over the queues [lo, hi) still
  // holds: no writer there made a write since, nor lost a latest write (drop_known_latest).
  uint64_t stamp_now(uint32_t s) const { return stamp_base_ + processed_order_[s].size(); }
  bool unchanged_since(uint32_t s, uint64_t lo, uint64_t hi, uint64_t stamp) const;
  Clock::Fresh fresh_for(uint32_t s) const;  // unchanged_since, as a clock's walks ask it
  // The most (Word, Low: the low half) or the least (Below, complemented: ~v) that each writer's
  // writes of `s` from the first `k` does not know can be, made or not, and for the queues k knows
  // nothing of their writers' most or least: one cache key each (resolve_unlisted_many and
  // writers_of_other_values share Word's).
  enum class WillOf { Word, Low, Below };
  Clock::Bound will_bound(uint32_t s, const Clock& k, WillOf of) const;
  // The latest write of `s` (more than kLatest) that `start` knows and that meets `cond`, made
  // last, or kNone: what known_latest then last_meeting give, read from the clock's tree
  // (Clock::max_known) instead of a list of every latest write it knows.
  uint32_t top_known_latest(const WaitCond& cond, const Clock& start) const;
  // Writer places [lo, hi) of the queues [lo_queue, hi_queue).
  std::pair<size_t, size_t> writer_places(uint32_t s, uint64_t lo_queue, uint64_t hi_queue) const;
  // resolve_unlisted where the latest writes are many: the first unknown candidate (in writer
  // order) only; the others are listed with the known ones when asked for.
  bool resolve_unlisted_many(const WaitCond& cond, const Clock& start, WaitResolution& r) const;
  // Whether `start` knows no processed write of any writer that made a write meeting `cond` (and
  // `knows_some`, asked only where the initial value meets it: it knows a latest write, so some
  // write); Clock::first_reaching over the writers
  // whose write commands it knows, bounded by the most each will write.
  bool knows_no_matching_writer(const WaitCond& cond, const Clock& start, bool& knows_some) const;
  // The first of its writes that `k` does not know (an ordered agent's known ones are a prefix; a
  // chained queue's need not be, and the later ones may be known), or its number of writes.
  size_t first_unknown_write(const Clock& k, uint32_t signal, const AgentWrites& aw) const;
  // Its first candidate for a wait that starts at `start` that `start` does not know, in the order
  // pick_candidates lists them, or kNone.
  uint32_t first_unknown_candidate(const Clock& start, const WaitCond& cond, const AgentWrites& aw) const;
  void sorted_matching_writers(const WaitCond& cond, std::vector<uint32_t>& out) const;
  uint32_t pos_of(uint32_t signal, uint32_t agent) const;
  void matching_writers(const WaitCond& cond, std::vector<uint32_t>& out) const;  // wrote a value meeting it  // kNone when it does not write it
  // Of its first `n` writes (all its processed ones when kNone).
  bool knows_any_write(const Clock& k, uint32_t signal, const AgentWrites& aw, size_t n = kNone) const;
  // Chained queues: how far back a wait looks for candidates, and how many it keeps
  // (docs/language-notes.md).
  // A wait's known candidates on one chained queue read through its ChainIndex listed one by one,
  // from the latest; the others are left to spans (WaitResolution::ChainSpan::known).
  static constexpr size_t kMaxListedKnown = 1024;
  mutable bool bound_reached_ = false;
  // settle_forced: while one forced wait is settled, the forced waits already settled whose ends
  // come after its end (a write that knows one of them does too); null elsewhere.
  const std::vector<EventRef>* settle_after_ = nullptr;
  mutable uint64_t work_ = 0;  // one of them cut a scan short (said in a note)
  mutable uint64_t latest_steps_ = 0;
  // The first write of `aw` at or after `from` whose value meets `c`.
  size_t first_match(const AgentWrites& aw, size_t from, const WaitCond& cond) const;
  // The first live write that could still satisfy wait `w` on agent `aw`, or kNone.
  uint32_t pending_candidate(EventRef w, const AgentWrites& aw, const WaitCond& cond) const;
  std::vector<std::vector<AgentWrites>> by_agent_;
  std::vector<uint32_t> cmd_write_;   // per cmd: index into writes_[signal] (kNone if it writes none)
  std::vector<uint32_t> host_write_;  // per host event
  std::vector<uint64_t> init_;
  std::vector<std::vector<uint32_t>> processed_order_;  // per signal: writes in processing order
  std::vector<bool> uniform_high_;  // per signal: every write so far has the initial value's high half
  // A signal with 32-bit writes whose 64-bit writes and initial value do not share one high half
  // (and at most limits::kMaxMixedWrites writes): a 32-bit write may leave several words, which depend on
  // the wait that reads it, so its 64-bit waits are read plainly (mixed_candidates), not through
  // the fast paths and indices, which read one word per write. Its 32-bit waits are not affected.
  std::vector<uint8_t> mixed_;
  bool mixed_bound_reached_ = false;
  bool mixed(const WaitCond& c) const { return mixed_[c.signal] && c.mask == ~uint64_t(0); }
  // Waits compare the whole word or its low half; the writer index is kept for those two (and
  // read where one word per write is the answer: not for mixed()).
  bool indexed(const WaitCond& c) const { return (c.mask == ~uint64_t(0) && !mixed_[c.signal]) || c.narrow(); }
  mutable std::vector<MixedOrder> mixed_order_;
  void mixed_candidates(const Scan& sc, WaitResolution& r, Clock& learned) const;
  // pending_candidate, but of a mixed() wait: a pending 64-bit write that may lend a 32-bit write
  // a high half that meets it counts too.
  uint32_t pending_blocker(EventRef w, const AgentWrites& aw, const WaitCond& cond, const Clock& start) const;
  // The highest high half the 32-bit write `c`, which has not run, may keep where a mixed() wait
  // that starts at `start` sees it (with writes that will never run too, where `with_dead`).
  uint64_t unrun_high(EventRef w, const WaitCond& cond, const Clock& start, bool with_dead, const SignalWrite& c) const;
  uint64_t high_half_before(uint32_t signal, const Clock& end) const;
  std::vector<uint64_t> top_high_;  // per signal: the highest high half a 64-bit write (or the initial value) leaves
  mutable std::vector<WaitResolution> resolutions_;  // mutable: unlisted ones are listed when asked for
  // Whether a wait that starts at `start` may be resolved unlisted (WaitResolution::unlisted);
  // if so, `r` gets its unknown candidates and latest_known.
  bool resolve_unlisted(const WaitCond& cond, const Clock& start, WaitResolution& r) const;
  // The last processed of the signal's latest writes that `start` knows and that meets `cond`.
  uint32_t latest_known_match(const WaitCond& cond, const Clock& start) const;
  uint32_t last_meeting(const WaitCond& cond, const std::vector<uint32_t>& writes) const;  // the last that meets it, or kNone
  static constexpr size_t kCoverQueues = 8;  // SignalWrite::cover is kept while an end knows at most these
  void find_cover(uint32_t signal, SignalWrite& w, const Clock& end) const;
  bool knows_some_write(const Clock& k, uint32_t signal, const AgentWrites& aw) const;  // any of its processed ones
  // How many of an ordered agent's first `n` writes `k` knows (they are a prefix).
  size_t known_prefix(const Clock& k, uint32_t signal, const AgentWrites& aw, size_t n) const;
  void list_candidates(WaitResolution& r) const;
  std::vector<size_t> chained_max_;  // per signal: the most writes a chained queue made (their scans are bounded)
  std::vector<uint32_t> cmd_resolution_, host_resolution_;
  std::vector<Deadlock> deadlocks_;
  std::vector<uint32_t> queue_dead_cause_;
  uint32_t host_dead_cause_ = kNone;
};

inline const SignalWrite* Engine::write_of(EventRef e) const {
  uint32_t i = e.host ? host_write_[e.id] : cmd_write_[e.id];
  return i == kNone ? nullptr : &writes_[t_.signal(e)][i];
}
inline bool Engine::known(const Clock& k, EventRef a) const {
  return a.host ? k.knows_host(a.id) : k.knows(t_.cmds[a.id].queue, t_.cmds[a.id].index);
}
inline uint64_t Engine::submit_key(EventRef e) const {
  return e.host ? (uint64_t(e.id) << 32) : (uint64_t(t_.cmds[e.id].submit) << 32 | (e.id - t_.host[t_.cmds[e.id].submit].cmd_begin + 1));
}

}  // namespace qvet
