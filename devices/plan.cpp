#include "devices/plan.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "core/expr.h"
#include "core/input_error.h"
#include "devices/observed.h"
#include "devices/rng.h"
#include "model/engine.h"
#include "model/profile.h"
#include "model/queue_rules.h"

namespace qvet {

namespace {

// Per signal, whether the API's `>=` (a signed comparison of the difference, at the wait's
// width) gives the unsigned answer for every value the word can hold and every threshold it is
// waited on with. One pass over the trace collects, per signal, the values written and the waits.
std::vector<uint8_t> api_wait_agrees(const Trace& t, const std::vector<uint64_t>& init) {
  const Program& p = *t.program;
  struct Word {
    std::set<uint64_t> whole, lows;  // values the word can hold; low halves 32-bit writes put there
    std::vector<std::pair<uint64_t, int>> waits;  // (threshold, width)
  };
  std::vector<Word> words(p.signals.size());
  for (uint32_t s = 0; s < words.size(); ++s) words[s].whole.insert(init[s]);
  for (const TraceCmd& c : t.cmds) {
    if (c.op == CmdOp::Wait) {
      WaitCond cond = wait_cond(t, {false, uint32_t(&c - t.cmds.data())});
      words[c.signal].waits.push_back({cond.threshold, cond.narrow() ? 32 : 64});
    } else if (c.op == CmdOp::Signal) {
      int w = signal_width(p, c.queue);
      (w == 64 ? words[c.signal].whole : words[c.signal].lows).insert(uint64_t(c.value) & width_mask(w));
    }
  }
  for (const HostEvent& h : t.host)
    if (h.op == HostOp::Signal) words[h.signal].whole.insert(uint64_t(h.value));
  std::vector<uint8_t> agrees(words.size(), 1);
  for (uint32_t s = 0; s < words.size(); ++s) {
    const Word& wd = words[s];
    if (wd.waits.empty()) continue;
    std::set<uint64_t> highs;
    for (uint64_t v : wd.whole) highs.insert(v & kHighHalf);
    std::vector<uint64_t> values(wd.whole.begin(), wd.whole.end());
    for (uint64_t h : highs)
      for (uint64_t l : wd.lows) values.push_back(h | l);
    if (wd.waits.size() * values.size() > 4'000'000) {  // too many to check: spin, which is always right
      agrees[s] = 0;
      continue;
    }
    for (auto [v, w] : wd.waits)
      for (uint64_t x : values) {
        bool unsigned_ge = w == 64 ? x >= v : (x & kLowHalf) >= v;
        bool signed_ge = w == 64 ? int64_t(x - v) >= 0 : int32_t(uint32_t(x) - uint32_t(v)) >= 0;
        if (unsigned_ge != signed_ge) agrees[s] = 0;
      }
  }
  return agrees;
}

class Planner {
 public:
  Planner(const Trace& t, const PlanOptions& o) : t_(t), p_(*t.program), o_(o) {}

  Plan run() {
    cut_cells();
    for (const Signal& g : p_.signals) plan_.word_init.push_back(uint64_t(evaluate(g.init, t_.binding)));
    for (uint8_t agrees : api_wait_agrees(t_, plan_.word_init)) plan_.spin.push_back(!agrees);
    plan_.layout.words = uint32_t(p_.signals.size());
    plan_.layout.devices = uint32_t(p_.devices.size());
    for (uint32_t q = 0; q < p_.queues.size(); ++q) {
      QueueState st;
      st.order = QueueOrder(queue_mode(p_, q));
      st.base = uint32_t(plan_.layout.stream_device.size());
      bool pooled = st.order.mode() != Mode::Serial;
      uint32_t n = pooled ? o_.lanes + 2 : 1;
      for (uint32_t i = 0; i < n; ++i) plan_.layout.stream_device.push_back(p_.queues[q].device);
      st.lane_front.assign(pooled ? o_.lanes : 0, kNone);
      st.lane_dirty.assign(st.lane_front.size(), false);
      plan_.queue_streams.push_back(st.base);
      queues_.push_back(std::move(st));
    }
    plan_.cmd.resize(t_.cmds.size());
    plan_.host_slot.resize(t_.host.size());
    plan_.reads.resize(t_.accesses.size());
    for (uint32_t h = 0; h < t_.host.size(); ++h) host(h);
    Layout& l = plan_.layout;
    size_t total = size_t(l.cells) + l.seen + 2 * size_t(l.slots) + l.desc.size() + plan_.calls.size();
    if (total > kMaxReplayEntries)
      throw InputError{{}, "the program is too large to replay (" + std::to_string(total) + " log entries; at most " +
                               std::to_string(kMaxReplayEntries) + ")", true};
    return std::move(plan_);
  }

