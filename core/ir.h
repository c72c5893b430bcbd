// The qvet IR: what a queue program declares and what its host does, independent of the syntax
// it was read from (.hcq text, JSON, later decoded PM4/SDMA or NVIDIA pushbuffer streams).
//
// A Program owns everything by value; references between nodes are indices into the Program's
// tables (devices, buffers, signals, queues, vars, lists), so a Program can be copied, compared
// and serialised without pointer fix-ups. Every node carries the Loc it came from.
// The Program keeps the source's structure (repeat loops, command lists with arguments); the
// flattened, concrete form that the model executes is model/trace.h.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/expr.h"
#include "core/source.h"

namespace qvet {

constexpr uint32_t kHostAgent = UINT32_MAX;  // owner of host memory; agent id of the host
constexpr uint32_t kNone = UINT32_MAX;

enum class Arch : uint8_t { Nv, Amd, Strict };
enum class EngineKind : uint8_t { Compute, Copy };
enum class Ordering : uint8_t { Default, Serial, Overlap, Chained };  // Default: the profile's

const char* arch_name(Arch a);
const char* engine_name(EngineKind e);
const char* ordering_name(Ordering o);

struct Device {
  std::string name;
  Arch arch = Arch::Strict;
  Loc loc;
};

// A base buffer (owner is a device or the host) or a view of another buffer.
struct Buffer {
  std::string name;
  Loc loc;
  uint32_t owner = kHostAgent;  // device index or kHostAgent (for views: the base's owner)
  Expr size;                    // bytes (for views: hi - lo)
  uint32_t parent = kNone;      // views: the buffer this is a view of, as written
  Expr lo, hi;                  // views: the range of the parent, as written
  uint32_t base = kNone;        // the base buffer (itself for base buffers)
  Expr base_lo, base_hi;        // this buffer's bytes within its base
  bool is_view() const { return parent != kNone; }
};

struct Signal {
  std::string name;
  Loc loc;
  uint32_t owner = kHostAgent;
  Expr init;  // 0 unless declared with `= EXPR`
  bool init_written = false;
};

struct Queue {
  std::string name;
  Loc loc;
  uint32_t device = 0;
  EngineKind engine = EngineKind::Compute;
  Ordering ordering = Ordering::Default;  // an explicit `ordering` override, or Default
};

struct Constraint {
  enum Kind : uint8_t { Ge, Le, In } kind = Ge;
  Expr a, b;  // In: a..b
};

// A symbolic variable: a `param`, a `repeat` variable or a command-list parameter.
struct Var {
  enum Kind : uint8_t { Param, Loop, ListParam } kind = Param;
  std::string name;
  Loc loc;
  std::vector<Constraint> constraints;  // params only
  Interval range{0, kU64Max};           // every value the variable can take (params: admissible values)
};

// A memory object: buffers and signals both are memory (map, free, alloc name either).
struct ObjectRef {
  enum Kind : uint8_t { Buffer, Signal } kind = Buffer;
  uint32_t id = kNone;
  friend bool operator==(const ObjectRef&, const ObjectRef&) = default;
};

// `b` or `b[lo:hi]`, as written and resolved to bytes of the base buffer.
struct Range {
  Loc loc;
  uint32_t buffer = kNone;  // as written (may be a view)
  bool whole = true;        // a bare name
  Expr lo, hi;              // as written, relative to `buffer` (whole: 0..size)
  uint32_t base = kNone;    // resolved: bytes [buffer.base_lo + lo, buffer.base_lo + hi) of this base
};

enum class CmdOp : uint8_t { Wait, Signal, Timestamp, Exec, Copy, Barrier, MemoryBarrier };
const char* cmd_op_name(CmdOp op);

// A device command. Copy: reads[0] is the source, writes[0] the destination.
struct Command {
  CmdOp op = CmdOp::Barrier;
  Loc loc;
  uint32_t signal = kNone;  // Wait, Signal, Timestamp
  Expr value;               // Wait threshold, Signal value
  uint32_t kernel = kNone;  // Exec: index into Program::kernels
  std::vector<Range> reads, writes;
};

struct CommandList {
  std::string name;
  Loc loc;
  std::vector<uint32_t> params;  // Var ids (kind ListParam)
  std::vector<Command> body;
};

enum class StmtKind : uint8_t {
  // declarations
  Device, Peer, Map, Buffer, SignalDecl, Queue, Param, CommandList,
  // host statements
  Submit, SubmitList, Wait, Signal, Read, Write, Free, Alloc, Repeat
};

// One top-level line (or block) of the program, in source order.
struct Stmt {
  StmtKind kind = StmtKind::Wait;
  Loc loc;
  uint32_t id = kNone;    // Device/Buffer/SignalDecl/Queue/Param/CommandList: the declared index;
                          // Submit/SubmitList: queue; Wait/Signal: signal; Repeat: loop var
  uint32_t id2 = kNone;   // Peer: second device; Map: device; SubmitList: command list
  ObjectRef object;       // Map, Free, Alloc
  Expr value;             // Wait threshold, Signal value
  Range range;            // Read, Write
  std::vector<Command> cmds;                          // Submit
  std::vector<std::pair<uint32_t, Expr>> args;        // SubmitList: (list param var, value)
  Expr lo, hi;                                        // Repeat bounds (inclusive)
  std::vector<Stmt> body;                             // Repeat
};

// `# expect:` items. Clean stands alone; otherwise rule@line[,line2].
struct Expectation {
  Loc loc;
  bool clean = false;
  std::string rule;
  uint32_t line1 = 0, line2 = 0;  // line2 == 0: a one-line expectation
  // `RULE@FILE:LINE`: the line (a dword number) lies in the file of that name (directories aside),
  // a stream the program submits (docs/encoded.md); empty: any file.
  std::string file1, file2;
};

struct Program {
  uint32_t file = 0;  // the SourceSet file this program was read from
  std::vector<Device> devices;
  std::vector<Buffer> buffers;
  std::vector<Signal> signals;
  std::vector<Queue> queues;
  std::vector<Var> vars;
  std::vector<CommandList> lists;
  std::vector<std::string> kernels;
  std::vector<std::pair<uint32_t, uint32_t>> peers;  // symmetric device pairs
  std::vector<std::pair<ObjectRef, uint32_t>> maps;  // (memory, device it is mapped into)
  std::vector<Stmt> stmts;
  std::vector<Expectation> expects;
  // The stream and region files that decoded commands' Locs point into (docs/encoded.md): their
  // SourceSet index and name without directories, for messages that name another command.
  std::map<uint32_t, std::string> stream_files;
  // Where the program first binds bytes to names (an `at`, `kernel` or `region`: docs/encoded.md);
  // line 0 when it binds none.
  Loc binding;

  std::vector<std::string> var_names() const;
  // "line 12" in messages, or "c0.pm4:45" for a command decoded from a stream (its file and dword).
  std::string line_text(const Loc& l) const;
  std::string object_name(ObjectRef o) const {
    return o.kind == ObjectRef::Buffer ? buffers[o.id].name : signals[o.id].name;
  }
};

}  // namespace qvet
