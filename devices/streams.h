// The binary stream formats qvet reads and writes (docs/encoded.md): one table, one entry per
// format, each with the queues it serves, its decoder and its encoder.
//
// Decoding: the parser reads the binding (core/stream.h) and a `submit Q stream FORMAT "FILE"`,
// finds the format here and calls `decode`; the commands it returns are read back through the
// parser's command grammar. Encoding (`qvet encode`, cli/encode.cpp): each concrete batch of a
// queue is handed to its format's `encode` with an EncodeSpace that places buffers, signals,
// kernels and memory regions at addresses; decoding the result gives the batch back.
//
// Decoders and encoders are pure (no files, no Program), depend on core/ only, and report input
// they cannot read as InputError at the dword, and commands they cannot write as CannotEncode.
#pragma once
#include <cstdint>
#include <map>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir.h"
#include "core/stream.h"

namespace qvet {

// Commands and byte ranges a program's streams may decode to in all (an implementation limit):
// 26 KB of nested indirect buffers, or a kernel of 2,000 pointer arguments launched 12,000 times,
// stay gigabytes away from memory's end.
constexpr uint64_t kMaxDecodedEvents = uint64_t(1) << 22;

struct StreamOptions {
  bool queue_overlap = false;       // the queue runs `ordering overlap` (declared, or earlier batches)
  EngineKind engine = EngineKind::Compute;  // the queue's engine (a format serving both may read them differently)
  std::vector<uint32_t> ignored;    // this format's packets accepted and skipped (`--ignore-packet`)
  uint64_t max_dwords = uint64_t(1) << 24;    // dwords decoded in all, indirect buffers included
  uint64_t max_commands = uint64_t(1) << 20;  // commands one stream decodes to
  // Commands and byte ranges this stream may decode to: what is left of the program's
  // kMaxDecodedEvents after its earlier streams (counted as made, before they are parsed).
  uint64_t max_events = kMaxDecodedEvents;
  Loc submit;  // the statement that submits the stream: where that limit is reported
};



struct StreamResult {
  std::vector<DecodedCommand> cmds;
  // Set when the stream itself says the queue overlaps (an AMD dispatch without its CS partial
  // flush): the queue must be `ordering overlap`. `unflushed` is the packet that says so, and
  // `overlap_why` says how ("the dispatch at dword 0x2c is not followed by ..., so they overlap").
  bool overlap = false;
  Loc unflushed;
  std::string overlap_why;
};

// A command as an encoder sees it: every value concrete, every range in base-buffer bytes.
struct ConcreteRange {
  uint32_t base = kNone;  // a base buffer
  uint64_t lo = 0, hi = 0;
};
struct ConcreteCommand {
  CmdOp op = CmdOp::Barrier;
  Loc loc;
  uint32_t signal = kNone;
  uint64_t value = 0;
  std::string kernel;  // Exec
  std::vector<ConcreteRange> reads, writes;  // Copy: reads[0] source, writes[0] destination
};

// The queue a batch is encoded for; `ordering` is the effective one (never Default).
struct EncodeQueue {
  Arch arch = Arch::Strict;
  EngineKind engine = EngineKind::Compute;
  Ordering ordering = Ordering::Serial;
};

// A command the format cannot carry (a value wider than its field, an exec on a copy engine):
// the encoder throws it and the batch stays `.hcq` text, with `why` reported.
struct CannotEncode {
  Loc loc;
  std::string why;
};

// Addresses and memory shared by the encoders of one program (cli/encode.cpp implements it).
class EncodeSpace {
 public:
  virtual ~EncodeSpace() = default;
  virtual uint64_t buffer_addr(uint32_t base) = 0;  // a base buffer's first byte
  virtual uint64_t signal_addr(uint32_t signal) = 0;  // its 64-bit value word (timestamp at + 8)
  // The code address of a kernel named like `name` whose arguments are `args`, bound on first use
  // (one binding per distinct name and argument list). `align` is the format's code alignment.
  virtual uint64_t kernel_addr(const std::string& name, const std::vector<StreamBinding::KernelArg>& args, uint64_t align) = 0;
  // A new memory region of `bytes.size()` bytes (kernel arguments, QMDs, indirect buffers),
  // aligned to `align`; `stem` says what it holds ("kargs", "qmd"; qvet encode puts every
  // region in one file, STEM.mem). Returns its address.
  virtual uint64_t add_region(std::string bytes, std::string_view stem, uint64_t align) = 0;
  // The bytes of the region at `addr`, to patch after adding it (chained QMDs); size fixed.
  virtual std::string& region(uint64_t addr) = 0;
};

struct StreamFormat {
  const char* name;  // as written after `stream`: "amd-pm4"
  Arch arch;         // the queues it serves: this arch, and the engines in `engines`
  uint8_t engines;   // 1 << EngineKind
  bool serves(Arch a, EngineKind e) const { return a == arch && (engines >> unsigned(e) & 1); }
  // What `--ignore-packet FORMAT:N` names: "opcode" (PM4, SDMA) or "method" (NVIDIA).
  const char* packet_word;
  uint32_t max_packet;  // the largest N
  // The name of a packet the decoder reads as a command or its ordering, which `--ignore-packet`
  // may not skip (skipping it would drop what the program does, silently); null for the others.
  const char* (*decoded_packet)(uint32_t packet);
  StreamResult (*decode)(const StreamBinding& b, std::string_view bytes, uint32_t file, const StreamOptions& opt);
  // One batch's commands to a stream. Throws CannotEncode.
  std::string (*encode)(const std::vector<ConcreteCommand>& cmds, const EncodeQueue& q, EncodeSpace& space);
};

// ---- shared by the decoders ----------------------------------------------------------------
// The binding looked up by address: ordered maps, so a lookup costs log n of the bound things.
class BindingIndex {
 public:
  explicit BindingIndex(const StreamBinding& b);
  const StreamBinding::Placed* signal_at(uint64_t addr) const;          // exact value-word address
  const StreamBinding::Placed* buffer_containing(uint64_t addr) const;
  const StreamBinding::Kernel* kernel_at(uint64_t code) const;
  const StreamBinding::Region* region_holding(uint64_t addr, uint64_t n) const;  // all of [addr, addr + n)
  // " reads a[0x0:0x1000] writes b[0x10:0x1000]" for kernel `k` whose 8-byte arguments lie at
  // `args` (a region's bytes): each pointer resolves to the buffer containing it, accessed for
  // the argument's extent or to the buffer's end. Throws InputError at `at` (message prefixed by
  // `what`) for arguments in no region or a pointer in no buffer.
  // The exec also reads the memory of its arguments and each block of `also_read` (NVIDIA: its
  // QMD) over its run: every buffer that overlaps them is read (a buffer declared over argument
  // memory is how a program names it; a host that rewrites it while the exec may run is a race).
  std::string kernel_access(const StreamBinding::Kernel& k, uint64_t args, const Loc& at, const std::string& what,
                            const std::vector<std::pair<uint64_t, uint64_t>>& also_read = {}) const;
  // The bytes of an indirect buffer at [addr, addr + n) and where they lie (the region's file and
  // the dword they start at, so that Locs count from the file's start). Throws InputError at `at`
  // when no region holds them or they are not dword-aligned in it.
  struct Indirect {
    std::string_view bytes;
    uint32_t file;
    uint64_t first_dword;
  };
  Indirect indirect(uint64_t addr, uint64_t n, const Loc& at, const std::string& what) const;
  // Appends "name[lo:hi]" to `list` (comma separated) for each buffer overlapping [addr, addr + n).
  void overlapping(uint64_t addr, uint64_t n, std::string& list) const;