 private:
  struct QueueState {
    QueueOrder order{Mode::Serial};
    uint32_t base;                    // its first stream
    uint32_t next_lane = 0;
    uint32_t front = kNone;           // the event after the last command that blocked the front end
    std::vector<uint32_t> lane_front; // per lane: the front event it already waited for
    std::vector<bool> lane_dirty;     // per lane: work not yet joined into the control stream
    bool release_dirty = false;       // release-stream work not yet joined into the control stream
    uint32_t control_front = kNone;   // the front event the control stream has reached
    uint32_t chain = kNone;           // chained: the lane of the exec the next exec chains to
    bool pooled() const { return !lane_front.empty(); }
    uint32_t control() const { return base + uint32_t(lane_front.size()); }
    uint32_t release() const { return control() + 1; }
  };

  // Each base buffer is cut at every bound of every access: one cell per piece.
  void cut_cells() {
    std::vector<std::vector<uint64_t>> bounds(p_.buffers.size());
    for (const Access& a : t_.accesses)
      if (a.lo < a.hi) bounds[a.buffer].push_back(a.lo), bounds[a.buffer].push_back(a.hi);
    cell_base_.assign(p_.buffers.size(), 0);
    for (uint32_t b = 0; b < bounds.size(); ++b) {
      auto& v = bounds[b];
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
      cell_base_[b] = uint32_t(plan_.cell_buffer.size());
      for (size_t i = 0; i + 1 < v.size(); ++i) {
        plan_.cell_buffer.push_back(b);
        plan_.cell_lo.push_back(v[i]);
        plan_.cell_hi.push_back(v[i + 1]);
        if (plan_.cell_buffer.size() > kMaxReplayEntries)
          throw InputError{{}, "the program is too large to replay (more than " + std::to_string(kMaxReplayEntries) +
                                   " memory cells)", true};
      }
    }
    bounds_ = std::move(bounds);
    plan_.layout.cells = uint32_t(plan_.cell_buffer.size());
  }
  std::pair<uint32_t, uint32_t> cells_of(uint32_t access) const {
    const Access& a = t_.accesses[access];
    if (a.lo >= a.hi) return {0, 0};
    const auto& v = bounds_[a.buffer];
    auto at = [&](uint64_t x) { return cell_base_[a.buffer] + uint32_t(std::lower_bound(v.begin(), v.end(), x) - v.begin()); };
    return {at(a.lo), at(a.hi)};
  }

  uint32_t slot() { return plan_.layout.slots++; }
  uint32_t event() { return plan_.layout.events++; }
  void emit(Call c) { plan_.calls.push_back(c); }
  void on(uint32_t stream, Call::Op op, uint32_t a = 0, uint32_t b = 0, uint64_t value = 0, uint8_t width = 64) {
    emit({op, width, stream, a, b, value});
  }

  // A probe whose descriptor lists `writes`, and `reads` recorded at its start and/or end.
  uint32_t probe(uint32_t stamp, uint64_t duration, const std::vector<uint32_t>& writes,
                 const std::vector<uint32_t>& reads_at_start, const std::vector<uint32_t>& reads_at_end) {
    auto& d = plan_.layout.desc;
    Probe pr{slot(), stamp, duration, uint32_t(d.size())};
    d.push_back(uint32_t(writes.size()));
    for (uint32_t a : writes) {
      auto [lo, hi] = cells_of(a);
      d.push_back(lo), d.push_back(hi);
    }
    for (int end = 0; end < 2; ++end) {
      const auto& reads = end ? reads_at_end : reads_at_start;
      d.push_back(uint32_t(reads.size()));
      for (uint32_t a : reads) {
        auto [lo, hi] = cells_of(a);
        ReadSlots& r = plan_.reads[a];
        r.cell_lo = lo, r.cell_hi = hi;
        (end ? r.at_end : r.at_start) = plan_.layout.seen;
        d.push_back(lo), d.push_back(hi), d.push_back(plan_.layout.seen);
        plan_.layout.seen += hi - lo;
      }
    }
    plan_.probes.push_back(pr);
    return uint32_t(plan_.probes.size() - 1);
  }
  uint32_t mark() { return probe(Version::kInitial, 0, {}, {}, {}); }

