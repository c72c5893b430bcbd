#include "devices/replay.h"

#include <algorithm>
#include <atomic>
#include <set>

#include "devices/rng.h"
#include "devices/sim/sim.h"
#include "model/profile.h"

namespace qvet {

namespace {

// Host accesses to memory the devices use at the same time.
uint64_t load(uint64_t* p) { return std::atomic_ref<uint64_t>(*p).load(std::memory_order_acquire); }
void store(uint64_t* p, uint64_t v) { std::atomic_ref<uint64_t>(*p).store(v, std::memory_order_release); }
uint32_t load(uint32_t* p) { return std::atomic_ref<uint32_t>(*p).load(std::memory_order_acquire); }
void store(uint32_t* p, uint32_t v) { std::atomic_ref<uint32_t>(*p).store(v, std::memory_order_release); }

constexpr uint64_t kGrace = 100'000'000;  // ns the devices get to move after the watchdog released a wait

class Replayer {
 public:
  Replayer(const Trace& t, const Plan& plan, Backend& b, const ReplayOptions& o)
      : t_(t), plan_(plan), b_(b), o_(o), m_(b.memory()), owner_(access_owners(t)) {}

  ReplayRun run(uint64_t seed) {
    const Layout& l = plan_.layout;
    for (uint32_t w = 0; w < l.words; ++w) store(&m_.words[w], plan_.word_init[w]);
    for (uint32_t c = 0; c < l.cells; ++c) store(&m_.cells[c], Version::kInitial);
    for (uint32_t s = 0; s < 2 * l.slots; ++s) store(&m_.times[s], kNever);
    for (uint32_t s = 0; s < l.seen; ++s) store(&m_.seen[s], Version::kInitial);
    b_.begin_run(seed);
    for (const Call& c : plan_.calls) {
      call(c);
      if (!out_.error.empty()) break;
    }
    if (out_.error.empty()) drain();
    if (out_.error.empty()) out_.error = b_.failed();
    if (out_.error.empty()) observe();
    else settle();
    return std::move(out_);
  }

 private:
  void call(const Call& c) {
    switch (c.op) {
      case Call::Op::Probe: return b_.probe(c.stream, plan_.probes[c.a]);
      case Call::Op::CopyCells: return b_.copy_cells(c.stream, c.a, c.b);
      case Call::Op::WaitValue: return b_.wait_value(c.stream, c.a, c.value, c.width);
      case Call::Op::WriteValue: return b_.write_value(c.stream, c.a, c.value, c.width);
      case Call::Op::Record: return b_.record(c.stream, c.a);
      case Call::Op::WaitEvent: return b_.wait_event(c.stream, c.a);
      case Call::Op::HostWait: host_wait(c); break;
      case Call::Op::HostWrite: store(&m_.words[c.a], c.value); break;
      case Call::Op::HostStamp: host_cells(plan_.probes[c.a], true); break;
      case Call::Op::HostSee: host_cells(plan_.probes[c.a], false); break;
      case Call::Op::HostMark: break;
    }
    uint64_t now = b_.now();
    uint32_t s = plan_.host_slot[c.b];
    store(&m_.times[2 * s], now);
    store(&m_.times[2 * s + 1], now);
  }

  void host_wait(const Call& c) {
    uint64_t t0 = b_.now();
    WaitCond cond = wait_cond(t_, {true, c.b});
    while (!cond.met_by(load(&m_.words[c.a]))) {
      if (std::string e = b_.failed(); !e.empty()) return void(out_.error = e);
      if (b_.now() - t0 > o_.timeout_ns) {
        if (released_at_ == kNever) record_stuck(stuck_waits(), c.b);
        out_.run.hung.push_back({{true, c.b}, overwritten(cond, c.b)});
        out_.notes.push_back("the host wait at line " + std::to_string(t_.host[c.b].loc.line) + " hung; the watchdog wrote " +
                             t_.program->signals[c.a].name + " = " + std::to_string(c.value));
        release(c.a, c.value);
        return;
      }
      b_.pause(o_.poll_ns);
    }
  }

