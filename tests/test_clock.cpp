#include "model/clock.h"

#include <doctest/doctest.h>

using qvet::Clock;

TEST_CASE("clock: ends in order extend the prefix - out of order become extras") {
  Clock c(2);
  c.add_end(0, 1);
  CHECK(c.knows(0, 1));
  CHECK_FALSE(c.knows(0, 0));
  c.add_end(0, 0);
  CHECK(c.done(0) == 2);
  CHECK_FALSE(c.knows(1, 0));
}

TEST_CASE("clock: join is union - meet is intersection") {
  Clock a(2), b(2);
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
