// Facts of queue order that hold for every command of a kind, whatever the queue's state.
// (semantics.md, "Queues"; the engine applies them, and Clock reads them to stay small.)
#pragma once
#include "core/ir.h"

namespace qvet {

// A wait and a memory_barrier end when the queue's front end passes them: whatever the front
// end knows after them includes their ends, even while earlier kernels still run.
inline bool ends_at_front_end(CmdOp op) { return op == CmdOp::Wait || op == CmdOp::MemoryBarrier; }

}  // namespace qvet
