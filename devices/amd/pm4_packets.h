// AMD PM4 packet constants the compute decoder reads: opcodes, register offsets and fields.
// Every number of the decoder lives here, once. Sources (docs/encoded.md): the packet layouts
// tinygrad's ops_amd.py emits (AMDComputeQueue: wait_reg_mem, acquire_mem, release_mem,
// memory_barrier, exec, signal, timestamp, bind) and the values of the amd_gpu/pm4 headers it
// uses (Linux amdgpu nvd.h / soc15d.h); written from those layouts, not copied.
#pragma once
#include <cstdint>

namespace qvet::amd::pm4 {

// Header: bits 31:30 packet type; type 3: bits 29:16 body dwords - 1, bits 15:8 opcode.
constexpr uint32_t kType2Filler = 0x80000000u;
inline uint32_t type(uint32_t h) { return h >> 30; }
inline uint32_t body_dwords(uint32_t h) { return ((h >> 16) & 0x3fffu) + 1; }
inline uint32_t opcode(uint32_t h) { return (h >> 8) & 0xffu; }
inline bool predicated(uint32_t h) { return h & 1u; }  // PREDICATE: the packet may not execute
constexpr uint32_t header(uint32_t op, uint32_t body) { return (3u << 30) | ((body - 1) << 16) | (op << 8); }

enum Op : uint8_t {
  kNop = 0x10,
  kDispatchDirect = 0x15,
  kWaitRegMem = 0x3c,
  kIndirectBuffer = 0x3f,
  kEventWrite = 0x46,
  kReleaseMem = 0x49,
  kAcquireMem = 0x58,
  kSetShReg = 0x76,
};
const char* op_name(uint32_t op);  // "WAIT_REG_MEM", or nullptr for opcodes the decoder does not know

// WAIT_REG_MEM body (6 dwords): info, addr lo | reg, addr hi | reg_done, reference, mask, poll interval.
inline uint32_t wrm_function(uint32_t info) { return info & 7u; }
inline uint32_t wrm_mem_space(uint32_t info) { return (info >> 4) & 3u; }
inline uint32_t wrm_operation(uint32_t info) { return (info >> 6) & 3u; }
constexpr uint32_t kWrmFunctionGe = 5;  // >=
constexpr uint32_t kWrmSpaceRegister = 0, kWrmSpaceMemory = 1;
constexpr uint32_t kWrmOpWait = 0, kWrmOpWriteWait = 1;  // write the register, then wait on reg_done (HDP flush)
constexpr uint32_t kWaitRegMemBody = 6;
constexpr uint32_t kPollInterval = 4;  // the poll interval tinygrad writes into WAIT_REG_MEM
// The HDP flush the encoder writes (gfx11 NBIO: GPU_HDP_FLUSH_REQ/DONE dword offsets); the decoder
// accepts any register-space write-and-wait as the flush.
constexpr uint32_t kRegHdpFlushReq = 0x106, kRegHdpFlushDone = 0x107;

// RELEASE_MEM body (7 dwords): event | cache actions, selects, addr lo, addr hi, data lo, data hi, ctx id.
inline uint32_t event_type(uint32_t dw) { return dw & 0x3fu; }
inline uint32_t event_index(uint32_t dw) { return (dw >> 8) & 0xfu; }
inline uint32_t rm_data_sel(uint32_t dw) { return (dw >> 29) & 7u; }
inline uint32_t rm_dst_sel(uint32_t dw) { return (dw >> 16) & 3u; }
constexpr uint32_t kEventIndexEndOfPipe = 5;
constexpr uint32_t kEventCacheFlushAndInvTs = 0x14;     // a signal's event type (tinygrad's; the decoder requires it)
constexpr uint32_t kReleaseCacheActions = 0x3fu << 12;  // encoder: the GCR write-back/invalidate bits tinygrad sets
constexpr uint32_t kReleaseIntSel = 3u << 24;             // encoder: interrupt select, as tinygrad writes it
constexpr uint32_t kDataSelNone = 0, kDataSel32Low = 1, kDataSel64 = 2, kDataSelGpuClock = 3;
constexpr uint32_t kReleaseMemBody = 7;

// ACQUIRE_MEM body: 7 dwords (gfx10+: 0, size lo, size hi, addr lo, addr hi, poll, GCR flags) or
// 6 (gfx9: coher flags, size lo, size hi, addr lo, addr hi, poll). Its fields are not read.
constexpr uint32_t kAcquireMemBodyGfx9 = 6, kAcquireMemBody = 7;

// EVENT_WRITE body (1 dword): event type | index << 8.
constexpr uint32_t kEventCsPartialFlush = 7;
constexpr uint32_t kEventIndexCsPartialFlush = 4;
// ACQUIRE_MEM's GCR control (gfx10+ body dword 6): the full invalidate and write-back a memory
// barrier needs (tinygrad: gli, glm, glk, glv, gl1, gl2 invalidates and the write-backs), and the
// form before a dispatch (GLI/GL2 left out). The coherence range (size lo, size hi bits 23:0,
// base lo, base hi: body dwords 1..4) must be everything for a memory barrier.
constexpr uint32_t kAcquireGcrFull = 0x3ff, kAcquireGcrDispatch = 0x0f0;
constexpr uint32_t kAcquireSizeLoAll = 0xffffffffu, kAcquireSizeHiAll = 0xffffffu;

// SET_SH_REG body: register offset from 0x2c00 (bits 15:0), then one value per register.
constexpr uint32_t kRegComputePgmLo = 0x20c, kRegComputePgmHi = 0x20d;
constexpr uint32_t kRegComputeUserData0 = 0x240, kUserDataRegs = 16;  // COMPUTE_USER_DATA_0..15
constexpr uint32_t kCodeAddressShift = 8;  // COMPUTE_PGM_LO/HI hold the code address >> 8

// DISPATCH_DIRECT body (4 dwords): x, y, z, initiator.
constexpr uint32_t kDispatchDirectBody = 4;
constexpr uint32_t kDispatchInitiator = 1u << 0 | 1u << 2 | 1u << 15;  // COMPUTE_SHADER_EN | FORCE_START_AT_000 | CS_W32_EN

// INDIRECT_BUFFER body (3 dwords): addr lo (4-byte aligned), addr hi (bits 15:0), control
// (bits 19:0 the size in dwords, bit 20 CHAIN: the caller does not resume, bit 23 VALID).
constexpr uint32_t kIndirectBufferBody = 3;
inline uint32_t ib_size_dwords(uint32_t control) { return control & 0xfffffu; }
inline bool ib_chain(uint32_t control) { return control >> 20 & 1u; }
inline bool ib_valid(uint32_t control) { return control >> 23 & 1u; }

}  // namespace qvet::amd::pm4
