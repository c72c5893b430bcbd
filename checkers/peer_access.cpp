// Rule `peer-access`: a device command touches memory (buffers or signals) owned by another
// device without a `peer` between the devices or a `map` of that memory into the device. A copy
// touches both its ends; host memory is reachable by every device. Applies to every command,
// also those that never run.
#include "checkers/checker.h"

namespace qvet {

namespace {

class PeerAccessChecker : public Checker {
 public:
  using Checker::Checker;

  void finish() override {
    const Program& p = c_.p;
    for (uint32_t id = 0; id < c_.t.cmds.size(); ++id) {
      const TraceCmd& c = c_.t.cmds[id];
      uint32_t dev = p.queues[c.queue].device;
      for (uint32_t a = c.acc_begin; a < c.acc_end; ++a) {
        uint32_t b = c_.t.accesses[a].buffer;
        check(id, dev, p.buffers[b].owner, {ObjectRef::Buffer, b}, p.buffers[b].name, p.buffers[b].loc);
      }
      if (c.signal != kNone) check(id, dev, p.signals[c.signal].owner, {ObjectRef::Signal, c.signal}, p.signals[c.signal].name, p.signals[c.signal].loc);
    }
  }

 private:
  bool reachable(uint32_t dev, uint32_t owner, ObjectRef obj) const {
    if (owner == kHostAgent || owner == dev) return true;
    for (auto [a, b] : c_.p.peers)
      if ((a == dev && b == owner) || (b == dev && a == owner)) return true;
    for (auto& [o, d] : c_.p.maps)
      if (o == obj && d == dev) return true;
    return false;
  }
  void check(uint32_t id, uint32_t dev, uint32_t owner, ObjectRef obj, const std::string& name, Loc decl) {
    if (reachable(dev, owner, obj)) return;
    const Program& p = c_.p;
    Diagnostic d;
    d.set_rule(Rule::PeerAccess);
    d.loc = c_.t.cmds[id].loc;
    d.message = c_.what({false, id}) + " on device " + p.devices[dev].name + " touches '" + name + "', memory of device " +
                p.devices[owner].name + ", which is not mapped into " + p.devices[dev].name;
    d.related.push_back({decl, "'" + name + "' is declared on " + p.devices[owner].name + " here"});
    d.fixes.push_back({"declare `peer " + p.devices[dev].name + " " + p.devices[owner].name + "` or `map " + name + " into " +
                           p.devices[dev].name + "`", {}});
    c_.sink.add(std::move(d), c_.t.cmds[id].ctx);
  }
};

}  // namespace

std::unique_ptr<Checker> make_peer_access_checker(const CheckContext& c) { return std::make_unique<PeerAccessChecker>(c); }

}  // namespace qvet
