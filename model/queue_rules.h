// The rules of order inside a queue (semantics.md, "Order inside a queue"), in one place: what a
// command waits for on its own queue, in each mode, given the chain state. The engine applies
// them to clocks (model/engine.cpp), the benchmark baseline to explicit edges
// (bench/naive_closure.cpp), and the replay plan to streams and events (devices/plan.cpp). The
// oracle and the simulator re-derive them from the spec on purpose (a second reading).
#pragma once
#include "core/ir.h"
#include "model/profile.h"

namespace qvet {

// A wait and a memory_barrier end when the queue's front end passes them: whatever the front
// end knows after them includes their ends, even while earlier kernels still run.
inline bool ends_at_front_end(CmdOp op) { return op == CmdOp::Wait || op == CmdOp::MemoryBarrier; }

// What one command waits for on its queue (besides the front end: every command starts after the
// previous one started, and after the last command that blocked the front end ended).
struct QueueStep {
  bool after_chain = false;  // it starts after the exec it chains to (and that exec's releases) ended
  bool release = false;      // a chained release: it ends when its exec ends
  bool after_all = false;    // it ends after every earlier command of the queue ended
  bool blocks = false;       // later commands start after it ends (else after it starts)
  bool starts_chain = false; // an exec later execs may chain to
};

// The chain state of one queue, stepped command by command in queue order.
class QueueOrder {
 public:
  explicit QueueOrder(Mode m) : mode_(m) {}
  Mode mode() const { return mode_; }

  // `batch`: the host event that submitted the command. A new batch is a new queue object (v3):
  // its first exec chains to nothing, and a signal that begins it is a WFI release.
  QueueStep next(CmdOp op, uint32_t batch) {
    if (batch != batch_) batch_ = batch, chain_ = false, releases_left_ = 0;
    QueueStep s;
    bool chained = mode_ == Mode::Chained, sig = op == CmdOp::Signal || op == CmdOp::Timestamp;
    s.after_chain = chained && op == CmdOp::Exec && chain_;
    s.release = chained && sig && releases_left_ > 0;
    s.after_all = (sig && !s.release) || op == CmdOp::Barrier;
    s.blocks = mode_ == Mode::Serial || op == CmdOp::Wait || op == CmdOp::Barrier || op == CmdOp::MemoryBarrier ||
               (chained && sig && !s.release);
    s.starts_chain = chained && op == CmdOp::Exec;
    if (s.release) --releases_left_;
    else if (sig) releases_left_ = 0;
    if (op == CmdOp::Exec) chain_ = chained, releases_left_ = chained ? kReleaseSlots : 0;
    else if (!sig) chain_ = false, releases_left_ = 0;
    return s;
  }

 private:
  Mode mode_;
  bool chain_ = false;     // chained: the last command other than a signal was an exec
  int releases_left_ = 0;  // chained: release signals that exec can still carry
  uint32_t batch_ = kNone;  // the batch of the last command
};

}  // namespace qvet
