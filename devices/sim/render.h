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

std::string chrome_trace(const Trace& t, const ObservedRun& r, const SourceSet& src);
std::string timeline_svg(const Trace& t, const ObservedRun& r, const SourceSet& src);

}  // namespace qvet
