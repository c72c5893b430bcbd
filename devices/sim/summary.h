// What `qvet sim` prints: the runs of one Trace aggregated into findings that point at source
// lines like `check`'s (races seen as overlapping conflicting accesses or as reads that saw
// different versions in different runs, hangs) and the distribution of final signal values.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "core/source.h"
#include "devices/observed.h"
#include "model/trace.h"

namespace qvet {

class SimSummary {
 public:
  explicit SimSummary(const Trace& t);
  void add(const ObservedRun& r);  // needs the run's `seen` versions for the writers it names
  std::string text(const SourceSet& src) const;
  size_t races() const;
  size_t hangs() const { return hangs_.size(); }
  size_t unacquired() const { return unacquired_.size(); }

 private:
  std::string where(EventRef e, const SourceSet& src) const;
  uint32_t line(EventRef e) const;
  const Trace& t_;
  std::vector<EventRef> owner_;
  size_t runs_ = 0;
  // Findings merge over loop iterations, as `check`'s do, and a pair of commands is one race
  // whatever the buffers they share: (line, line) -> an example pair of events, the buffers, runs.
  struct Pair {
    uint64_t a = 0, b = 0;
    std::set<uint32_t> buffers;
    size_t runs = 0;
  };
  std::map<std::pair<uint32_t, uint32_t>, Pair> overlaps_;
  std::vector<std::set<uint64_t>> digests_;      // per read access: fingerprints seen (at most 2 kept)
  std::vector<std::set<uint32_t>> writers_;      // per read access: Version codes seen
  std::map<uint32_t, std::pair<uint64_t, size_t>> hangs_;  // wait line -> (a wait event, runs it hung in)
  // (read line, write line) -> ((read, write) events, runs): reads of other agents' data with no acquire
  std::map<std::pair<uint32_t, uint32_t>, std::pair<std::pair<uint64_t, uint64_t>, size_t>> unacquired_;
  std::vector<std::map<uint64_t, size_t>> finals_;  // per signal: value -> runs
};

}  // namespace qvet
