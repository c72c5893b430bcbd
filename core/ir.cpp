#include "core/ir.h"

namespace qvet {

std::string Program::line_text(const Loc& l) const {
  auto it = stream_files.find(l.file);
  return it == stream_files.end() ? "line " + std::to_string(l.line) : it->second + ":" + std::to_string(l.line);
}

std::vector<std::string> Program::var_names() const {
  std::vector<std::string> n;
  for (auto& v : vars) n.push_back(v.name);
  return n;
}

const char* arch_name(Arch a) { return a == Arch::Nv ? "nv" : a == Arch::Amd ? "amd" : "strict"; }
const char* engine_name(EngineKind e) { return e == EngineKind::Compute ? "compute" : "copy"; }
const char* ordering_name(Ordering o) {
  switch (o) {
    case Ordering::Default: return "default";
    case Ordering::Serial: return "serial";
    case Ordering::Overlap: return "overlap";
    case Ordering::Chained: return "chained";
  }
  return "default";
}
const char* cmd_op_name(CmdOp op) {
  static const char* n[] = {"wait", "signal", "timestamp", "exec", "copy", "barrier", "memory_barrier"};
  return n[int(op)];
}

}  // namespace qvet