  // A host `write` stamps its cells; a host `read` records what its cells hold.
  void host_cells(const Probe& p, bool write) {
    const auto& d = plan_.layout.desc;
    uint32_t i = p.desc, nw = d[i++];
    for (uint32_t k = 0; k < nw; ++k, i += 2)
      for (uint32_t c = d[i]; c < d[i + 1]; ++c) store(&m_.cells[c], p.stamp);
    if (write) return;
    uint32_t ns = d[i++];
    for (uint32_t k = 0; k < ns; ++k, i += 3)
      for (uint32_t c = d[i]; c < d[i + 1]; ++c) store(&m_.seen[d[i + 2] + c - d[i]], load(&m_.cells[c]));
  }

  // The waits the devices are stuck on: per queue, its first command that has not finished, when
  // that is a wait that was submitted (nothing else can take seconds). Most have a word that does not satisfy them.
  // One whose word does may only not have looked yet: the devices get up to 10 ms more, and one
  // that still has not passed has stopped looking (a driver or device fault: a wait that missed
  // its wakeup). Earliest first.
  std::vector<uint32_t> stuck_waits() {
    auto unpassed = [&]() {
      std::vector<uint32_t> out;
      for (const auto& ids : t_.queue_cmds)
        for (uint32_t id : ids) {
          if (passed(id)) continue;
          if (t_.cmds[id].op == CmdOp::Wait && load(&m_.times[2 * plan_.host_slot[t_.cmds[id].submit]]) != kNever) out.push_back(id);
          break;
        }
      std::sort(out.begin(), out.end());
      return out;
    };
    auto satisfied = [&](uint32_t id) {
      WaitCond cond = wait_cond(t_, {false, id});
      return cond.met_by(load(&m_.words[cond.signal]));
    };
    std::vector<uint32_t> out = unpassed();
    for (int i = 0; i < 100 && std::any_of(out.begin(), out.end(), satisfied); ++i) {
      b_.pause(100'000);
      out = unpassed();
    }
    return out;
  }
  // What the watchdog writes to release stuck wait `id`: the value it needs or, when the word
  // already satisfies it, a new value that does too (a write is what wakes a wait that stopped
  // polling).
  uint64_t release_value(uint32_t id) const {
    WaitCond cond = wait_cond(t_, {false, id});
    uint64_t w = load(&m_.words[cond.signal]);
    int width = cond.narrow() ? 32 : 64;
    if (!cond.met_by(w)) return written_word(w, cond.threshold, width);
    return (w & cond.mask) < cond.mask ? written_word(w, (w & cond.mask) + 1, width) : w;
  }
  // After a failure: the work already enqueued may wait for words that nothing will write now.
  // Releases every stuck wait until the devices finish (bounded), so that the back end can take
  // them apart; what runs now is no part of any result.
  void settle() {
    for (int round = 0; round < 200 && !b_.idle(); ++round) {
      for (uint32_t id : stuck_waits()) store(&m_.words[wait_cond(t_, {false, id}).signal], release_value(id));
      b_.pause(1'000'000);
    }
  }
  // The run's hangs: the device waits `stuck` when the watchdog first acts (host statements before
  // `host_end` have run).
  void record_stuck(const std::vector<uint32_t>& stuck, uint32_t host_end) {
    for (uint32_t id : stuck) {
      hung_cmd_.insert(id);
      out_.run.hung.push_back({{false, id}, overwritten(wait_cond(t_, {false, id}), host_end)});
    }
  }

  // The watchdog writes `value` into `word`. What ran after the first release is no execution
  // of the program (the program never wrote that value): the run ends there, as a simulated run
  // ends when nothing can move, and the words' values then are its final values.
  void release(uint32_t word, uint64_t value) {
    if (released_at_ == kNever) {
      for (uint32_t w = 0; w < plan_.layout.words; ++w) out_.run.final_value.push_back(load(&m_.words[w]));
      released_at_ = b_.now();
      // Which probes had finished: what ran before the release, whatever the clocks say (a GPU's
      // logged times are the host's clock only as well as the calibration measured it).
      ended_before_release_.resize(plan_.layout.slots);
      for (uint32_t s = 0; s < plan_.layout.slots; ++s) ended_before_release_[s] = load(&m_.times[2 * s + 1]) != kNever;
    }
    store(&m_.words[word], value);
  }

  // Whether the initial value, or a write that ran before the hang was found, meets `cond`: then
  // the wait missed a value that was overwritten before it saw it (a polling wait can miss a
  // value that lives between two polls), which semantics.md counts as a candidate
  // (Hang::missed). Host statements before `host_end` have run.
  bool overwritten(const WaitCond& cond, uint32_t host_end) const {
    if (cond.met_by(plan_.word_init[cond.signal])) return true;
    for (uint32_t id = 0; id < t_.cmds.size(); ++id) {
      const TraceCmd& c = t_.cmds[id];
      if (c.op == CmdOp::Signal && c.signal == cond.signal && cond.met_by(uint64_t(c.value)) && passed(id)) return true;
    }
    for (uint32_t h = 0; h < host_end; ++h)
      if (t_.host[h].op == HostOp::Signal && t_.host[h].signal == cond.signal && cond.met_by(uint64_t(t_.host[h].value)))
        return true;
    return false;
  }

  // Whether command `id` got past its place in its stream: its probe, or the mark after it,
  // finished (a probe logs its times last).
  bool passed(uint32_t id) const { return load(&m_.times[2 * plan_.cmd[id].end + 1]) != kNever; }

  // Waits for the devices to finish. Past the timeout, the earliest-submitted device wait still
  // pending is released (one per round: the waits behind it may only be waiting for it), and the
  // devices get a shorter grace period to move before the next round.
  void drain() {
    uint64_t t0 = b_.now(), limit = o_.timeout_ns;
    int idle_rounds = 0;
    while (!b_.idle()) {
      if (std::string e = b_.failed(); !e.empty()) return void(out_.error = e);
      if (b_.now() - t0 <= limit) {
        b_.pause(o_.poll_ns);
        continue;
      }
      std::vector<uint32_t> stuck = stuck_waits();
      if (released_at_ == kNever) record_stuck(stuck, uint32_t(t_.host.size()));
      bool released = !stuck.empty();
      if (released) {
        WaitCond cond = wait_cond(t_, {false, stuck[0]});
        uint64_t value = release_value(stuck[0]);
        out_.notes.push_back("the wait at line " + std::to_string(t_.cmds[stuck[0]].loc.line) + " hung" +
                             (cond.met_by(load(&m_.words[cond.signal])) ? " although its word satisfied it" : "") +
                             "; the watchdog wrote " + t_.program->signals[cond.signal].name + " = " + std::to_string(value & cond.mask));
        release(cond.signal, value);
      }
      if (!released && ++idle_rounds > 2) return void(out_.error = std::string(b_.name()) + ": the devices did not finish");
      t0 = b_.now();
      limit = std::min<uint64_t>(o_.timeout_ns, kGrace);
    }
  }

  void observe() {
    ObservedRun& r = out_.run;
    size_t nc = t_.cmds.size(), nh = t_.host.size();
    r.cmd_start.assign(nc, kNever), r.cmd_end.assign(nc, kNever);
    r.untimed.assign(nc, 0);
    r.fired_by.assign(nc, kNone);
    for (uint32_t id = 0; id < nc; ++id) {
      const CmdSlots& s = plan_.cmd[id];
      r.cmd_start[id] = load(&m_.times[2 * s.start]);
      r.cmd_end[id] = load(&m_.times[2 * s.end + 1]);
      bool after_release = released_at_ != kNever && !ended_before_release_[s.end];
      if (r.cmd_start[id] == kNever || r.cmd_end[id] == kNever || after_release || hung_cmd_.count(id))
        r.cmd_start[id] = r.cmd_end[id] = kNever;
      r.untimed[id] = !s.timed;
    }
    r.cmd_t0 = r.cmd_start, r.cmd_t1 = r.cmd_end;
    r.host_timed = b_.host_clock_shared();
    r.device_skew = b_.device_skew_ns();
    r.host_order.assign(nh, kNever);
    for (uint32_t h = 0; h < nh; ++h)
      if (uint64_t at = load(&m_.times[2 * plan_.host_slot[h]]); at < released_at_) r.host_order[h] = at;
    r.host_time = r.host_order;
    if (released_at_ == kNever)
      for (uint32_t w = 0; w < plan_.layout.words; ++w) r.final_value.push_back(load(&m_.words[w]));
    seen();
    overlaps();
  }

  void seen() {
    ObservedRun& r = out_.run;
    const std::vector<EventRef>& owner = owner_;
    r.read_digest.assign(t_.accesses.size(), 0);
    for (uint32_t a = 0; a < t_.accesses.size(); ++a) {
      const ReadSlots& rs = plan_.reads[a];
      if (t_.accesses[a].write || !r.ran(owner[a])) continue;
      for (int end = 0; end < 2; ++end) {
        uint32_t at = end ? rs.at_end : rs.at_start;
        if (at == kNone) continue;
        for (uint32_t c = rs.cell_lo; c < rs.cell_hi;) {  // runs of cells holding one version
          uint32_t v = load(&m_.seen[at + c - rs.cell_lo]), e = c + 1;
          while (e < rs.cell_hi && load(&m_.seen[at + e - rs.cell_lo]) == v && plan_.cell_lo[e] == plan_.cell_hi[e - 1]) ++e;
          Version ver{v};
          r.seen.push_back({a, plan_.cell_lo[c], plan_.cell_hi[e - 1], ver, bool(end)});
          r.read_digest[a] = mix(mix(mix(r.read_digest[a] + 1, plan_.cell_lo[c]), plan_.cell_hi[e - 1]), uint64_t(v) << 1 | end);
          c = e;
        }
      }
    }
  }

  // Conflicting accesses whose logged intervals intersect (host accesses only when the host's
  // clock is the devices'): per buffer, a sweep in start order.
  void overlaps() {
    ObservedRun& r = out_.run;
    const std::vector<EventRef>& owner = owner_;
    std::vector<std::vector<uint32_t>> by_buffer(t_.program->buffers.size());
    for (uint32_t a = 0; a < t_.accesses.size(); ++a) {
      EventRef e = owner[a];
      if (t_.accesses[a].lo < t_.accesses[a].hi && r.ran(e) && r.timed(e)) by_buffer[t_.accesses[a].buffer].push_back(a);
    }
    for (auto& v : by_buffer) {
      std::sort(v.begin(), v.end(), [&](uint32_t x, uint32_t y) { return r.start(owner[x]) < r.start(owner[y]); });
      std::vector<uint32_t> active;
      for (uint32_t a : v) {
        uint64_t s = r.start(owner[a]);
        std::erase_if(active, [&](uint32_t x) { return r.end(owner[x]) <= s; });
        for (uint32_t x : active) {
          const Access &p = t_.accesses[x], &q = t_.accesses[a];
          if (owner[x] == owner[a] || !(p.write || q.write) || p.hi <= q.lo || q.hi <= p.lo) continue;
          uint64_t skew = device_of(owner[x]) == device_of(owner[a]) ? 0 : r.device_skew;
          if (s + skew < r.end(owner[x]) && r.start(owner[x]) + skew < r.end(owner[a])) r.overlaps.push_back({x, a});
        }
        active.push_back(a);
      }
    }
  }

  // A command's device (host statements: none), for the skew between devices' clocks.
  uint32_t device_of(EventRef e) const { return e.host ? kNone : t_.program->queues[t_.cmds[e.id].queue].device; }

  const Trace& t_;
  const Plan& plan_;
  Backend& b_;
  ReplayOptions o_;
  Memory m_;
  std::vector<EventRef> owner_;  // per access: its command or host statement
  ReplayRun out_;
  std::set<uint32_t> hung_cmd_;
  uint64_t released_at_ = kNever;  // when the watchdog first wrote a word
  std::vector<char> ended_before_release_;  // per slot: whether its probe had finished then
};

}  // namespace

ReplayRun replay(const Trace& t, const Plan& plan, Backend& b, uint64_t seed, const ReplayOptions& o) {
  return Replayer(t, plan, b, o).run(seed);
}

}  // namespace qvet