 private:
  std::map<uint64_t, const StreamBinding::Placed*> signals_, buffers_;
  std::map<uint64_t, const StreamBinding::Kernel*> kernels_;
  std::map<uint64_t, const StreamBinding::Region*> regions_;
};

// The commands a decoder makes, one at a time: each with the command memory its packet lies in
// (DecodedCommand::fetched), counted against StreamOptions' limits (commands per stream, and
// commands and byte ranges left of the program's kMaxDecodedEvents).
class DecodedSink {
 public:
  static constexpr uint64_t kNotInMemory = UINT64_MAX;
  DecodedSink(const StreamOptions& opt, const BindingIndex& index) : opt_(opt), index_(index) {}
  // The packet being decoded: `bytes` bytes at address `addr` (kNotInMemory: a stream file, which
  // has no address).
  void at_packet(uint64_t addr, uint64_t bytes) { addr_ = addr, bytes_ = addr == kNotInMemory ? 0 : bytes; }
  // A command of that packet, located at `at`; throws InputError past a limit.
  DecodedCommand make(const Loc& at, std::string text);

 private:
  const StreamOptions& opt_;
  const BindingIndex& index_;
  uint64_t addr_ = 0, bytes_ = 0;
  uint64_t made_ = 0, events_ = 0;  // commands, and commands and byte ranges, made
};
// "dword 0x4 (byte 0x10)": the 0-based offset of the dword a decoded Loc (1-based line) names.
std::string at_dword(const Loc& l);
// Little-endian words of a byte string.
uint32_t dword_at(std::string_view bytes, uint64_t i);
void append_dword(std::string& out, uint32_t v);
inline uint32_t lo32(uint64_t v) { return uint32_t(v); }
inline uint32_t hi32(uint64_t v) { return uint32_t(v >> 32); }

// ---- shared by the encoders ----------------------------------------------------------------
// The command's value as a 32-bit field of the format, or CannotEncode naming the field.
uint32_t fits32(const ConcreteCommand& c, const char* field);
// CannotEncode when the queue runs `chained`, which `format` cannot say.
void refuse_chained(const std::vector<ConcreteCommand>& cmds, const EncodeQueue& q, const char* format);

const std::vector<StreamFormat>& stream_formats();
const StreamFormat* find_stream_format(std::string_view name);
// The format that serves a queue of this arch and engine, or nullptr (strict has none).
const StreamFormat* stream_format_for(Arch arch, EngineKind engine);

}  // namespace qvet
