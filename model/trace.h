// Trace: a Program made concrete for one binding of its params. Loops are unrolled, command
// lists expanded, views resolved to byte ranges of base buffers, and every device command is
// placed on its queue in submission order. The model and every checker work on a Trace; a
// decoder of binary command streams would produce one directly.
//
// Elaboration also enforces the dynamic input rules: freeing what is not live, allocating what
// is live, and a program that expands beyond kMaxEvents.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ir.h"
#include "core/input_error.h"

namespace qvet {

constexpr size_t kMaxEvents = 30'000'000;  // commands, host statements and loop iterations

// One memory range touched by a command or host statement, in bytes of a base buffer.
struct Access {
  uint64_t lo, hi;
  uint32_t buffer;            // base buffer
  uint32_t freed_by = kNone;  // host event of the `free` when the access was submitted while dead
  bool write;
};

// Where an unrolled event came from: loop variable values and command-list arguments.
struct Context {
  uint32_t parent = 0;
  uint32_t var = kNone;
  i128 value = 0;
};

struct TraceCmd {  // fields ordered for size: one per command of the program
  i128 value = 0;                // as evaluated; may not fit the operation's width (rule value-width)
  const Command* src = nullptr;  // the source command (in a submit or a command list); null when streamed
  uint32_t queue;
  uint32_t index;   // position within its queue
  uint32_t submit;  // host event that submitted it
  Loc loc;
  uint32_t ctx;
  uint32_t signal = kNone;
  uint32_t kernel = kNone;              // Exec
  uint32_t acc_begin = 0, acc_end = 0;  // into Trace::accesses
  uint32_t signal_freed_by = kNone;     // the signal was freed when this was submitted
  CmdOp op;
};

enum class HostOp : uint8_t { Submit, Wait, Signal, Read, Write, Free, Alloc };

struct HostEvent {
  HostOp op;
  Loc loc;
  uint32_t ctx;
  uint32_t queue = kNone;             // Submit
  uint32_t cmd_begin = 0, cmd_end = 0;  // Submit: the commands it submitted (Trace::cmds ids)
  uint32_t signal = kNone;            // Wait, Signal
  i128 value = 0;
  uint32_t acc_begin = 0, acc_end = 0;  // Read, Write
  ObjectRef object;                     // Free, Alloc
  uint32_t signal_freed_by = kNone;
  std::vector<uint32_t> inflight;  // Free: commands submitted in the lifetime this free ends
  const Stmt* src = nullptr;       // the source statement
};

// An event of the trace: a device command or a host statement.
struct EventRef {
  bool host = false;
  uint32_t id = kNone;  // Trace::cmds id, or Trace::host id
  friend bool operator==(const EventRef&, const EventRef&) = default;
  // One integer per event, for maps and sets; from_key inverts it.
  uint64_t key() const { return uint64_t(host) << 32 | id; }
  static EventRef from_key(uint64_t k) { return {(k >> 32) != 0, uint32_t(k)}; }
};

struct Trace {
  const Program* program = nullptr;
  std::vector<HostEvent> host;
  std::vector<TraceCmd> cmds;                    // in submission order
  std::vector<std::vector<uint32_t>> queue_cmds;  // per queue: cmd ids in queue order
  std::vector<Access> accesses;
  std::vector<Context> contexts;  // contexts[0] is the top level
  std::vector<i128> binding;      // the value of every param (other vars: last value)
  // Symbolic mode (elaborate(..., symbolic = true)): every value and byte bound as an affine
  // expression over the params, loop variables and list arguments replaced by their values.
  std::vector<Expr> sym_cmd_value, sym_host_value, sym_access_lo, sym_access_hi;
  std::vector<Expr> sym_signal_init;

  // What every event has, command or host statement.
  const Loc& loc(EventRef e) const { return e.host ? host[e.id].loc : cmds[e.id].loc; }
  uint32_t ctx(EventRef e) const { return e.host ? host[e.id].ctx : cmds[e.id].ctx; }
  uint32_t signal(EventRef e) const { return e.host ? host[e.id].signal : cmds[e.id].signal; }
  i128 value(EventRef e) const { return e.host ? host[e.id].value : cmds[e.id].value; }
  // Its accesses: [first, last) of `accesses`.
  std::pair<uint32_t, uint32_t> access_span(EventRef e) const {
    return e.host ? std::pair{host[e.id].acc_begin, host[e.id].acc_end} : std::pair{cmds[e.id].acc_begin, cmds[e.id].acc_end};
  }

  // "i = 2, k = 5" for a context (empty at top level).
  std::string describe(uint32_t ctx) const;
  // The value variable `var` has in context `ctx`, if it is bound there.
  std::optional<i128> value_in(uint32_t ctx, uint32_t var) const {
    for (uint32_t c = ctx; c != 0; c = contexts[c].parent)
      if (contexts[c].var == var) return contexts[c].value;
    return std::nullopt;
  }
};

// Binds params: explicit values by name; others take their smallest admissible value.
// Throws InputError for unknown names or values outside a param's constraints.
std::vector<i128> bind_params(const Program& p, const std::vector<std::pair<std::string, i128>>& values);

// Builds a Trace while a param-free program is being read, one top-level statement at a time, so
// large generated programs need not keep their batches in memory (TraceCmd::src and
// HostEvent::src stay null). Throws InputError like elaborate.
class TraceBuilder {
 public:
  TraceBuilder(const Program& p, size_t reserve_cmds);
  ~TraceBuilder();
  void statement(const Program& p, const Stmt& s);  // `p`: the program read so far
  Trace finish(const Program& p);
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Elaborates `p` under `binding`. Throws InputError.
Trace elaborate(const Program& p, const std::vector<i128>& binding, size_t max_events = kMaxEvents,
                bool symbolic = false);

}  // namespace qvet
