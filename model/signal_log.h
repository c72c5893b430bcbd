// The writes of a signal: one record per device or host `signal`, kept by the engine per signal in
// each writer's order (Engine::writes). The wait rule (model/wait_rule.h) and the checkers read
// them; the engine fills in what a write knows once it is processed.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "model/clock.h"
#include "model/trace.h"

namespace qvet {

// One write of a signal (a device `signal` at its end, or a host `signal`).
struct SignalWrite {
  EventRef event;
  uint32_t agent;   // queue id, or kHostAgent
  uint32_t signal;  // the signal it writes
  uint64_t value;  // the word after the write; before it is processed, an upper bound of it
  bool narrow = false;  // a 32-bit write: it replaces the low half and keeps the word's high half
  bool processed = false;
  bool follows_all_prev = false;  // once processed: every earlier write of its agent happens before it
  std::shared_ptr<const Clock> end;  // what the write knows, itself included; set once processed
  uint32_t pos = 0;  // its agent's place among the signal's writers (Engine's per-signal lists)
  uint32_t rank = 0;  // once processed: its place in the signal's processing order
  // Once processed, where its end knows few queues (`covered`): per other agent whose writes of
  // the signal it knows, the last of them (indices into the signal's writes). Its end knows no
  // other agent's write but these and the ones before them (Engine::unknown_writers).
  bool covered = false;
  std::vector<uint32_t> cover;
};

}  // namespace qvet
