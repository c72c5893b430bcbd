// AMD SDMA packet constants the copy-queue decoder reads and the encoder writes: opcodes, sub-ops,
// packet lengths and fields, every number once. Sources (docs/encoded.md, "AMD SDMA"): the packets
// tinygrad's ops_amd.py AMDCopyQueue emits (copy, signal, wait, timestamp, bind; GCR_REQ in older
// versions) and the field layouts of the Linux amdgpu SDMA packet headers it imports
// (navi10_sdma_pkt_open.h for SDMA 5.x, sdma_v6_0_0_pkt_open.h for 6.x); written from those
// layouts, not copied.
#pragma once
#include <cstdint>

namespace qvet::amd::sdma {

// Header (every packet): bits 7:0 op, bits 15:8 sub-op; bits 31:16 are per-packet fields. Most
// packets have a fixed length set by op and sub-op; NOP carries a count (bits 29:16).
inline uint32_t op(uint32_t h) { return h & 0xffu; }
inline uint32_t sub_op(uint32_t h) { return (h >> 8) & 0xffu; }
constexpr uint32_t header(uint32_t op, uint32_t sub_op = 0) { return op | sub_op << 8; }

enum Op : uint8_t {
  kNop = 0,
  kCopy = 1,
  kWrite = 2,  // not decoded (its length depends on its count)
  kIndirect = 4,
  kFence = 5,
  kTrap = 6,
  kSem = 7,        // not decoded; 3 dwords (skippable with --ignore-packet)
  kPollRegmem = 8,
  kCondExe = 9,    // not decoded; 5 dwords
  kAtomic = 10,    // not decoded
  kConstFill = 11, // not decoded; 5 dwords
  kPtePde = 12,    // not decoded
  kTimestamp = 13,
  kSrbmWrite = 14, // not decoded; 3 dwords
  kPreExe = 15,    // not decoded; 2 dwords
  kGpuvmInv = 16,  // not decoded
  kGcrReq = 17,
};
const char* op_name(uint32_t op);  // "POLL_REGMEM", or nullptr for ops the decoder does not know

constexpr uint32_t kSubCopyLinear = 0;
constexpr uint32_t kSubTimestampSet = 0, kSubTimestampGet = 1, kSubTimestampGetGlobal = 2;

// NOP: header count (bits 29:16) dwords follow it. A zero dword is a one-dword NOP (tinygrad's
// padding before an INDIRECT, and of a bound queue to 8 dwords).
inline uint32_t nop_count(uint32_t h) { return (h >> 16) & 0x3fffu; }

// COPY_LINEAR (7 dwords): header, count, parameter, src lo, src hi, dst lo, dst hi.
// Header flags: encrypt 16, tmz 18, cpv 19 (accepted, not read); backwards 25 and broadcast 27 (not decoded).
// Count: bits 29:0 hold bytes - 1 (SDMA 6; SDMA 5 has bits 21:0, the rest reserved). Parameter:
// byte swaps and cache policies (not read).
constexpr uint32_t kCopyLinearDwords = 7;
constexpr uint32_t kCopyBackwards = 1u << 25, kCopyBroadcast = 1u << 27;
constexpr uint32_t kCopyCountMask = 0x3fffffffu;
constexpr uint64_t kCopyMaxBytes = uint64_t(kCopyCountMask) + 1;  // 2^30: tinygrad's max_copy_size

// FENCE (4 dwords): header (bits 31:16 cache policy: mtype 18:16 etc., not read), addr lo, addr hi, data (32 bits).
constexpr uint32_t kFenceDwords = 4;
constexpr uint32_t kFenceMtypeUc = 3u << 16;  // encoder: MTYPE(3), as tinygrad writes on gfx10+

// TRAP (2 dwords): header, interrupt context (bits 27:0). Raises an interrupt only.
constexpr uint32_t kTrapDwords = 2;

// POLL_REGMEM (6 dwords): header, addr lo (or register), addr hi (or register), reference, mask,
// dw5 (poll interval bits 15:0, retry count bits 27:16; not read).
// Header: hdp_flush bit 26, func bits 30:28, mem_poll bit 31.
constexpr uint32_t kPollRegmemDwords = 6;
inline bool poll_hdp_flush(uint32_t h) { return (h >> 26) & 1u; }
inline uint32_t poll_func(uint32_t h) { return (h >> 28) & 7u; }
inline bool poll_mem(uint32_t h) { return h >> 31; }
constexpr uint32_t kPollHdpFlush = 1u << 26, kPollMem = 1u << 31;
constexpr uint32_t kFuncShift = 28;
constexpr uint32_t kFuncEqual = 3, kFuncGe = 5;  // the HDP flush polls ==; tinygrad's wait polls >=
constexpr uint32_t kPollDw5 = 4u | 0xfffu << 16;  // encoder: interval 4, retry count 0xfff (tinygrad's)

// TIMESTAMP GET_GLOBAL (3 dwords): header, addr lo (bits 31:3: 8-byte aligned), addr hi.
constexpr uint32_t kTimestampDwords = 3;

// INDIRECT (6 dwords): header (vmid bits 19:16, not read), base lo (32-byte aligned), base hi,
// ib size in dwords (bits 19:0), CSA addr lo, CSA addr hi (not read).
constexpr uint32_t kIndirectDwords = 6;
inline uint32_t ib_size_dwords(uint32_t dw) { return dw & 0xfffffu; }
constexpr uint64_t kIndirectAlign = 32;

// GCR_REQ (5 dwords, SDMA 5.x/6.x): header, base VA, GCR control | base VA hi, limit VA, limit VA hi | vmid.
// Cache write-back/invalidate requests (older tinygrad brackets each copy with two): not read.
constexpr uint32_t kGcrReqDwords = 5;

// Packets not decoded whose length is fixed, so that --ignore-packet amd-sdma:OP can skip them.
constexpr uint32_t kSemDwords = 3, kCondExeDwords = 5, kConstFillDwords = 5, kSrbmWriteDwords = 3, kPreExeDwords = 2;

}  // namespace qvet::amd::sdma
