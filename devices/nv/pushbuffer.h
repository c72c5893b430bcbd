// The NVIDIA pushbuffer format `nv` (docs/encoded.md, "NVIDIA pushbuffers"): little-endian method
// dwords, as tinygrad's NVComputeQueue and NVCopyQueue write them, decoded into device commands of
// the .hcq language, and the encoder that writes them.
//
// decode_nv walks method headers (every SEC_OP mode the hardware defines: incrementing,
// non-incrementing, increment-once, immediate data; the pre-Fermi formats, sub-device masks and
// the reserved mode are refused), tracks the class each subchannel is bound to (SET_OBJECT), and
// decodes host semaphores (waits, WFI releases), compute launches (SEND_PCAS_A +
// SEND_SIGNALING_PCAS2_B: the QMD, read from a region, names the program and constant buffer 0,
// its release slots are the signals after the exec, its dependent QMD the next exec of the chain),
// cache invalidations, waits for idle, and copy-engine LAUNCH_DMA transfers and semaphores. Each
// command is located at its method's data dword (1-based, in the file it lies in; a chained exec
// and a QMD release at the QMD's dword in its region). Anything it cannot decode honestly throws
// InputError at that dword. Pure: no files, no Program.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "devices/streams.h"

namespace qvet::nv {

// Throws InputError. `result.overlap` is set when a launch follows an exec with neither
// dependent-QMD chaining nor a wait for idle between (the two kernels overlap, which the chained
// mode cannot say); `unflushed` is that launch.
// The name of a method decode_nv reads (host, compute or copy class; not NOP), for --ignore-packet.
const char* decoded_method(uint32_t m);
StreamResult decode_nv(const StreamBinding& b, std::string_view bytes, uint32_t file, const StreamOptions& opt = {});

// The GPFIFO format `nv-gpfifo`: 8-byte entries, each naming a pushbuffer segment (a region) that is
// decoded as decode_nv does, one channel state across segments; located in the segments' files.
StreamResult decode_nv_gpfifo(const StreamBinding& b, std::string_view bytes, uint32_t file, const StreamOptions& opt = {});

// What an encoding targets: the compute class and QMD layout (3: V03_00, 4: V04_00, Hopper only),
// the copy class.
struct NvTarget {
  uint32_t compute_class = 0xcbc0;  // HOPPER_COMPUTE_A
  uint32_t qmd_major = 3;           // tinygrad writes QMD V03_00 on every pre-Blackwell GPU
  uint32_t copy_class = 0xc8b5;     // HOPPER_DMA_COPY_A
};

// One batch of an nv compute or copy queue as tinygrad lowers it (semantics.md's notes,
// docs/encoded.md): a SET_OBJECT, then host SEM acquires for waits, QMD release slots or WFI
// releases for signals, QMDs launched or chained for execs, INVALIDATE_SHADER_CACHES_NO_WFI for a
// memory_barrier, a host WFI for a barrier; LAUNCH_DMA for copies and copy-engine semaphores for
// signals on a copy queue. Throws CannotEncode for what the format cannot carry.
std::string encode_nv(const std::vector<ConcreteCommand>& cmds, const EncodeQueue& q, EncodeSpace& space);
// encode_nv's pushbuffer in a new region, and one GPFIFO entry (LEVEL subroutine, as tinygrad) naming it.
std::string encode_nv_gpfifo(const std::vector<ConcreteCommand>& cmds, const EncodeQueue& q, EncodeSpace& space);
std::string encode_nv_for(const std::vector<ConcreteCommand>& cmds, const EncodeQueue& q, EncodeSpace& space, const NvTarget& t);

}  // namespace qvet::nv
