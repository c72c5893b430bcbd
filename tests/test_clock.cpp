#include "model/clock.h"
#include "model/trace.h"

#include <doctest/doctest.h>

using qvet::Clock;

TEST_CASE("clock: ends in order extend the prefix - out of order become extras") {
  Clock c;
  c.add_end(0, 1);
  CHECK(c.knows(0, 1));
  CHECK_FALSE(c.knows(0, 0));
  c.add_end(0, 0);
  CHECK(c.done(0) == 2);
  CHECK_FALSE(c.knows(1, 0));
}

TEST_CASE("clock: join is union - meet is intersection") {
  Clock a, b;
  a.add_end(0, 0), a.add_end(0, 1), a.add_end(1, 3);
  b.add_end(0, 0), b.add_end(1, 0), b.add_end(1, 3);
  b.see_host(4);
  Clock j = a;
  j.join(b);
  CHECK(j.knows(0, 1));
  CHECK(j.knows(1, 0));
  CHECK(j.knows(1, 3));
  CHECK(j.knows_host(4));
  Clock m = a;
  m.meet(b);
  CHECK(m.knows(0, 0));
  CHECK_FALSE(m.knows(0, 1));
  CHECK_FALSE(m.knows(1, 0));
  CHECK(m.knows(1, 3));
  CHECK_FALSE(m.knows_host(0));
  CHECK(m.leq(a));
  CHECK(m.leq(b));
  CHECK_FALSE(a.leq(b));
}

TEST_CASE("clock: a front end that passed many waits knows them without an entry each") {
  // One queue: exec, wait, exec, wait, ... The execs may still run when the front end passes the
  // waits; the clock must know every wait and no exec, in constant room.
  qvet::Trace t;
  t.queue_cmds.resize(2);
  for (uint32_t i = 0; i < 200; ++i) {
    qvet::TraceCmd c{};
    c.queue = 0, c.index = i, c.op = i % 2 ? qvet::CmdOp::Wait : qvet::CmdOp::Exec;
    t.queue_cmds[0].push_back(uint32_t(t.cmds.size()));
    t.cmds.push_back(c);
  }
  qvet::TraceCmd other_cmd{};
  other_cmd.queue = 1, other_cmd.op = qvet::CmdOp::Exec;
  t.queue_cmds[1].push_back(uint32_t(t.cmds.size()));
  t.cmds.push_back(other_cmd);
  Clock fe(&t);
  for (uint32_t i = 1; i < 200; i += 2) fe.add_end(0, i);
  CHECK(fe.extras().empty());
  CHECK(fe.knows(0, 199));
  CHECK_FALSE(fe.knows(0, 198));
  CHECK(fe.done(0) == 0);
  Clock k = fe;  // an exec's end: the front end's knowledge and the exec itself
  k.add_end(0, 100);
  CHECK(k.extras().size() == 1);
  k.add_end(0, 0);  // the first exec ends: the prefix runs through the waits to the next exec
  CHECK(k.done(0) == 2);
  Clock m = k;
  m.meet(fe);
  CHECK(m.knows(0, 199));
  CHECK_FALSE(m.knows(0, 100));
  CHECK_FALSE(m.knows(0, 0));
  CHECK(m.leq(fe));
  CHECK(fe.leq(m));
  CHECK_FALSE(k.leq(fe));
  Clock other(&t);  // another queue's clock joins what it learned
  other.add_end(1, 0);
  other.join(k);
  CHECK(other.knows(0, 100));
  CHECK(other.knows(0, 51));
  CHECK(other.knows(1, 0));
  CHECK_FALSE(other.knows(0, 2));
}
