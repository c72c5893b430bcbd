#include "devices/sim/backend.h"

#include <deque>
#include <queue>

#include "devices/rng.h"
#include "model/profile.h"

namespace qvet {

namespace {

struct Op {
  enum Kind : uint8_t { Probe, Copy, Wait, Write, Record, WaitEvent } kind;
  qvet::Probe probe{};
  uint32_t a = 0, b = 0;  // Copy: first, count; Wait/Write: word; Record/WaitEvent: event
  uint64_t value = 0;
  int width = 64;
};

// Where the head call of a stream is.
enum class Phase : uint8_t { Idle, Starting, Blocked, Ending };

struct Stream {
  std::deque<Op> ops;
  Phase phase = Phase::Idle;
  uint64_t t0 = 0;  // the running probe's start
};

constexpr uint64_t kMaxLatency = 400;      // ns a call waits before it starts, drawn per call
constexpr uint64_t kQuietPoll = 1'000'000;  // ns a host poll lasts when the devices have nothing scheduled

}  // namespace

struct SimBackend::Impl {
  Layout layout;
  std::vector<uint64_t> words, times;
  std::vector<uint32_t> cells, seen, scratch;
  std::vector<Stream> streams;
  std::vector<uint8_t> event_done;
  uint64_t clock = 0, seq = 0;
  bool changed = false;  // a word or an event changed since the streams were last looked at
  Rng rng{1};
  std::string error;
  // (time, seq, stream): the stream's head moves to its next phase then.
  using Action = std::tuple<uint64_t, uint64_t, uint32_t>;
  std::priority_queue<Action, std::vector<Action>, std::greater<>> actions;

  void at(uint64_t time, uint32_t s) { actions.push({time, seq++, s}); }

  void enqueue(uint32_t s, Op op) {
    if (s >= streams.size()) return void(error = "sim: no stream " + std::to_string(s));
    streams[s].ops.push_back(op);
    if (streams[s].ops.size() == 1) {
      streams[s].phase = Phase::Starting;
      at(clock + rng.below(kMaxLatency), s);
    }
    run_until(clock + rng.below(kMaxLatency / 4));  // the host takes time to make each call
  }

  bool can_end(const Op& op) const {
    switch (op.kind) {
      case Op::Wait: return WaitCond{op.a, op.value, width_mask(op.width)}.met_by(words[op.a]);
      case Op::WaitEvent: return event_done[op.a] != 0;
      case Op::Probe:
        return op.probe.word == kNone ||
               WaitCond{op.probe.word, op.probe.value, width_mask(op.probe.width)}.met_by(words[op.probe.word]);
      default: return true;
    }
  }

  // The probe kernel's work at its start and at its end (devices/probe.h is the GPU's).
  void probe_reads(const qvet::Probe& p, bool at_end) {
    const auto& d = layout.desc;
    uint32_t i = p.desc;
    i += 1 + 2 * d[i];
    if (at_end) i += 1 + 3 * d[i];
    uint32_t n = d[i++];
    for (uint32_t k = 0; k < n; ++k, i += 3)
      for (uint32_t c = d[i]; c < d[i + 1]; ++c) seen[d[i + 2] + c - d[i]] = cells[c];
  }
  void probe_writes(const qvet::Probe& p) {
    const auto& d = layout.desc;
    uint32_t i = p.desc, n = d[i++];
    for (uint32_t k = 0; k < n; ++k, i += 2)
      for (uint32_t c = d[i]; c < d[i + 1]; ++c) cells[c] = p.stamp;
  }

  void step(uint32_t s) {
    Stream& st = streams[s];
    Op& op = st.ops.front();
    if (st.phase == Phase::Starting) {
      if (op.kind == Op::Probe) {
        st.t0 = clock;  // logged with the end time, last, as the kernel does
        probe_reads(op.probe, false);
      }
      st.phase = Phase::Blocked;
      unblock(s);
      return;
    }
    // Ending.
    switch (op.kind) {
      case Op::Probe:
        probe_writes(op.probe);
        probe_reads(op.probe, true);
        times[2 * op.probe.slot] = st.t0;
        times[2 * op.probe.slot + 1] = clock;
        break;
      case Op::Copy:
        for (uint32_t k = 0; k < op.b; ++k) scratch[k] = cells[op.a + k];
        break;
      case Op::Write:
        words[op.a] = written_word(words[op.a], op.value, op.width);
        changed = true;
        break;
      case Op::Record:
        event_done[op.a] = 1;
        changed = true;
        break;
      default: break;
    }
    st.ops.pop_front();
    st.phase = Phase::Idle;
    if (!st.ops.empty()) st.phase = Phase::Starting, at(clock + rng.below(kMaxLatency), s);
  }

