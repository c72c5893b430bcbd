#include "cli/gen.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <random>
#include <vector>

#include "core/atomic_file.h"
#include "core/syntax/json_io.h"
#include "devices/rng.h"
#include "core/syntax/parser.h"

namespace qvet {

std::string gen_help() {
  return "usage: qvet gen [options] -o FILE\n"
         "\n"
         "  --devices N             devices (default 2)\n"
         "  --queues-per-device N   queues per device; the last one of each device is a copy queue when N >= 2 (default 2)\n"
         "  --commands N            device commands in all (default 1000)\n"
         "  --seed N                random seed (default 1); the same options give the same program\n"
         "  --sync-every N          commands per submitted batch, i.e. a wait every ~N commands (default 10)\n"
         "  --cross-percent P       batches that consume another queue's output (default 50)\n"
         "  --arch nv|amd|strict|mixed  device architectures (default nv)\n"
         "  --bugs N                inject N missing cross-queue waits; their lines are printed on stderr\n"
         "  --format hcq|json       output format (default hcq)\n"
         "  --symbolic              declare `param tv in 0..2` and use it as each queue's first cross-wait threshold\n"
         "  --shape S               eager (default: the pattern above), or a shape that stresses one cost (the other\n"
         "                          options but --commands, --format, -o and, for overlap-copies, --seed are ignored):\n"
         "                            chained-waits  nv: `wait x >= 0; exec; signal s = i` on a chained queue,\n"
         "                                           `wait s >= i; exec` on another\n"
         "                            chained-writers chained-waits with two chained queues taking turns\n"
         "                            chained-known  chained-waits with a host write of s before and after\n"
         "                            chained-alternating chained-known where every other write of s is high\n"
         "                            chained-host-waits chained-waits, one write a batch, and the host waits for each\n"
         "                                           (but for c0's first kernel)\n"
         "                            sliding-reads  execs on two queues read overlapping 4 KiB windows of one buffer\n"
         "                            many-queues    one queue per two commands, each signalling the host\n"
         "                            param-loop     a loop bounded by `param r in 1..63` (checked for every count)\n"
         "                            overlap-copies one overlap queue: execs, copies at any byte offset, barriers,\n"
         "                                           signals and host waits (the subset bench/peers runs through Vulkan)\n"
         "                            racing-pairs   nv: `wait kick >= k; exec` writing one buffer (half of them\n"
         "                                           reading it too), kicked by the host: every exec races with\n"
         "                                           every other (n^2/8 racing pairs, n/2 findings)\n"
         "                            host-refill    nv: the host writes an input and kicks a queue whose exec\n"
         "                                           reads it, never waiting: every write races with every\n"
         "                                           earlier exec (each write the primary of its own finding)\n"
         "                            crossing-races nv: `wait kick >= k; exec` reading one buffer and writing the\n"
         "                                           other, the two in turns, kicked by the host: every exec\n"
         "                                           races with every other, met through several runs\n"
         "                            queue-chain    one queue per three commands, each waiting for the previous\n"
         "                                           queue's signal: every event hears of every earlier queue\n"
         "                            host-chain     the host submits to one queue per three commands and waits\n"
         "                                           for it before the next: the host hears of every queue\n"
         "                            fan-in         one signal `s` written by n/6 queues, each other queue waits\n"
         "                                           for it and reads: every writer is every wait's candidate\n"
         "                            timeline-relay queue i: `wait s >= i; exec; signal s = i + 1` (n/3 queues)\n"
         "                            timeline-turns four queues take turns: batch i waits for s >= i, runs,\n"
         "                                           signals s = i + 1 (n/3 batches): each wait is forced\n"
         "                            handoff        queue i: `wait t >= i; wait s >= 1; exec; signal s = 1 or 2;\n"
         "                                           signal t = i + 1` (n/5 queues): s is no timeline, and each\n"
         "                                           wait on it hangs on t's relay\n"
         "                            handoff-stray  handoff, and one more queue writes s = 2 once, unordered:\n"
         "                                           each wait on s knows every write of s but that one\n"
         "                            handoff-strays handoff with s = 1 only, and 100 more queues each write\n"
         "                                           s = 1 once, unordered: more such writers than the\n"
         "                                           engine's short list of latest writes\n"
         "                            handoff-many-strays\n"
         "                                           handoff-strays with one stray per ten queues (n/50),\n"
         "                                           declared among them: each wait on s knows one latest\n"
         "                                           write of thousands\n"
         "                            handoff-cascade\n"
         "                                           handoff with s = 1 only, each wait on it s >= 2, and\n"
         "                                           one more queue writes s = 2 first: q0 takes it and\n"
         "                                           overwrites it, so q1 deadlocks, and every later queue\n"
         "                            fan-in-relay   fan-in whose readers take turns on t: each wait on s\n"
         "                                           knows every earlier reader's queue, no write of s;\n"
         "                                           writers and readers alternate in queue ids\n"
         "                            initial-forced queue i: `wait s >= 1; signal s = 1` (n/2 queues), s starting\n"
         "                                           at 1: every wait is forced, and its candidates are every\n"
         "                                           other queue's write\n"
         "                            forced-pairs   n/6 queues gathered by one, and n/6 pairs `wait u_i >= 1;\n"
         "                                           signal u_i = 1` / `= 2` around the host's u_i = 1 after it\n"
         "                                           waited for the gathering queue: every pair is forced, and\n"
         "                                           each override knows the n/6 gathered queues\n"
         "                            gather-pending n/7 queues: `signal x = 1; signal s_i = 1; wait go >= 1;\n"
         "                                           signal x = 2`; one more waits for every s_i, then\n"
         "                                           `wait x >= 1; exec` n/7 times, then `signal go = 1`:\n"
         "                                           each wait knows thousands of latest writes of x, and\n"
         "                                           every writer will write a match, later\n"
         "                            gather-alternating\n"
         "                                           gather-pending with x = 2 before go and x = 3 after\n"
         "                                           it, and the gathering waits alternating x >= 2 and\n"
         "                                           x >= 1\n"
         "                            gather-falling gather-pending with x = k + 1 before go and x = k + 5\n"
         "                                           after it (k = n/7), and the gathering waits x >= k,\n"
         "                                           x >= k - 1, ..., x >= 1\n"
         "                            gather-signals gather-pending with eight signals x0..x7 in place of x, each\n"
         "                                           written 1, then 2 after go (k = n/21), and the\n"
         "                                           gathering waits x0 >= 1, x1 >= 1, ..., x7 >= 1, x0 ...\n"
         "                            fan-in-signals fan-in-relay with eight signals y0..y7 in place of s: writer j\n"
         "                                           writes y(j % 8), reader j waits for it\n"
         "                            gather-forced  gather-pending and two more queues `wait f >= 1; signal f = 1`,\n"
         "                                           f starting at 1: both are forced, and a second round\n"
         "                                           runs with them as overrides\n"
         "                            gather-forced-host\n"
         "                                           gather-pending after a forced pair whose override\n"
         "                                           adds the host's write, and a host wait on them:\n"
         "                                           every later submit's clock knows what it added\n"
         "                            gather-forced-wide\n"
         "                                           gather-forced-host, the host first waiting for a\n"
         "                                           queue that gathers n/20 + 100 others: the forced\n"
         "                                           wait's override adds them all\n"
         "                            gather-forced-chain\n"
         "                                           gather-pending after three queues whose waits are\n"
         "                                           forced in turn: the second's override knows the\n"
         "                                           first's write, whose end learns more in the second\n"
         "                                           round; the host waits for the second queue's write\n"
         "                            gather-forced-pairs\n"
         "                                           gather-pending after n/40 forced pairs, each\n"
         "                                           learning a queue that gathers n/40 others, and\n"
         "                                           host waits on every pair\n"
         "  -o FILE                 output file (default: standard output)\n";
}

namespace {

struct QueueGen {
  std::string name, tl, out;
  int device;
  bool copy;
  uint64_t value = 0;  // its timeline's latest value
  uint64_t slots = 0;  // output slots written (slot k is written by batch k)
};

}  // namespace

// The stress shapes: each exercises one cost that the eager pattern leaves small.
static std::string generate_shape(const GenOptions& o) {
  std::string s = "# qvet gen --shape " + o.shape + " --commands " + std::to_string(o.commands) + "\n";
  auto emit = [&](const std::string& line) { s += line, s += '\n'; };
  uint64_t n = std::max<uint64_t>(o.commands, 8);
  auto range = [](const char* buf, uint64_t lo, uint64_t len) {
    return std::string(buf) + "[" + std::to_string(lo) + ":" + std::to_string(lo + len) + "]";
  };
  // One nv device, a buffer of 16 bytes per queue, queues q0.. and signals s0.. .
  auto declare_queues = [&](uint64_t queues) {
    emit("device gpu0 nv");
    emit("buffer a on gpu0 " + std::to_string(16 * queues));
    for (uint64_t q = 0; q < queues; ++q) emit("queue q" + std::to_string(q) + " on gpu0 compute");
    for (uint64_t q = 0; q < queues; ++q) emit("signal s" + std::to_string(q) + " on host = 0");
  };
  // K pairs fa_i, fb_i whose waits on u_i force each other (candidates: the host's u_i = 1, and the
  // partner's u_i = 2 behind the partner's wait), after the host waited for queue g, which
  // gathered P queues `queue`j (each writing `signal`j = 1, declared here if `declare`): what each
  // forced wait learns in the second round is g and all it gathered, from the first round's clocks.
  auto forced_pairs = [&](uint64_t k, uint64_t p, const std::string& queue, const std::string& signal, bool declare) {
    for (uint64_t j = 0; j < p && declare; ++j)
      emit("queue " + queue + std::to_string(j) + " on gpu0 compute"), emit("signal " + signal + std::to_string(j) + " on host = 0");
    emit("queue g on gpu0 compute"), emit("signal gathered on host = 0");
    for (uint64_t i = 0; i < k; ++i)
      emit("queue fa" + std::to_string(i) + " on gpu0 compute"), emit("queue fb" + std::to_string(i) + " on gpu0 compute"),
          emit("signal u" + std::to_string(i) + " on host = 0");
    for (uint64_t j = 0; j < p; ++j)
      emit("submit " + queue + std::to_string(j) + " {"), emit("  signal " + signal + std::to_string(j) + " = 1"), emit("}");
    emit("submit g {");
    for (uint64_t j = 0; j < p; ++j) emit("  wait " + signal + std::to_string(j) + " >= 1");
    emit("  signal gathered = 1"), emit("}");
    for (uint64_t i = 0; i < k; ++i) {
      const std::string u = "u" + std::to_string(i);
      emit("submit fa" + std::to_string(i) + " {"), emit("  wait " + u + " >= 1"), emit("  signal " + u + " = 1"), emit("}");
    }
    emit("wait gathered >= 1");
    for (uint64_t i = 0; i < k; ++i) {
      const std::string u = "u" + std::to_string(i);
      emit("signal " + u + " = 1");
      emit("submit fb" + std::to_string(i) + " {"), emit("  wait " + u + " >= 1"), emit("  signal " + u + " = 2"), emit("}");
    }
    for (uint64_t i = 0; i < k; ++i) emit("wait u" + std::to_string(i) + " >= 2");
  };
  if (o.shape == "chained-waits" || o.shape == "chained-writers" || o.shape == "chained-known" || o.shape == "chained-alternating" ||
      o.shape == "chained-host-waits") {
    const bool two = o.shape == "chained-writers";  // c0 and c2 take turns, batch by batch
    // The host writes s first and last: c1's waits know a write of a writer that meets them, so
    // they look back over c0's writes themselves (no shared list).
    const bool alternating = o.shape == "chained-alternating";  // and every other write is high
    const bool known = o.shape == "chained-known" || alternating;
    // One write a batch, and the host waits for each before c1's batch: c1's waits know every
    // write of c0 (thousands), their own included (no signal-race: each batch knows the last),
    // but not c0's first kernel.
    const bool host_waits = o.shape == "chained-host-waits";
    uint64_t iters = n / 5;
    emit("device gpu0 nv");
    emit("buffer a on gpu0 " + std::to_string(16 * iters + 16));
    emit("buffer b on gpu0 " + std::to_string(16 * iters + 16));
    emit("signal x on host = 0");
    emit("signal s on host = 0");
    emit("queue c0 on gpu0 compute");
    emit("queue c1 on gpu0 compute");
    if (two) emit("queue c2 on gpu0 compute");
    if (known) emit("signal s = 0");
    if (host_waits) {  // a kernel the host never waits for: what it learns of c0 is runs after it, not a prefix
      emit("signal h on host = 0");
      emit("submit c0 {"), emit("  wait x >= 0"), emit("  exec slow writes " + range("a", 0, 16)), emit("  signal h = 1"), emit("}");
    }
    for (uint64_t i = 1; i <= iters; i += host_waits ? 1 : 10) {
      uint64_t last = host_waits ? i : std::min(iters, i + 9);
      emit(two && i / 10 % 2 ? "submit c2 {" : "submit c0 {");
      for (uint64_t k = i; k <= last; ++k) {
        emit("  wait x >= 0");  // breaks the chain: the execs overlap, their releases finish out of order
        emit("  exec produce writes " + range("a", 16 * k, 16));
        emit("  signal s = " + std::to_string(alternating && k % 2 == 0 ? 2 * iters + k : k));
      }
      emit("}");
      if (host_waits) emit("wait s >= " + std::to_string(i));
      emit("submit c1 {");
      for (uint64_t k = i; k <= last; ++k) {
        emit("  wait s >= " + std::to_string(k));
        emit("  exec consume writes " + range("b", 16 * k, 16));
      }
      emit("}");
    }
    if (known) emit("signal s = " + std::to_string(3 * iters + 1));
  } else if (o.shape == "sliding-reads") {
    emit("device gpu0 nv");
    emit("buffer a on gpu0 " + std::to_string(16 * n + 4096));
    emit("buffer b on gpu0 " + std::to_string(16 * n + 16));
    emit("queue c0 on gpu0 compute");
    emit("queue c1 on gpu0 compute");
    for (uint64_t i = 0; i < n; i += 20) {
      for (int q = 0; q < 2; ++q) {
        emit("submit c" + std::to_string(q) + " {");
        for (uint64_t k = i + uint64_t(q); k < std::min(n, i + 20); k += 2)
          emit("  exec k reads " + range("a", 16 * k, 4096) + " writes " + range("b", 16 * k, 16));
        emit("}");
      }
    }
  } else if (o.shape == "many-queues") {
    uint64_t queues = n / 2;
    declare_queues(queues);
    for (uint64_t q = 0; q < queues; ++q) {
      std::string id = std::to_string(q);
      emit("submit q" + id + " {");
      emit("  exec k writes " + range("a", 16 * q, 16));
      emit("  signal s" + id + " = 1");
      emit("}");
    }
    for (uint64_t q = 0; q < queues; ++q) emit("wait s" + std::to_string(q) + " >= 1");
  } else if (o.shape == "queue-chain" || o.shape == "host-chain") {
    // Every event's clock knows of all the queues before it: without shared clocks, stored
    // clocks grow with events times queues.
    bool host = o.shape == "host-chain";
    uint64_t queues = n / 3;
    declare_queues(queues);
    for (uint64_t q = 0; q < queues; ++q) {
      std::string id = std::to_string(q);
      emit("submit q" + id + " {");
      emit(host || q == 0 ? "  barrier" : "  wait s" + std::to_string(q - 1) + " >= 1");
      emit("  exec k reads " + range("a", 16 * (q ? q - 1 : 0), 16) + " writes " + range("a", 16 * q, 16));
      emit("  signal s" + id + " = 1");
      emit("}");
      if (host) emit("wait s" + id + " >= 1");
    }
  } else if (o.shape == "fan-in") {
    // One signal written by half the queues and waited for by the other half: each wait has every
    // writer as a candidate, and the waits share one candidate list (docs/performance.md).
    uint64_t k = std::max<uint64_t>(n / 6, 1);
    declare_queues(2 * k);
    emit("signal s on host = 0");
    for (uint64_t q = 0; q < 2 * k; ++q) {
      std::string id = std::to_string(q);
      emit("submit q" + id + " {");
      if (q < k) emit("  exec k writes " + range("a", 16 * q, 16)), emit("  signal s = 1");
      else emit("  wait s >= 1"), emit("  exec k reads " + range("a", 16 * (q - k), 16));
      emit("}");
    }
  } else if (o.shape == "timeline-relay") {
    // A timeline passed from queue to queue: queue i waits for i and signals i + 1, and any later
    // queue's write could satisfy each wait until the least fixed point shows it comes after
    // (Engine::derive proves it in one pass; docs/performance.md).
    uint64_t queues = std::max<uint64_t>(n / 3, 1);
    declare_queues(queues);
    emit("signal s on host = 0");
    for (uint64_t q = 0; q < queues; ++q) {
      emit("submit q" + std::to_string(q) + " {");
      emit("  wait s >= " + std::to_string(q));
      emit("  exec k writes " + range("a", 16 * q, 16));
      emit("  signal s = " + std::to_string(q + 1));
      emit("}");
    }
  } else if (o.shape == "timeline-turns") {
    // One timeline that four queues take turns writing, each batch waiting for the one before: any
    // later batch's write could satisfy each wait until the fixed point shows it comes after. Every
    // wait is forced (all agents stuck), one at a time (docs/performance.md).
    declare_queues(4);
    emit("signal s on host = 0");
    for (uint64_t i = 0, batches = std::max<uint64_t>(n / 3, 1); i < batches; ++i) {
      emit("submit q" + std::to_string(i % 4) + " {");
      emit("  wait s >= " + std::to_string(i));
      emit("  exec k reads " + range("a", 16 * ((i + 3) % 4), 16) + " writes " + range("a", 16 * (i % 4), 16));
      emit("  signal s = " + std::to_string(i + 1));
      emit("}");
    }
  } else if (o.shape == "initial-forced") {
    // Every wait is blocked (every other queue's write may meet it) and met by the initial value,
    // whose start knows no write: forced, all at once, and once the run is over each one's
    // candidates are every write but its own (Engine::settle_forced, model/candidate_tree.h).
    uint64_t k = std::max<uint64_t>(n / 2, 1);
    declare_queues(k);
    emit("signal s on host = 1");
    for (uint64_t j = 0; j < k; ++j) {
      emit("submit q" + std::to_string(j) + " {");
      emit("  wait s >= 1");
      emit("  signal s = 1");
      emit("}");
    }
  } else if (o.shape == "forced-pairs") {
    // Meets of the overrides with this round's clocks (Clock::meet_node) take one of the two where
    // they know the same, not a copy per pair, and nodes found equal are linked (Clock::same_node).
    uint64_t k = std::max<uint64_t>(n / 6, 1);
    declare_queues(k);
    forced_pairs(k, k, "q", "s", false);
  } else if (o.shape == "gather-pending" || o.shape == "gather-alternating" || o.shape == "gather-falling" || o.shape == "gather-forced" ||
             o.shape == "gather-forced-host" || o.shape == "gather-forced-wide" || o.shape == "gather-forced-chain" ||
             o.shape == "gather-forced-pairs" || o.shape == "gather-signals") {
    // A gathering queue learns thousands of queues' ends (each join keeps sharing its accumulated
    // clock: Clock::join_node), then waits on x, whose thousands of latest writes it knows
    // (Engine::top_known_latest), while each writer's x = 2, which would meet the wait, waits for
    // go (Clock::first_reaching's remembered "none taken here", until a writer under it writes).
    // Alternating: the writers write x = 2, then 3, and the waits are x >= 2, x >= 1, x >= 2, ...:
    // the last latest write meeting x >= 1 (x = 2) meets x >= 2 too, so one remembered answer
    // serves both thresholds (Clock::max_known's `holds`) instead of each wait evicting the other's.
    // Falling: the writers write x = k + 1, then k + 5, and the waits are x >= k, x >= k - 1, ...,
    // x >= 1: each lower wait inherits derive's proof (Engine::inherit), and is answered from what
    // the one before remembered (max_known's `below`, first_reaching's `refused`).
    // Forced: two more queues force each other's wait, which the initial value meets: they learn
    // nothing, so the second round's clocks are down-closed as the first's (Clock::open), and its
    // waits on x take the same shortcuts. Forced-host: the pair waits u >= 1 after the host's
    // u = 1, one writes u = 2, and the host waits for it before the rest: the override adds the
    // host's write, which has run, so the clocks stay down-closed (Engine::close_override).
    // Forced-wide: forced-host, the host first waiting for a queue that gathers n/20 + 100 others:
    // the override adds them all (past the 64 queues close_override once looked at per wait).
    // Forced-chain: fa's `wait u >= 3` and fb's `wait v >= 1` are forced in turn; in the second
    // round fb's override knows fa's `signal v = 1`, whose end now knows what fa's override added
    // (the host's u = 3): close_override joins that end in, else fb's clock, the host's after its
    // wait for fb's v = 2 and every later submit's would be open (the general path per wait on x).
    // Forced-pairs: forced_pairs (above) before the rest: n/40 pairs, each override adding a queue
    // that gathers n/40 others, which close_override closes once per subtree (Clock::join_beyond),
    // not once per pair: else the run's budget ran out, the rest of the overrides stayed open, and
    // so did the host's clock and every later submit's.
    // Signals: eight signals x0..x7 in place of x, each written by every writer, and the waits
    // asked of them in turn: each is asked of the gathering clock under three or four keys (Clock's
    // memo keeps every key a node is asked), and each wait follows one on another signal
    // (Engine::inherit: the tree derive cleared).
    const bool alternate = o.shape == "gather-alternating", falling = o.shape == "gather-falling";
    const uint64_t signals = o.shape == "gather-signals" ? 8 : 1;
    auto x = [&](uint64_t m) { return signals == 1 ? std::string("x") : "x" + std::to_string(m % signals); };
    uint64_t k = std::max<uint64_t>(n / (5 + 2 * signals), 1);
    const uint64_t before_go = falling ? k + 1 : alternate ? 2 : 1, after_go = falling ? k + 5 : before_go + 1;
    auto threshold = [&](uint64_t j) -> uint64_t { return falling ? k - j : alternate && j % 2 == 0 ? 2 : 1; };
    const bool forced = o.shape == "gather-forced";
    declare_queues(k + 1);
    for (uint64_t m = 0; m < signals; ++m) emit("signal " + x(m) + " on host = 0");
    emit("signal go on host = 0");
    const bool wide = o.shape == "gather-forced-wide", forced_host = o.shape == "gather-forced-host" || wide;
    if (forced) emit("queue fa on gpu0 compute"), emit("queue fb on gpu0 compute"), emit("signal f on host = 1");
    if (forced_host) {
      emit("queue fa on gpu0 compute"), emit("queue fb on gpu0 compute"), emit("signal u on host = 0");
      const uint64_t p = n / 20 + 100;  // wide: the queues gathered before the host's u = 1
      if (wide) {
        for (uint64_t j = 0; j < p; ++j) emit("queue p" + std::to_string(j) + " on gpu0 compute"), emit("signal ps" + std::to_string(j) + " on host = 0");
        emit("queue g on gpu0 compute"), emit("signal gathered on host = 0");
        for (uint64_t j = 0; j < p; ++j) emit("submit p" + std::to_string(j) + " {"), emit("  signal ps" + std::to_string(j) + " = 1"), emit("}");
        emit("submit g {");
        for (uint64_t j = 0; j < p; ++j) emit("  wait ps" + std::to_string(j) + " >= 1");
        emit("  signal gathered = 1"), emit("}");
      }
      emit("submit fa {"), emit("  wait u >= 1"), emit("  signal u = 1"), emit("}");
      if (wide) emit("wait gathered >= 1");
      emit("signal u = 1");
      emit("submit fb {"), emit("  wait u >= 1"), emit("  signal u = 2"), emit("}");
      emit("wait u >= 2");
    }
    if (o.shape == "gather-forced-pairs") forced_pairs(std::max<uint64_t>(n / 40, 1), std::max<uint64_t>(n / 40, 1), "p", "ps", true);
    if (o.shape == "gather-forced-chain") {
      for (const char* q : {"fa", "fb", "fc"}) emit("queue " + std::string(q) + " on gpu0 compute");
      emit("signal u on host = 0"), emit("signal v on host = 0"), emit("signal w on host = 1");
      emit("submit fa {"), emit("  wait u >= 3"), emit("  signal v = 1"), emit("}");
      emit("submit fb {"), emit("  wait v >= 1"), emit("  wait w >= 3"), emit("  signal u = 3"), emit("  signal v = 2"), emit("}");
      emit("signal u = 3");
      emit("submit fc {"), emit("  wait v >= 1"), emit("  signal v = 3"), emit("  signal w = 3"), emit("}");
      emit("wait v >= 2");
    }
    for (uint64_t j = 0; j < k; ++j) {
      emit("submit q" + std::to_string(j) + " {");
      for (uint64_t m = 0; m < signals; ++m) emit("  signal " + x(m) + " = " + std::to_string(before_go));
      emit("  signal s" + std::to_string(j) + " = 1");
      emit("  wait go >= 1");
      for (uint64_t m = 0; m < signals; ++m) emit("  signal " + x(m) + " = " + std::to_string(after_go));
      emit("}");
    }
    emit("submit q" + std::to_string(k) + " {");
    for (uint64_t j = 0; j < k; ++j) emit("  wait s" + std::to_string(j) + " >= 1");
    for (uint64_t j = 0; j < k; ++j) {
      emit("  wait " + x(j) + " >= " + std::to_string(threshold(j)));
      emit("  exec k writes " + range("a", 16 * j, 16));
    }
    emit("  signal go = 1");
    emit("}");
    for (const char* q : {"fa", "fb"})
      if (forced) emit("submit " + std::string(q) + " {"), emit("  wait f >= 1"), emit("  signal f = 1"), emit("}");
  } else if (o.shape == "fan-in-relay" || o.shape == "fan-in-signals") {
    // fan-in, and the readers take turns on t: a reader's wait on s knows thousands of queues (the
    // readers before it) and no writer's, which it must tell without a walk over either. Writers
    // and readers alternate in queue ids (q2j writes, q2j+1 reads), so no part of a reader's clock
    // is free of writers (Clock::any_known_queue, Engine::knows_no_write).
    // fan-in-signals: eight signals in turn, each remembered of the shared nodes under its own tag.
    const bool eight = o.shape == "fan-in-signals";
    auto signal = [&](uint64_t j) { return eight ? "y" + std::to_string(j % 8) : std::string("s"); };
    uint64_t k = std::max<uint64_t>(n / 7, 1);
    declare_queues(2 * k);
    for (uint64_t m = 0; m < (eight ? 8 : 1); ++m) emit("signal " + signal(m) + " on host = 0");
    emit("signal t on host = 0");
    for (uint64_t j = 0; j < k; ++j) {
      emit("submit q" + std::to_string(2 * j) + " {");
      emit("  exec k writes " + range("a", 16 * j, 16));
      emit("  signal " + signal(j) + " = 1");
      emit("}");
    }
    for (uint64_t j = 0; j < k; ++j) {
      emit("submit q" + std::to_string(2 * j + 1) + " {");
      emit("  wait t >= " + std::to_string(j));
      emit("  wait " + signal(j) + " >= 1");
      emit("  exec k reads " + range("a", 16 * j, 16));
      emit("  signal t = " + std::to_string(j + 1));
      emit("}");
    }
  } else if (o.shape == "handoff" || o.shape == "handoff-stray" || o.shape == "handoff-strays" || o.shape == "handoff-cascade" ||
             o.shape == "handoff-many-strays") {
    // A relay on t hands each queue its turn; the queue also waits on s, which every queue writes
    // with 1 or 2 (no timeline). Every later queue's write of s could satisfy each such wait until
    // the relay on t shows it comes after (Engine::derive across signals, and `foresee`).
    // A strict device: on nv, `signal s` and `signal t` would both release the exec, in no order,
    // and every pair of writes of s would race (n^2/50 findings, output as large as that).
    // handoff-stray: one more queue writes s = 2 once, unordered with every other write, so each
    // wait on s knows all writes of s but that one (a stale-wait note each).
    // handoff-strays: every write of s is 1 (no signal-race, whose findings would be one per
    // stray and write), and 100 queues write it once each, unordered: more than the 64 latest
    // writes a short list would hold (Engine::LatestWrites).
    // handoff-cascade: writes of s are 1, the waits ask for 2, and one stray writes 2 first. q0
    // takes it and writes 1 over it, so q1's wait has no candidate, and every later queue is stuck
    // on t: a stuck episode per pair of queues, each over every stuck queue (Engine::unstick).
    // handoff-many-strays: a stray per ten queues, its queue declared among theirs (ids
    // interleaved: every subtree of a start's clock holds writers it knows and strays it does not),
    // so the latest writes of s grow with the program (Engine::resolve_unlisted_many).
    bool cascade = o.shape == "handoff-cascade", many = o.shape == "handoff-many-strays";
    bool stray = o.shape == "handoff-stray" || cascade, strays = o.shape == "handoff-strays" || cascade || many;
    uint64_t queues = std::max<uint64_t>(n / 5, 1), stray_count = many ? queues / 10 : 100;
    emit("device gpu0 strict");
    emit("buffer a on gpu0 " + std::to_string(16 * queues));
    for (uint64_t q = 0; q < queues; ++q) {
      emit("queue q" + std::to_string(q) + " on gpu0 compute");
      if (many && q % 10 == 5 && q / 10 < stray_count) emit("queue stray" + std::to_string(q / 10) + " on gpu0 compute");
    }
    emit("signal s on host = 1");
    emit("signal t on host = 0");
    if (stray) emit("queue stray on gpu0 compute\nsubmit stray {\n  signal s = 2\n}");
    for (uint64_t j = 0; strays && !cascade && j < stray_count; ++j)
      emit((many ? "" : "queue stray" + std::to_string(j) + " on gpu0 compute\n") + "submit stray" + std::to_string(j) + " {\n  signal s = 1\n}");
    for (uint64_t q = 0; q < queues; ++q) {
      emit("submit q" + std::to_string(q) + " {");
      emit("  wait t >= " + std::to_string(q));
      emit(cascade ? "  wait s >= 2" : "  wait s >= 1");
      emit("  exec k writes " + range("a", 16 * q, 16));
      emit("  signal s = " + std::to_string(strays ? 1 : 1 + q % 2));
      emit("  signal t = " + std::to_string(q + 1));
      emit("}");
    }
  } else if (o.shape == "racing-pairs" || o.shape == "host-refill" || o.shape == "crossing-races") {  // the hcq fuzzer's shapes
    bool refill = o.shape == "host-refill", crossing = o.shape == "crossing-races";
    emit("device gpu0 nv");
    emit(refill ? "buffer inp on host 4096" : crossing ? "buffer a on gpu0 4096\nbuffer b on gpu0 4096" : "buffer inp on gpu0 4096\nbuffer out on gpu0 4096");
    emit("signal kick on host");
    emit("queue q on gpu0 compute");
  }
  if (o.shape == "racing-pairs" || o.shape == "crossing-races") {
    // Each wait breaks the chain, so nothing orders any two execs. crossing-races: each exec
    // meets the earlier ones through several runs (the writes of what it reads, the reads and
    // writes of what it writes).
    bool crossing = o.shape == "crossing-races";
    uint64_t iters = n / 2;
    for (uint64_t k = 1; k <= iters; k += 10) {
      emit("submit q {");
      for (uint64_t i = k; i <= std::min(iters, k + 9); ++i) {
        emit("  wait kick >= " + std::to_string(i));
        if (crossing) emit(i % 2 ? "  exec k reads a writes b" : "  exec k reads b writes a");
        else emit(i % 2 ? "  exec body reads inp writes out" : "  exec body reads inp, out writes out");
      }
      emit("}");
    }
    for (uint64_t i = 1; i <= iters; ++i) emit("signal kick = " + std::to_string(i));
  } else if (o.shape == "host-refill") {
    uint64_t iters = n / 4;
    for (uint64_t i = 1; i <= iters; ++i) {
      emit("submit q {");
      emit("  wait kick >= " + std::to_string(i));
      emit("  exec body reads inp");
      emit("}");
      emit("write inp");
      emit("signal kick = " + std::to_string(i));
    }
  } else if (o.shape == "overlap-copies") {
    // One overlap queue (what Vulkan expresses: bench/peers): execs on 256-byte aligned ranges,
    // copies at any byte offset (they cut the buffers' shadow memory finely), barriers, signals
    // and host waits.
    Rng rng{o.seed};
    auto pick = [&](uint64_t k) { return rng.below(k); };
    const int nbuf = 4;
    const uint64_t kBuf = 4096, kAlign = 256;
    auto buf = [](uint64_t b) { return "b" + std::to_string(b); };
    emit("device d0 strict");
    for (int b = 0; b < nbuf; ++b) emit("buffer " + buf(b) + " on d0 " + std::to_string(kBuf));
    emit("signal done on host = 0");
    emit("queue q on d0 compute ordering overlap");
    auto window = [&](uint64_t max_chunks) {  // 1 to max_chunks aligned chunks of a random buffer
      uint64_t chunks = 1 + pick(max_chunks), lo = pick(kBuf / kAlign - chunks + 1) * kAlign;
      return range(buf(pick(nbuf)).c_str(), lo, chunks * kAlign);
    };
    uint64_t made = 0, fence = 0;
    while (made < o.commands) {
      emit("submit q {");
      uint64_t batch = std::min<uint64_t>(o.commands - made, 4 + pick(12));
      for (uint64_t i = 0; i < batch; ++i, ++made) {
        uint64_t r = pick(100);
        if (r < 55) {
          emit("  exec k reads " + window(2) + (pick(2) ? ", " + window(2) : "") + " writes " + window(2));
        } else if (r < 70) {
          // Different buffers: Vulkan forbids overlapping ranges within one buffer.
          uint64_t a = pick(nbuf), b = (a + 1 + pick(nbuf - 1)) % nbuf, len = (1 + pick(4)) * 64;
          uint64_t lo1 = pick(kBuf - len + 1), lo2 = pick(kBuf - len + 1);
          emit("  copy " + range(buf(a).c_str(), lo1, len) + " -> " + range(buf(b).c_str(), lo2, len));
        } else if (r < 88) {
          emit("  barrier");
        } else if (r < 94) {
          emit("  memory_barrier");
        } else {
          emit("  signal done = " + std::to_string(++fence));
        }
      }
      emit("}");
      if (fence && pick(3) == 0) emit("wait done >= " + std::to_string(fence));
    }
  } else if (o.shape == "param-loop") {
    // At r = 63 the loop expands to about n commands.
    uint64_t per = std::max<uint64_t>(n / 63 / 2, 1);
    emit("device gpu0 nv");
    emit("buffer a on gpu0 " + std::to_string(16 * per + 16));
    emit("signal tl on host = 0");
    emit("queue c0 on gpu0 compute");
    emit("queue c1 on gpu0 compute");
    emit("param r in 1..63");
    emit("repeat i in 1..r {");
    emit("  submit c0 {");
    emit("    wait tl >= 2*i - 2");
    for (uint64_t k = 0; k + 2 < per; ++k) emit("    exec k writes " + range("a", 16 * k, 16));
    emit("    signal tl = 2*i - 1");
    emit("  }");
    emit("  submit c1 {");
    emit("    wait tl >= 2*i - 1");
    for (uint64_t k = 0; k + 2 < per; ++k) emit("    exec k reads " + range("a", 16 * k, 16));
    emit("    signal tl = 2*i");
    emit("  }");
    emit("}");
    emit("wait tl >= 2*r");
  }
  return s;
}

std::string generate_program(const GenOptions& o, std::vector<uint64_t>* bug_lines) {
  if (o.shape != "eager") return generate_shape(o);
  std::mt19937_64 rng(o.seed);
  std::string s;
  s.reserve(o.commands * 48 + 4096);
  uint64_t line = 0;
  auto emit = [&](const std::string& l) {
    s += l;
    s += '\n';
    ++line;
  };
  emit("# generated by: qvet gen --devices " + std::to_string(o.devices) + " --queues-per-device " +
       std::to_string(o.queues_per_device) + " --commands " + std::to_string(o.commands) + " --seed " + std::to_string(o.seed) +
       " --sync-every " + std::to_string(o.sync_every) + " --cross-percent " + std::to_string(o.cross_percent) +
       " --arch " + o.arch + " --bugs " + std::to_string(o.bugs) + (o.symbolic ? " --symbolic" : ""));
  auto arch_of = [&](int device) { return o.arch == "mixed" ? std::string(device % 2 ? "amd" : "nv") : o.arch; };
  for (int d = 0; d < o.devices; ++d) emit("device gpu" + std::to_string(d) + " " + arch_of(d));
  for (int a = 0; a < o.devices; ++a)
    for (int b = a + 1; b < o.devices; ++b) emit("peer gpu" + std::to_string(a) + " gpu" + std::to_string(b));
  std::vector<QueueGen> qs;
  for (int d = 0; d < o.devices; ++d)
    for (int k = 0; k < o.queues_per_device; ++k) {
      bool copy = o.queues_per_device >= 2 && k == o.queues_per_device - 1;
      std::string n = "q" + std::to_string(d) + "_" + std::to_string(k);
      qs.push_back({n, "tl_" + n, "out_" + n, d, copy});
    }
  // A batch is at most the whole program (--commands bounds it whatever --sync-every says).
  uint64_t batch_cmds = std::max<uint64_t>(2, std::min<uint64_t>(uint64_t(o.sync_every), o.commands));
  uint64_t batches = std::max<uint64_t>(1, o.commands / batch_cmds);
  uint64_t per_queue = batches / qs.size() + 2;
  constexpr uint64_t kSlot = 256;
  if (o.symbolic) emit("param tv in 0..2");
  std::vector<bool> first_cross(qs.size(), true);
  for (auto& q : qs) {
    emit("buffer " + q.out + " on gpu" + std::to_string(q.device) + " " + std::to_string(per_queue * kSlot));
    emit("buffer w_" + q.name + " on gpu" + std::to_string(q.device) + " 64K");
    emit("signal " + q.tl + " on host");
    emit("queue " + q.name + " on gpu" + std::to_string(q.device) + (q.copy ? " copy" : " compute"));
  }
  // Choose which cross-consuming batches lose their wait.
  std::vector<uint64_t> bug_at;
  for (int b = 0; b < o.bugs; ++b) bug_at.push_back(std::uniform_int_distribution<uint64_t>(batches / 10, batches - 1)(rng));
  std::sort(bug_at.begin(), bug_at.end());
  size_t next_bug = 0;
  uint64_t emitted = 0;
  for (uint64_t b = 0; b < batches && emitted < o.commands; ++b) {
    QueueGen& q = qs[b % qs.size()];
    emit("submit " + q.name + " {");
    uint64_t n = 0;
    // Own previous batch: only a chained (NV compute) queue needs it, to order its first launch
    // after the previous batch's launches; serial queues already are.
    if (q.value > 0 && !q.copy && arch_of(q.device) == "nv") emit("  wait " + q.tl + " >= " + std::to_string(q.value)), ++n;
    // A producer: another queue that has written an output slot.
    QueueGen* prod = nullptr;
    if (std::uniform_int_distribution<int>(0, 99)(rng) < o.cross_percent) {
      QueueGen& cand = qs[std::uniform_int_distribution<size_t>(0, qs.size() - 1)(rng)];
      if (&cand != &q && cand.slots > 0) prod = &cand;
    }
    bool bug = false;
    while (next_bug < bug_at.size() && bug_at[next_bug] <= b && prod) bug = true, ++next_bug;
    std::string in;
    if (prod) {
      uint64_t slot = prod->slots - 1;
      in = prod->out + "[" + std::to_string(slot * kSlot) + ":" + std::to_string((slot + 1) * kSlot) + "]";
      size_t qi = size_t(&q - qs.data());
      bool sym = o.symbolic && first_cross[qi];
      first_cross[qi] = false;
      if (!bug) emit("  wait " + prod->tl + " >= " + (sym ? std::string("tv") : std::to_string(prod->value))), ++n;
      else if (bug_lines) bug_lines->push_back(line + 1);
      if (!q.copy && arch_of(q.device) == "amd" && prod->device != q.device) emit("  memory_barrier"), ++n;
    }
    std::string out = q.out + "[" + std::to_string(q.slots * kSlot) + ":" + std::to_string((q.slots + 1) * kSlot) + "]";
    std::string work = "w_" + q.name;
    if (q.copy) {
      while (n + 2 < batch_cmds) emit("  copy " + work + "[0:256] -> " + work + "[256:512]"), ++n;
      emit("  copy " + (prod ? in : work + "[0:256]") + " -> " + out), ++n;
    } else {
      while (n + 2 < batch_cmds) emit("  exec k" + std::to_string(n) + " reads " + work + "[0:4K] writes " + work + "[4K:8K]"), ++n;
      emit("  exec k_out reads " + (prod ? in + ", " : "") + work + "[4K:8K] writes " + out), ++n;
    }
    ++q.slots;
    emit("  signal " + q.tl + " = " + std::to_string(++q.value)), ++n;
    emit("}");
    emitted += n;
  }
  for (auto& q : qs)
    if (q.value) emit("wait " + q.tl + " >= " + std::to_string(q.value));
  for (auto& q : qs)
    if (q.slots) emit("read " + q.out + "[0:256]");
  return s;
}

int run_gen(int argc, char** argv) {
  GenOptions o;
  std::string out;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") return std::cout << gen_help(), 0;
    if (a == "--symbolic") {
      o.symbolic = true;
      continue;
    }
    if (i + 1 >= argc) throw GenUsageError("unknown option or missing value: '" + a + "'");
    std::string v = argv[++i];
    auto num = [&]() -> uint64_t {
      if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos)
        throw GenUsageError(a + " needs a non-negative integer, got '" + v + "'");
      return std::stoull(v);
    };
    if (a == "--devices") o.devices = int(std::clamp<uint64_t>(num(), 1, 64));
    else if (a == "--queues-per-device") o.queues_per_device = int(std::clamp<uint64_t>(num(), 1, 16));
    else if (a == "--commands") o.commands = std::min<uint64_t>(num(), 20'000'000);
    else if (a == "--seed") o.seed = num();
    else if (a == "--sync-every") o.sync_every = int(std::clamp<uint64_t>(num(), 2, 1000000));
    else if (a == "--cross-percent") o.cross_percent = int(std::min<uint64_t>(num(), 100));
    else if (a == "--bugs") o.bugs = int(std::min<uint64_t>(num(), 1000000));
    else if (a == "--arch") {
      if (v != "nv" && v != "amd" && v != "strict" && v != "mixed") throw GenUsageError("--arch is nv, amd, strict or mixed");
      o.arch = v;
    } else if (a == "--format") {
      if (v != "hcq" && v != "json") throw GenUsageError("--format is hcq or json");
      o.format = v;
    } else if (a == "--shape") {
      static const char* const kShapes[] = {"eager", "chained-waits", "chained-writers", "chained-known", "chained-alternating", "chained-host-waits", "sliding-reads", "many-queues", "param-loop",
                                            "overlap-copies", "racing-pairs", "host-refill", "crossing-races", "queue-chain",
                                            "host-chain", "fan-in", "timeline-relay", "timeline-turns", "handoff", "handoff-stray",
                                            "handoff-strays", "handoff-cascade", "fan-in-relay", "initial-forced", "forced-pairs", "handoff-many-strays",
                                            "gather-pending", "gather-alternating", "gather-falling", "gather-signals", "fan-in-signals", "gather-forced", "gather-forced-host",
                                            "gather-forced-wide", "gather-forced-chain", "gather-forced-pairs"};
      if (std::find(std::begin(kShapes), std::end(kShapes), v) == std::end(kShapes)) {
        std::string names;
        for (const char* k : kShapes) names += std::string(names.empty() ? "" : ", ") + k;
        throw GenUsageError("--shape is one of " + names);
      }
      o.shape = v;
    } else if (a == "-o") out = v;
    else throw GenUsageError("unknown option '" + a + "'");
  }
  std::vector<uint64_t> bugs;
  std::string text = generate_program(o, &bugs);
  if (o.format == "json") {
    SourceSet src;
    LoadResult r = load_program_text(src, out.empty() ? "generated.hcq" : out, std::move(text));
    if (!r.program) throw std::runtime_error("generated program does not parse: " + r.error->message);
    text = write_json_program(*r.program, src, false);
  }
  if (out.empty() || out == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else if (std::string error; !write_file_atomic(out, text, error)) {
    std::cerr << "qvet gen: error: " << error << "\n";
    return 2;
  }
  for (uint64_t l : bugs) std::cerr << "injected a missing wait before line " << l << "\n";
  return 0;
}

}  // namespace qvet
