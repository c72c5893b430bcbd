// Rule `engine`: `exec` and `memory_barrier` need a compute queue; a copy engine cannot run them.
#include "checkers/checker.h"

namespace qvet {

namespace {

class EngineRuleChecker : public Checker {
 public:
  using Checker::Checker;

  void finish() override {
    for (uint32_t id = 0; id < c_.t.cmds.size(); ++id) {
      const TraceCmd& c = c_.t.cmds[id];
      const Queue& q = c_.p.queues[c.queue];
      if (q.engine != EngineKind::Copy || (c.op != CmdOp::Exec && c.op != CmdOp::MemoryBarrier)) continue;
      Diagnostic d;
      d.set_rule(Rule::Engine);
      d.loc = c.loc;
      d.message = std::string("`") + cmd_op_name(c.op) + "` needs a compute queue, but '" + q.name + "' is a copy queue";
      d.fixes.push_back({"submit it to a compute queue of device " + c_.p.devices[q.device].name, {}});
      c_.sink.add(std::move(d), c.ctx);
    }
  }
};

}  // namespace

std::unique_ptr<Checker> make_engine_checker(const CheckContext& c) { return std::make_unique<EngineRuleChecker>(c); }

}  // namespace qvet
