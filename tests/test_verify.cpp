// Verification for all param values, witnesses and repairs.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "verify/verify.h"
#include "verify/fix.h"
#include "core/syntax/parser.h"

using namespace qvet;

namespace {

struct Verified {
  SourceSet src;
  std::optional<Program> p;
  VerifyResult r;
};

std::unique_ptr<Verified> verify_text(const std::string& text, VerifyOptions o = {}) {
  auto v = std::make_unique<Verified>();
  LoadResult l = load_program_text(v->src, "t.hcq", text);
  REQUIRE(l.program);
  v->p = std::move(*l.program);
  v->r = verify_program(*v->p, o);
  return v;
}

std::string notes_of(const Diagnostic& d) {
  std::string s;
  for (auto& n : d.notes) s += n.message + "\n";
  return s;
}

const char* kTimeline =
    "device g nv\n"
    "buffer a on g 4K\n"
    "signal tl on host = 0\n"
    "param tv >= 0, <= 2^20\n"
    "queue c0 on g compute\n"
    "queue c1 on g compute\n"
    "submit c0 {\n"
    "  exec p writes a\n"
    "  signal tl = 5\n"
    "}\n"
    "submit c1 {\n"
    "  wait tl >= tv\n"
    "  exec u reads a\n"
    "}\n";

}  // namespace

TEST_CASE("verify: a finding that holds for some param values only carries a counterexample") {
  auto v = verify_text(kTimeline);
  bool race = false, deadlock = false;
  for (auto& d : v->r.diagnostics) {
    if (d.rule == "race") {
      race = true;
      CHECK(notes_of(d).find("with tv = 0") != std::string::npos);
    }
    if (d.rule == "deadlock") {
      deadlock = true;
      CHECK(notes_of(d).find("holds for some param values only") != std::string::npos);
    }
  }
  CHECK(race);      // tv = 0: the initial value satisfies the wait
  CHECK(deadlock);  // tv > 5: nothing reaches it
  CHECK(v->r.notes.size() == 1);
  CHECK(v->r.notes[0].find("holds for every admissible value") != std::string::npos);
}

TEST_CASE("verify: constraints that exclude the bad values make the program clean") {
  std::string text = kTimeline;
  text.replace(text.find("param tv >= 0, <= 2^20"), 22, "param tv in 1..5");
  auto v = verify_text(text);
  CHECK(v->r.diagnostics.empty());
}

TEST_CASE("verify: programs without params are checked once - without the solver") {
  auto v = verify_text("device g nv\nbuffer a on g 4K\nqueue c on g compute\nsubmit c {\n  exec k writes a\n}\n");
  CHECK(v->r.diagnostics.empty());
  CHECK(v->r.notes.empty());
}

TEST_CASE("verify: loop-bound params are unrolled and said to be") {
  auto v = verify_text(
      "device g nv\nbuffer h on host 4K\nbuffer a on g 4K\nsignal tl on host\nqueue x on g copy\nparam n in 1..8\n"
      "repeat i in 1..n {\n  write h\n  submit x {\n    copy h -> a\n    signal tl = i\n  }\n}\n");
  REQUIRE(v->r.diagnostics.size() == 1);
  CHECK(v->r.diagnostics[0].rule == "race");
  CHECK(notes_of(v->r.diagnostics[0]).find("n = 2") != std::string::npos);
  CHECK(v->r.notes.back().find("every admissible iteration count (8)") != std::string::npos);
}

TEST_CASE("verify: the iteration counts of a loop-bound param share one event budget") {
  const char* text =
      "device g nv\nbuffer h on host 4K\nbuffer a on g 4K\nsignal tl on host\nqueue x on g copy\nparam n in 1..40\n"
      "repeat i in 1..n {\n  write h\n  submit x {\n    copy h -> a\n    signal tl = i\n  }\n}\n";
  VerifyOptions o;
  o.event_budget = 400;  // counts 1..40 of 4 events per iteration: 3280 in all; 1, 40, 2..6 fit
  auto v = verify_text(text, o);
  REQUIRE(v->r.diagnostics.size() == 1);  // the race, found with the smallest count
  CHECK(notes_of(v->r.diagnostics[0]).find("n = 2") != std::string::npos);
  CHECK(v->r.notes.back().find("would pass the budget of 400 events") != std::string::npos);
  CHECK(v->r.notes.back().find("checked for 7 iteration counts") != std::string::npos);
  auto all = verify_text(text);
  CHECK(all->r.notes.back().find("every admissible iteration count (40)") != std::string::npos);
}

TEST_CASE("witness: every race in the corpus has a schedule in which its accesses overlap - or says why not") {
  namespace fs = std::filesystem;
  size_t races = 0;
  for (auto& entry : fs::directory_iterator(fs::path(QVET_SOURCE_DIR) / "corpus")) {
    if (entry.path().extension() != ".hcq") continue;
    std::ifstream in(entry.path());
    std::stringstream ss;
    ss << in.rdbuf();
    VerifyOptions o;
    o.witness = true;
    auto v = verify_text(ss.str(), o);
    for (auto& d : v->r.diagnostics) {
      if (d.rule != "race") continue;
      CAPTURE(entry.path().string());
      if (d.witness.empty()) {  // the engine's order for it is no execution: said, not invented
        bool said = false;
        for (auto& n : d.notes) said |= n.message.rfind("no witness schedule", 0) == 0;
        CHECK(said);
        continue;
      }
      ++races;
      // The two accesses: their starts both come before either end.
      std::vector<const ScheduleStep*> starts, ends;
      for (auto& st : d.witness)
        if (st.racing && st.event != "at") (st.event == "end" ? ends : starts).push_back(&st);
      for (auto& st : d.witness)
        if (st.racing && st.event == "at") starts.push_back(&st), ends.push_back(&st);
      REQUIRE(starts.size() == 2);
      REQUIRE(ends.size() == 2);
      for (auto* s : starts)
        for (auto* e : ends)
          if (s->loc != e->loc || s->event == "at") CHECK(s->time <= e->time);
    }
  }
  CHECK(races > 10);
}

TEST_CASE("fix: a missing cross-queue wait is added - and the result checks clean") {
  std::string text =
      "device g nv\nbuffer a on g 4K\nsignal tl on host\nqueue c0 on g compute\nqueue c1 on g compute\n"
      "submit c0 {\n  exec p writes a\n  signal tl = 1\n}\nsubmit c1 {\n  exec u reads a\n}\n";
  RepairResult r = repair_program("t.hcq", text, {});
  CHECK(r.clean);
  CHECK(r.irredundant);
  REQUIRE(r.applied.size() == 1);
  CHECK(r.fixed_text.find("  wait tl >= 1\n  exec u reads a") != std::string::npos);
  const std::string& diff = r.diff;
  CHECK(diff.find("+  wait tl >= 1") != std::string::npos);
  CHECK(diff.find("@@ -8,") != std::string::npos);
}

TEST_CASE("fix: findings that need a person are listed - not changed") {
  std::string text = "device g nv\ndevice h nv\nbuffer a on h 4K\nqueue c on g compute\nsubmit c {\n  exec k writes a\n}\n";
  RepairResult r = repair_program("t.hcq", text, {});
  CHECK_FALSE(r.clean);
  REQUIRE(r.unfixable.size() == 1);
  CHECK(r.unfixable[0].rule == "peer-access");
  CHECK(r.fixed_text == text);
}