  // A started call whose condition holds ends after its duration (probes) or a drawn latency.
  void unblock(uint32_t s) {
    Stream& st = streams[s];
    if (st.phase != Phase::Blocked || !can_end(st.ops.front())) return;
    const Op& op = st.ops.front();
    uint64_t d = rng.below(kMaxLatency / 2);
    if (op.kind == Op::Probe) d += op.probe.duration + rng.below(op.probe.duration / 2 + 1);
    if (op.kind == Op::Copy) d += 200 + 4 * uint64_t(op.b);
    st.phase = Phase::Ending;
    at(clock + d, s);
  }

  // Blocked calls can end only after a word is written or an event completes (by a device here,
  // or by the host between calls): only then are the streams looked at again.
  void unblock_all() {
    for (uint32_t s = 0; s < streams.size(); ++s) unblock(s);
    changed = false;
  }

  void run_until(uint64_t t) {
    unblock_all();  // the host may have written words
    while (!actions.empty() && std::get<0>(actions.top()) <= t) {
      auto [time, sq, s] = actions.top();
      actions.pop();
      clock = std::max(clock, time);
      step(s);
      if (changed) unblock_all();
    }
    clock = std::max(clock, t);
  }
};

SimBackend::SimBackend() : impl_(std::make_unique<Impl>()) {}
SimBackend::~SimBackend() = default;

bool SimBackend::open(const Layout& l, const std::vector<uint32_t>&, std::string&) {
  Impl& m = *impl_;
  m.layout = l;
  m.words.assign(l.words, 0);
  m.times.assign(2 * size_t(l.slots), 0);
  m.cells.assign(l.cells, 0);
  m.seen.assign(l.seen, 0);
  m.scratch.assign(l.scratch, 0);
  m.streams.assign(l.stream_device.size(), {});
  m.event_done.assign(l.events, 0);
  return true;
}

Memory SimBackend::memory() {
  Impl& m = *impl_;
  return {m.words.data(), m.cells.data(), m.times.data(), m.seen.data()};
}

void SimBackend::begin_run(uint64_t seed) {
  Impl& m = *impl_;
  m.rng = Rng{mix(seed, 0x51b)};
  m.clock = 0;
  m.actions = {};
  for (Stream& s : m.streams) s = {};
  std::fill(m.event_done.begin(), m.event_done.end(), 0);
}

void SimBackend::probe(uint32_t s, const Probe& p) { impl_->enqueue(s, {Op::Probe, p}); }
void SimBackend::copy_cells(uint32_t s, uint32_t first, uint32_t count) {
  impl_->enqueue(s, {Op::Copy, {}, first, count});
}
void SimBackend::wait_value(uint32_t s, uint32_t word, uint64_t value, int width) {
  impl_->enqueue(s, {Op::Wait, {}, word, 0, value, width});
}
void SimBackend::write_value(uint32_t s, uint32_t word, uint64_t value, int width) {
  impl_->enqueue(s, {Op::Write, {}, word, 0, value, width});
}
void SimBackend::record(uint32_t s, uint32_t event) { impl_->enqueue(s, {Op::Record, {}, event}); }
void SimBackend::wait_event(uint32_t s, uint32_t event) { impl_->enqueue(s, {Op::WaitEvent, {}, event}); }
uint64_t SimBackend::now() { return impl_->clock; }
void SimBackend::pause(uint64_t ns) {
  Impl& m = *impl_;
  m.unblock_all();
  // Nothing scheduled: nothing changes until the host acts, so a poll may sleep longer (a slow
  // host is a schedule like any other), and a watchdog's timeout costs few polls.
  m.run_until(m.clock + (m.actions.empty() ? std::max<uint64_t>(ns, kQuietPoll) : ns));
}
bool SimBackend::idle() {
  for (const Stream& s : impl_->streams)
    if (!s.ops.empty()) return false;
  return true;
}
std::string SimBackend::failed() { return impl_->error; }

}  // namespace qvet