  void host(uint32_t h) {
    const HostEvent& e = t_.host[h];
    uint32_t stamp = Version::of({true, h}).code;
    std::vector<uint32_t> reads, writes;
    for (uint32_t a = e.acc_begin; a < e.acc_end; ++a) (t_.accesses[a].write ? writes : reads).push_back(a);
    switch (e.op) {
      case HostOp::Wait: emit({Call::Op::HostWait, 64, kNone, e.signal, h, uint64_t(e.value)}); break;
      case HostOp::Signal: emit({Call::Op::HostWrite, 64, kNone, e.signal, h, uint64_t(e.value)}); break;
      case HostOp::Read: emit({Call::Op::HostSee, 64, kNone, probe(stamp, 0, {}, reads, {}), h}); break;
      case HostOp::Write: emit({Call::Op::HostStamp, 64, kNone, probe(stamp, 0, writes, {}, {}), h}); break;
      default: emit({Call::Op::HostMark, 64, kNone, 0, h}); break;
    }
    plan_.host_slot[h] = slot();
    if (e.op == HostOp::Submit)
      for (uint32_t c = e.cmd_begin; c < e.cmd_end; ++c) command(c);
  }

  // The stream an exec or copy runs on: an overlap queue's next lane, after its front.
  uint32_t work_stream(QueueState& q) {
    if (!q.pooled()) return q.base;
    uint32_t lane = q.next_lane++ % uint32_t(q.lane_front.size());
    if (q.front != kNone && q.lane_front[lane] != q.front) {
      on(q.base + lane, Call::Op::WaitEvent, q.front);
      q.lane_front[lane] = q.front;
    }
    q.lane_dirty[lane] = true;
    return q.base + lane;
  }
  // `to` waits for everything submitted so far on `from`.
  void join(uint32_t from, uint32_t to) {
    uint32_t ev = event();
    on(from, Call::Op::Record, ev);
    on(to, Call::Op::WaitEvent, ev);
  }
  // The stream a front-end-blocking command runs on: the control stream (joined with every lane
  // and the release stream first when the command waits for earlier commands).
  uint32_t control_stream(QueueState& q, bool after_all) {
    q.chain = kNone;  // whatever holds the front end breaks a chain
    if (!q.pooled()) return q.base;
    if (q.front != kNone && q.control_front != q.front) on(q.control(), Call::Op::WaitEvent, q.front);
    q.control_front = q.front;
    if (after_all) {
      for (uint32_t l = 0; l < q.lane_dirty.size(); ++l)
        if (q.lane_dirty[l]) join(q.base + l, q.control()), q.lane_dirty[l] = false;
      if (q.release_dirty) join(q.release(), q.control()), q.release_dirty = false;
    }
    return q.control();
  }
  void new_front(QueueState& q) {
    if (!q.pooled()) return;
    q.front = q.control_front = event();
    on(q.control(), Call::Op::Record, q.front);
  }
  // The stream a signal or timestamp runs on: after every earlier command, without holding the front end.
  uint32_t release_stream(QueueState& q) {
    if (!q.pooled()) return q.base;
    for (uint32_t l = 0; l < q.lane_dirty.size(); ++l)
      if (q.lane_dirty[l]) join(q.base + l, q.release());
    join(q.control(), q.release());
    q.release_dirty = true;
    return q.release();
  }

