// The engine's writer index (model/engine.h, Engine::index_): per signal, the writers ordered by
// what they can offer a wait. Apart from engine.h because GCC's order-statistics tree takes a
// second to parse, and only the engine's own files use it.
#pragma once
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include <ext/pb_ds/assoc_container.hpp>
#include <ext/pb_ds/tree_policy.hpp>

#include "model/engine.h"

namespace qvet {

// (value, place in by_agent_), counting its members at least a value in O(log n).
using CountedSet = __gnu_pbds::tree<std::pair<uint64_t, uint32_t>, __gnu_pbds::null_type, std::less<>, __gnu_pbds::rb_tree_tag,
                                    __gnu_pbds::tree_order_statistics_node_update>;

struct WriterIndex {
  std::set<std::pair<uint64_t, uint32_t>> done, done32;  // the largest value written so far, per writer
  CountedSet pending, pending32;                        // the largest value still to come from a live writer
  // Those a wait of width `narrow` (32-bit: low halves) reads.
  const std::set<std::pair<uint64_t, uint32_t>>& done_at(bool narrow) const { return narrow ? done32 : done; }
  const CountedSet& pending_at(bool narrow) const { return narrow ? pending32 : pending; }
};

struct WriterIndexes {
  std::vector<WriterIndex> per_signal;
};

inline WriterIndex& Engine::writer_index(uint32_t signal) const { return index_->per_signal[signal]; }

}  // namespace qvet
