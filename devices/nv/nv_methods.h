// NVIDIA pushbuffer constants the decoder and encoder read and write: the method header, the host
// (channel) methods, the compute-class and copy-class methods, and the QMD bit positions, once.
// Sources (docs/encoded.md, "NVIDIA pushbuffers"), written from these layouts, not copied:
// - the method header and GPFIFO formats: NVIDIA open-gpu-kernel-modules
//   src/common/sdk/nvidia/inc/class/cl906f.h (NV906F_DMA_*, the SEC_OP and TERT_OP modes);
// - host methods: clc56f.h (AMPERE_CHANNEL_GPFIFO_A) as tinygrad vendors it (autogen/nv_gpu.py):
//   SEM_ADDR_LO..SEM_EXECUTE, NON_STALL_INTERRUPT, WFI, SET_OBJECT;
// - compute methods: clc6c0.h (AMPERE_COMPUTE_A): SEND_PCAS_A, SEND_SIGNALING_PCAS2_B,
//   INVALIDATE_SHADER_CACHES_NO_WFI, WAIT_FOR_IDLE, PM_TRIGGER, SET_SHADER_*; tinygrad uses the
//   same offsets for AMPERE_COMPUTE_B, ADA_COMPUTE_A and HOPPER_COMPUTE_A;
// - copy methods: clc6b5.h (AMPERE_DMA_COPY_A): LAUNCH_DMA and its fields, OFFSET_IN/OUT,
//   LINE_LENGTH_IN, SET_SEMAPHORE_A/B/PAYLOAD;
// - QMD layouts: open-gpu-doc classes/compute/clcbc0qmd.h (Hopper), which defines both
//   QMD V03_00 (the layout of Ampere's clc6c0qmd.h that tinygrad's NVC6C0_QMDV03_00_* fields
//   spell, bit for bit) and QMD V04_00.
#pragma once
#include <cstdint>

