// One observed run drawn for people: the Chrome trace-event JSON that Perfetto and
// chrome://tracing open, and a self-contained SVG timeline. Both put each queue on its own
// track (split into lanes where its commands overlap, since a track's slices must nest), each
// command as a slice from its start to its end, the host's statements as instants, an arrow
// from each signal write to the wait it released, and the accesses that overlapped marked as races.
#pragma once
#include <string>

#include "core/source.h"
#include "devices/observed.h"
#include "model/trace.h"

namespace qvet {

// `title`: which run this is and what it shows (the SVG's heading; the trace's `otherData`).
std::string chrome_trace(const Trace& t, const ObservedRun& r, const SourceSet& src, const std::string& title = "one run");
std::string timeline_svg(const Trace& t, const ObservedRun& r, const SourceSet& src, const std::string& title = "one run");
// The first thing a run shows that a user looks for: "race between line X and line Y", "hang at
// line X", or empty when it shows neither.
std::string run_finding(const Trace& t, const ObservedRun& r);

}  // namespace qvet
