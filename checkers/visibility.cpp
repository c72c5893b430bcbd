// Rule `visibility`: on a profile whose reads need an acquire (amd), a kernel that reads bytes
// last written by another agent (the host or another device) needs a `memory_barrier` on its
// queue between that write and the read: end(w) -> start(m) and end(m) -> start(r).
// Copy engines read memory directly (DMA, no cache to invalidate), so only `exec` reads count.
#include <algorithm>
#include <memory>

#include "checkers/checker.h"
#include "checkers/shadow.h"

namespace qvet {

namespace {

class VisibilityChecker : public Checker {
 public:
  explicit VisibilityChecker(const CheckContext& c)
      : Checker(c), shadow_(c.p.buffers.size()), last_mb_(c.p.queues.size()), has_mb_(c.p.queues.size(), false), groups_(c) {
    for (const Device& d : c.p.devices) active_ |= profile_of(d.arch).reads_need_acquire;
  }

  void on_command(uint32_t id, const Clock& start, const Clock&) override {
    if (!active_) return;
    const TraceCmd& c = c_.t.cmds[id];
    if (c.op == CmdOp::MemoryBarrier) {
      last_mb_[c.queue] = start;
      has_mb_[c.queue] = true;
    }
    uint32_t dev = c_.p.queues[c.queue].device;
    bool need = profile_of(c_.p.devices[dev].arch).reads_need_acquire && c.op == CmdOp::Exec;
    for (uint32_t a = c.acc_begin; a < c.acc_end; ++a) {
      const Access& acc = c_.t.accesses[a];
      if (acc.freed_by != kNone) continue;
      if (!acc.write && need) check_read({false, id}, acc, dev, start);
    }
    for (uint32_t a = c.acc_begin; a < c.acc_end; ++a)
      if (c_.t.accesses[a].write && c_.t.accesses[a].freed_by == kNone) record_write({false, id}, a, start);
  }
  void on_host(uint32_t h, const Clock& k) override {
    if (!active_) return;
    const HostEvent& e = c_.t.host[h];
    if (e.op == HostOp::Write)
      for (uint32_t a = e.acc_begin; a < e.acc_end; ++a)
        if (c_.t.accesses[a].freed_by == kNone) record_write({true, h}, a, k);
  }
  void finish() override { groups_.flush(); }

 private:
  // A write of some bytes, and the writes of those bytes it hides: those its start knows. A read
  // that knows the write sees none of them last; a read that does not know it (a race) may still
  // know one of them, which is then a last write for that read.
  struct WriteNode {
    EventRef ev;
    std::shared_ptr<const Clock> start;
    std::vector<std::shared_ptr<WriteNode>> hidden;
    // Nodes hide nodes as deep as the program: the last owner takes the chain apart with a loop,
    // never by recursion (which would overflow the stack).
    ~WriteNode() {
      std::vector<std::shared_ptr<WriteNode>> doomed = std::move(hidden);
      while (!doomed.empty()) {
        std::shared_ptr<WriteNode> n = std::move(doomed.back());
        doomed.pop_back();
        if (n.use_count() > 1) continue;
        for (auto& h : n->hidden) doomed.push_back(std::move(h));
        n->hidden.clear();
      }
    }
  };
  struct Segment {
    uint64_t hi = 0;
    std::vector<std::shared_ptr<WriteNode>> writes;  // not known to any later write of these bytes
  };
  bool active_ = false;  // some profile needs an acquire
  ShadowMap<Segment> shadow_;
  std::vector<Clock> last_mb_;  // per queue: what its latest memory_barrier knew when it started
  std::vector<bool> has_mb_;
  PairGroups groups_;

  void record_write(EventRef ev, uint32_t a, const Clock& start) {
    const Access& acc = c_.t.accesses[a];
    auto clock = std::make_shared<const Clock>(start);
    shadow_.for_range(acc.buffer, acc.lo, acc.hi, [&](uint64_t, Segment& seg) {
      auto node = std::make_shared<WriteNode>(WriteNode{ev, clock, {}});
      std::vector<std::shared_ptr<WriteNode>> keep;
      for (auto& w : seg.writes) (w->ev != ev && c_.e.known(start, w->ev) ? node->hidden : keep).push_back(w);
      keep.push_back(node);
      seg.writes = std::move(keep);
    });
  }

  // The last writes ordered before a read that starts knowing `start`: the known writes that no
  // other known write knows.
  std::vector<const WriteNode*> last_writes(const Segment& seg, const Clock& start) const {
    std::vector<const WriteNode*> known, stack;
    for (auto& w : seg.writes) stack.push_back(w.get());
    while (!stack.empty()) {
      const WriteNode* w = stack.back();
      stack.pop_back();
      if (c_.e.known(start, w->ev)) {
        if (std::find(known.begin(), known.end(), w) == known.end()) known.push_back(w);
        continue;
      }
      for (auto& h : w->hidden) stack.push_back(h.get());
    }
    std::vector<const WriteNode*> last;
    for (const WriteNode* w : known)
      if (std::none_of(known.begin(), known.end(), [&](const WriteNode* o) { return o != w && c_.e.known(*o->start, w->ev); }))
        last.push_back(w);
    return last;
  }

  void check_read(EventRef r, const Access& acc, uint32_t dev, const Clock& start) {
    uint32_t q = c_.t.cmds[r.id].queue;
    shadow_.for_range(acc.buffer, acc.lo, acc.hi, [&](uint64_t lo, Segment& seg) {
      for (const WriteNode* w : last_writes(seg, start)) {
        if (c_.agent(w->ev) == dev || w->ev == r) continue;  // same agent: coherent
        if (has_mb_[q] && c_.e.known(last_mb_[q], w->ev)) continue;
        Diagnostic* dp = groups_.add(r, w->ev);
        if (!dp) continue;
        Diagnostic& d = *dp;
        d.set_rule(Rule::Visibility);
        d.loc = c_.loc(r);
        std::string who = w->ev.host ? "the host" : "device " + c_.p.devices[c_.agent(w->ev)].name;
        d.message = c_.what(r) + " reads bytes [" + std::to_string(lo) + ", " + std::to_string(seg.hi) + ") of '" +
                    c_.p.buffers[acc.buffer].name + "' written by " + who + " with no `memory_barrier` on queue " +
                    c_.p.queues[q].name + " after that write: the " + arch_name(c_.p.devices[dev].arch) +
                    " profile needs an acquire, so the read may see stale cached data";
        d.related.push_back({c_.loc(w->ev), "the write: " + c_.what(w->ev)});
        d.fixes.push_back({"add `memory_barrier` before " + c_.line_text(c_.loc(r)) + " on queue " + c_.p.queues[q].name,
                           {{c_.loc(r), false, "memory_barrier"}}});
      }
    });
  }
};

}  // namespace

std::unique_ptr<Checker> make_visibility_checker(const CheckContext& c) { return std::make_unique<VisibilityChecker>(c); }

}  // namespace qvet