  // The stream a command runs on, from the queue-order rule (model/queue_rules.h): a chained
  // release on its exec's lane, after it; what blocks the front end on the control stream (joined
  // with everything first when it also waits for every earlier command: a barrier, a WFI
  // release); an overlap signal or timestamp on the release stream; the rest on a lane (a chained
  // exec on the lane of the exec it chains to). A serial queue's one stream takes everything.
  uint32_t stream_for(QueueState& q, const QueueStep& rule) {
    if (rule.release && q.chain != kNone) return q.chain;
    if (rule.blocks) return control_stream(q, rule.after_all);
    if (rule.after_all) return release_stream(q);
    if (!rule.after_chain || q.chain == kNone) return work_stream(q);
    // It starts when the exec before it ends; the front end reaches what follows only after that:
    // that point becomes the front every other stream waits for.
    q.front = event();
    on(q.chain, Call::Op::Record, q.front);
    q.lane_front[q.chain - q.base] = q.front;
    return q.chain;
  }

  void command(uint32_t id) {
    const TraceCmd& c = t_.cmds[id];
    QueueState& q = queues_[c.queue];
    QueueStep rule = q.order.next(c.op, c.submit);
    uint32_t s = stream_for(q, rule);
    uint32_t stamp = Version::of({false, id}).code;
    CmdSlots& cs = plan_.cmd[id];
    std::vector<uint32_t> reads, writes;
    for (uint32_t a = c.acc_begin; a < c.acc_end; ++a) (t_.accesses[a].write ? writes : reads).push_back(a);
    auto run_probe = [&](uint32_t pr) {
      on(s, Call::Op::Probe, pr);
      return plan_.probes[pr].slot;
    };
    cs.timed = true;
    switch (c.op) {
      case CmdOp::Exec: {
        cs.start = cs.end = run_probe(probe(stamp, exec_duration(o_, id), writes, reads, reads));
        break;
      }
      case CmdOp::Copy: {
        cs.start = run_probe(probe(stamp, 0, {}, reads, {}));
        auto [lo, hi] = cells_of(reads.at(0));
        if (hi > lo) on(s, Call::Op::CopyCells, lo, hi - lo);
        plan_.layout.scratch = std::max(plan_.layout.scratch, hi - lo);
        cs.end = run_probe(probe(stamp, 0, writes, {}, reads));
        break;
      }
      case CmdOp::Wait: {
        WaitCond cond = wait_cond(t_, {false, id});
        uint8_t w = cond.narrow() ? 32 : 64;
        if (plan_.spin[c.signal]) {
          uint32_t pr = probe(stamp, 0, {}, {}, {});
          plan_.probes[pr].word = c.signal, plan_.probes[pr].value = cond.threshold, plan_.probes[pr].width = w;
          cs.start = cs.end = run_probe(pr);
        } else {
          on(s, Call::Op::WaitValue, c.signal, 0, cond.threshold, w);
          cs.start = cs.end = run_probe(mark());
          cs.timed = false;
        }
        break;
      }
      case CmdOp::Signal: {
        int w = signal_width(p_, c.queue);
        on(s, Call::Op::WriteValue, c.signal, 0, uint64_t(c.value) & width_mask(w), uint8_t(w));
        cs.start = cs.end = run_probe(mark());
        cs.timed = false;
        break;
      }
      case CmdOp::Timestamp:
      case CmdOp::Barrier:
      case CmdOp::MemoryBarrier: cs.start = cs.end = run_probe(mark()); break;
    }
    if (rule.blocks) new_front(q);
    if (rule.starts_chain) q.chain = s;  // QueueOrder says when a later exec or release uses it
  }