namespace qvet::nv {

// ---- the method header (cl906f.h, NV906F_DMA_*) --------------------------------------------
// bits 31:29 SEC_OP, 28:16 count (or immediate data), 15:13 subchannel, 11:0 method dword address.
inline uint32_t sec_op(uint32_t h) { return h >> 29; }
inline uint32_t count(uint32_t h) { return (h >> 16) & 0x1fffu; }
inline uint32_t tert_op(uint32_t h) { return (h >> 16) & 3u; }
inline uint32_t subchannel(uint32_t h) { return (h >> 13) & 7u; }
inline uint32_t method(uint32_t h) { return (h & 0xfffu) << 2; }  // a byte offset, as the class headers write methods
enum SecOp : uint32_t {
  kGrp0UseTert = 0,   // TERT_OP 0: the pre-Fermi incrementing format (unless the dword is 0: NOP); 1..3: sub-device masks
  kIncMethod = 1,     // COUNT data dwords to METHOD, METHOD + 4, ...
  kGrp2UseTert = 2,   // TERT_OP 0: the pre-Fermi non-incrementing format
  kNonIncMethod = 3,  // COUNT data dwords, all to METHOD
  kImmdDataMethod = 4,// one method, its 13-bit data in the count field, no data dword
  kOneInc = 5,        // the first data dword to METHOD, the rest to METHOD + 4
  kReserved6 = 6,
  kEndPbSegment = 7,  // the end of the pushbuffer segment
};
constexpr uint32_t kMaxMethod = 0xfffu << 2;
constexpr uint32_t header(SecOp op, uint32_t subc, uint32_t method, uint32_t count) {
  return uint32_t(op) << 29 | (count & 0x1fffu) << 16 | (subc & 7u) << 13 | ((method >> 2) & 0xfffu);
}
// A GPFIFO entry (two dwords): entry0 FETCH 0 (1: conditional), NO_CONTEXT_SWITCH 1, GET 31:2 (the
// segment's address bits 31:2); entry1 GET_HI 7:0 (bits 39:32), PRIV 8, LEVEL 9 (1: subroutine),
// LENGTH 30:10 (dwords; 0: a control entry whose OPCODE is 7:0), SYNC 31. tinygrad writes
// `addr | len << 42 | 1 << 41`.
constexpr uint32_t kGpFetchConditional = 1u, kGpLevelSubroutine = 1u << 9, kGpOpcodeNop = 0;
constexpr uint64_t kGpMaxLength = (1u << 21) - 1;
inline uint64_t gp_address(uint32_t e0, uint32_t e1) { return uint64_t(e1 & 0xffu) << 32 | (e0 & ~3u); }
inline uint32_t gp_length(uint32_t e1) { return (e1 >> 10) & 0x1fffffu; }
inline uint32_t gp_opcode(uint32_t e1) { return e1 & 0xffu; }
// tinygrad's subchannels: host methods on 0, the compute object on 1, the copy object on 4.
constexpr uint32_t kSubcHost = 0, kSubcCompute = 1, kSubcCopy = 4;

// ---- host methods (clc56f.h): methods below 0x100 reach the channel on any subchannel --------
constexpr uint32_t kHostMethodEnd = 0x100;
enum HostMethod : uint32_t {
  kSetObject = 0x000,  // data: NVCLASS 15:0, ENGINE 20:16
  kHostNop = 0x008,
  kNonStallInterrupt = 0x020,
  kSemAddrLo = 0x05c,  // OFFSET 31:2
  kSemAddrHi = 0x060,  // OFFSET 7:0 (address bits 39:32)
  kSemPayloadLo = 0x064,
  kSemPayloadHi = 0x068,
  kSemExecute = 0x06c,
  kWfi = 0x078,  // SCOPE 0:0 (0 current subcontext, 1 all)
};
// SEM_EXECUTE: OPERATION 2:0, ACQUIRE_SWITCH_TSG 12, RELEASE_WFI 20, PAYLOAD_SIZE 24 (1: 64-bit),
// RELEASE_TIMESTAMP 25, REDUCTION 30:27, REDUCTION_FORMAT 31.
inline uint32_t sem_operation(uint32_t v) { return v & 7u; }
enum SemOp : uint32_t { kSemAcquire = 0, kSemRelease = 1, kSemAcqStrictGeq = 2, kSemAcqCircGeq = 3, kSemAcqAnd = 4, kSemAcqNor = 5, kSemReduction = 6 };
constexpr uint32_t kSemAcquireSwitchTsg = 1u << 12, kSemReleaseWfi = 1u << 20, kSemPayload64 = 1u << 24, kSemReleaseTimestamp = 1u << 25;
constexpr uint32_t kSemReductionBits = 0x1fu << 27;
constexpr uint32_t kWfiScopeAll = 1;

// ---- classes (SET_OBJECT data) ---------------------------------------------------------------
constexpr uint32_t kAmpereComputeA = 0xc6c0, kAmpereComputeB = 0xc7c0, kAdaComputeA = 0xc9c0, kHopperComputeA = 0xcbc0;
constexpr uint32_t kAmpereDmaCopyA = 0xc6b5, kAmpereDmaCopyB = 0xc7b5, kHopperDmaCopyA = 0xc8b5;

// ---- compute-class methods (clc6c0.h) --------------------------------------------------------
enum ComputeMethod : uint32_t {
  kWaitForIdle = 0x0110,
  kPmTrigger = 0x0140,
  kSetShaderSharedMemoryWindowA = 0x02a0, kSetShaderSharedMemoryWindowB = 0x02a4,
  kSendPcasA = 0x02b4,  // QMD_ADDRESS_SHIFTED8 31:0
  kSendSignalingPcas2B = 0x02c0,  // PCAS_ACTION 3:0
  kSetShaderLocalMemoryNonThrottledA = 0x02e4, kSetShaderLocalMemoryNonThrottledB = 0x02e8, kSetShaderLocalMemoryNonThrottledC = 0x02ec,
  kSetShaderLocalMemoryA = 0x0790, kSetShaderLocalMemoryB = 0x0794,
  kSetShaderLocalMemoryWindowA = 0x07b0, kSetShaderLocalMemoryWindowB = 0x07b4,
  kInvalidateShaderCachesNoWfi = 0x1698,  // INSTRUCTION 0, GLOBAL_DATA 4, CONSTANT 12
};
// PCAS_ACTION values that schedule the QMD (the others do not launch it).
constexpr uint32_t kPcasSchedule = 2, kPcasInvalidateCopySchedule = 3, kPcasPrefetchSchedule = 9;
constexpr uint32_t kInvalidateAll = 1u << 0 | 1u << 4 | 1u << 12;
constexpr uint32_t kQmdAddressShift = 8;  // SEND_PCAS_A and DEPENDENT_QMD0_POINTER hold the QMD address >> 8

// ---- copy-class methods (clc6b5.h) -----------------------------------------------------------
enum CopyMethod : uint32_t {
  kSetSemaphoreA = 0x0240,  // UPPER 16:0
  kSetSemaphoreB = 0x0244,  // LOWER 31:0
  kSetSemaphorePayload = 0x0248,
  kLaunchDma = 0x0300,
  kOffsetInUpper = 0x0400, kOffsetInLower = 0x0404, kOffsetOutUpper = 0x0408, kOffsetOutLower = 0x040c,  // UPPER 16:0
  kPitchIn = 0x0410, kPitchOut = 0x0414,
  kLineLengthIn = 0x0418, kLineCount = 0x041c,
};
// LAUNCH_DMA: DATA_TRANSFER_TYPE 1:0, FLUSH_ENABLE 2, SEMAPHORE_TYPE 4:3, INTERRUPT_TYPE 6:5,
// SRC_MEMORY_LAYOUT 7 (1 pitch), DST_MEMORY_LAYOUT 8, MULTI_LINE_ENABLE 9, REMAP_ENABLE 10,
// FORCE_RMWDISABLE 11, SRC_TYPE 12 / DST_TYPE 13 (1 physical), SEMAPHORE_REDUCTION 17:14,
// REDUCTION_SIGN 18, REDUCTION_ENABLE 19, VPRMODE 23:22, FLUSH_TYPE 25, DISABLE_PLC 26.
inline uint32_t dma_transfer_type(uint32_t v) { return v & 3u; }
inline uint32_t dma_semaphore_type(uint32_t v) { return (v >> 3) & 3u; }
enum DmaTransfer : uint32_t { kTransferNone = 0, kTransferPipelined = 1, kTransferNonPipelined = 2 };
enum DmaSemaphore : uint32_t { kSemaphoreNone = 0, kSemaphoreOneWord = 1, kSemaphoreFourWord = 2, kSemaphoreConditionalIntr = 3 };
constexpr uint32_t kDmaFlushEnable = 1u << 2, kDmaSrcPitch = 1u << 7, kDmaDstPitch = 1u << 8;
// Fields a decoded LAUNCH_DMA may carry: the above, the interrupt type, the flush type, FORCE_RMWDISABLE and
// DISABLE_PLC (they change no byte the model sees). Any other bit set (multi-line, remap, physical addresses,
// reductions, VPR, reserved) is not decoded.
constexpr uint32_t kDmaDecodedBits = 3u | kDmaFlushEnable | 3u << 3 | 3u << 5 | kDmaSrcPitch | kDmaDstPitch | 1u << 11 | 1u << 25 | 1u << 26;
constexpr uint32_t kDmaCopy = kTransferNonPipelined | kDmaSrcPitch | kDmaDstPitch;  // tinygrad's 0x182

// ---- the QMD (clcbc0qmd.h): bit positions, bit 0 the first byte's lowest bit --------------------
struct Field {
  uint32_t lo, bits;
};
// QMD_MAJOR_VERSION lies at bits 583:580 in both layouts: the QMD says which it is.
constexpr Field kQmdMajorVersion{580, 4};
constexpr uint32_t kDependentActionSchedule = 1;  // DEPENDENT_QMD*_ACTION_QMD_SCHEDULE
// RELEASE*_STRUCTURE_SIZE: four words (payload + timestamp), one word (32-bit payload), two words (64-bit payload).
constexpr uint32_t kReleaseFourWords = 0, kReleaseOneWord = 1, kReleaseTwoWords = 2;
// The CUDA ABI (sm_70 to sm_90) puts the kernel parameters at c[0x0][0x160]: tinygrad writes a
// 0x160-byte driver prefix (cbuf_0) and then the arguments into constant buffer 0.
constexpr uint64_t kParamOffset = 0x160;

struct QmdLayout {
  uint32_t major;
  uint32_t bytes;
  Field dep_enable, dep_action, dep_prefetch, dep_pointer;
  Field dep1_enable;  // a second dependent QMD: not decoded
  Field rel_enable[2], rel_size[2], rel_payload64[2], rel_reduction[2];
  Field rel_addr_lo[2], rel_addr_hi[2], rel_payload_lo[2], rel_payload_hi[2];
  Field rel2_enable;  // a third release (Hopper's V03_00, V04_00): not decoded
  Field is_queue;     // V03: IS_QUEUE; V04: QMD_TYPE (GRID_CTA.. wanted)
  Field cb0_valid, cb0_addr_lo, cb0_addr_hi;
  uint32_t cb0_shift;  // V04 stores the constant buffer address >> 6
  Field prog_lo, prog_hi;
  Field grid[3], block[3];
};

// QMD V03_00 (Ampere, Ada; Hopper's first layout), 64 dwords.
constexpr QmdLayout kQmdV03{
    3, 256,
    {512, 1}, {513, 3}, {516, 1}, {480, 32},
    {517, 1},
    {{823, 1}, {951, 1}}, {{830, 2}, {958, 2}}, {{829, 1}, {957, 1}}, {{826, 1}, {954, 1}},
    {{768, 32}, {896, 32}}, {{800, 8}, {928, 8}}, {{832, 32}, {960, 32}}, {{864, 32}, {992, 32}},
    {1719, 1},
    {136, 1},
    {640, 1}, {1024, 32}, {1056, 17}, 0,
    {1536, 32}, {1568, 17},
    {{384, 32}, {416, 16}, {448, 16}}, {{592, 16}, {608, 16}, {624, 16}},
};
// QMD V04_00 (Hopper), 96 dwords.
constexpr QmdLayout kQmdV04{
    4, 384,
    {368, 1}, {369, 3}, {372, 1}, {448, 32},
    {373, 1},
    {{320, 1}, {336, 1}}, {{321, 2}, {337, 2}}, {{332, 1}, {348, 1}}, {{324, 1}, {340, 1}},
    {{640, 32}, {768, 32}}, {{672, 25}, {800, 25}}, {{704, 32}, {832, 32}}, {{736, 32}, {864, 32}},
    {352, 1},
    {23, 3},
    {416, 1}, {1536, 32}, {1568, 19}, 6,
    {1216, 32}, {1248, 25},
    {{1024, 32}, {1056, 16}, {1088, 16}}, {{1152, 16}, {1168, 16}, {1184, 16}},
};
constexpr uint32_t kQmdTypeGridCta = 2, kQmdTypeLastGrid = 5;  // V04 QMD_TYPE: 2..5 launch a grid

}  // namespace qvet::nv