  const Trace& t_;
  const Program& p_;
  PlanOptions o_;
  Plan plan_;
  std::vector<QueueState> queues_;
  std::vector<std::vector<uint64_t>> bounds_;
  std::vector<uint32_t> cell_base_;
};

}  // namespace

uint64_t exec_duration(const PlanOptions& o, uint32_t cmd) { return o.min_ns + mix(o.seed, cmd) % (o.max_ns - o.min_ns + 1); }

void redraw_durations(Plan& p, const Trace& t, const PlanOptions& o) {
  for (Probe& pr : p.probes) {
    Version v{pr.stamp};
    if (!v.initial() && !v.event().host && t.cmds[v.event().id].op == CmdOp::Exec) pr.duration = exec_duration(o, v.event().id);
  }
}

Plan make_plan(const Trace& t, const PlanOptions& o) {
  if (o.lanes == 0 || o.max_ns < o.min_ns) throw InputError{{}, "replay plan: bad options"};
  return Planner(t, o).run();
}

std::string describe(const Plan& p, const Trace& t) {
  const Program& prog = *t.program;
  std::ostringstream os;
  const Layout& l = p.layout;
  os << "layout: " << l.stream_device.size() << " stream(s), " << l.words << " word(s), " << l.cells << " cell(s), "
     << l.scratch << " scratch, " << l.slots << " slot(s), " << l.seen << " seen, " << l.events << " event(s)\n";
  for (uint32_t q = 0; q < p.queue_streams.size(); ++q) {
    uint32_t end = q + 1 < p.queue_streams.size() ? p.queue_streams[q + 1] : uint32_t(l.stream_device.size());
    os << "queue " << prog.queues[q].name << " (" << mode_name(queue_mode(prog, q)) << ", "
       << prog.devices[prog.queues[q].device].name << "): streams " << p.queue_streams[q] << ".." << end - 1 << "\n";
  }
  for (uint32_t s = 0; s < p.spin.size(); ++s)
    if (p.spin[s]) os << "signal " << prog.signals[s].name << ": waits spin (its values span the API's signed window)\n";
  auto ranges = [&](uint32_t& i, bool seen) {
    std::string r;
    uint32_t n = l.desc[i++];
    for (uint32_t k = 0; k < n; ++k) {
      uint32_t lo = l.desc[i++], hi = l.desc[i++];
      if (seen) ++i;
      if (lo == hi) {
        r += " -";
        continue;
      }
      r += " " + prog.buffers[p.cell_buffer[lo]].name + "[" + std::to_string(p.cell_lo[lo]) + ":" +
           std::to_string(p.cell_hi[hi - 1]) + "]";
    }
    return r;
  };
  auto probe_text = [&](uint32_t id) {
    const Probe& pr = p.probes[id];
    std::string s = "probe slot " + std::to_string(pr.slot);
    if (pr.duration) s += " " + std::to_string(pr.duration) + "ns";
    if (pr.word != kNone)
      s += " spin " + prog.signals[pr.word].name + " >= " + std::to_string(pr.value) + " (" + std::to_string(pr.width) + ")";
    uint32_t i = pr.desc;
    std::string w = ranges(i, false), rs = ranges(i, true), re = ranges(i, true);
    if (!w.empty()) s += " writes" + w;
    if (!rs.empty()) s += " sees-at-start" + rs;
    if (!re.empty()) s += " sees-at-end" + re;
    return s;
  };
  for (const Call& c : p.calls) {
    std::string where = c.stream == kNone ? "host" : "s" + std::to_string(c.stream);
    os << where << ": ";
    switch (c.op) {
      case Call::Op::Probe: os << probe_text(c.a); break;
      case Call::Op::CopyCells: os << "copy cells " << c.a << "+" << c.b << " to scratch"; break;
      case Call::Op::WaitValue: os << "wait " << prog.signals[c.a].name << " >= " << c.value << " (" << int(c.width) << ")"; break;
      case Call::Op::WriteValue: os << "write " << prog.signals[c.a].name << " = " << c.value << " (" << int(c.width) << ")"; break;
      case Call::Op::Record: os << "record e" << c.a; break;
      case Call::Op::WaitEvent: os << "wait-event e" << c.a; break;
      case Call::Op::HostWait: os << "line " << t.host[c.b].loc.line << " wait " << prog.signals[c.a].name << " >= " << c.value; break;
      case Call::Op::HostWrite: os << "line " << t.host[c.b].loc.line << " write " << prog.signals[c.a].name << " = " << c.value; break;
      case Call::Op::HostStamp: os << "line " << t.host[c.b].loc.line << " stamp " << probe_text(c.a); break;
      case Call::Op::HostSee: os << "line " << t.host[c.b].loc.line << " see " << probe_text(c.a); break;
      case Call::Op::HostMark: os << "line " << t.host[c.b].loc.line << " mark"; break;
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace qvet
