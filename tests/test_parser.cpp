#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/syntax/json_io.h"
#include "core/syntax/lexer.h"
#include "core/syntax/printer.h"
#include "helpers.h"

using namespace qvet;
using qvet::test::input_error;

namespace {

// The program's statements as JSON, without locations: equal exactly when the programs are.
nlohmann::json structure(const Program& p, const SourceSet& src) {
  return nlohmann::json::parse(write_json_program(p, src, false))["statements"];
}

// Every construct of language.md.
const char* kAll = R"(# every construct
device gpu0 nv
device gpu1 amd
device gpu2 strict
peer gpu0 gpu1
buffer a on gpu0 4K
buffer b on gpu1 2M
buffer h on host 1G
buffer t = a[0:2K]
buffer tt = t[256:0x400]
map b into gpu2
signal tl on host = 0
signal s1 on gpu1
signal kick on host = 2^31
map s1 into gpu2
queue c0 on gpu0 compute
queue x0 on gpu0 copy
queue c1 on gpu1 compute ordering overlap
queue c2 on gpu2 compute ordering chained
param tv >= 1
param k in 1..2^31
param n >= 1, <= 2^20
commands step(j, m) {
  wait kick >= j
  exec body reads a, b[0:1K] writes h[m:m + 16]
  signal tl = j
  timestamp tl
}
submit c0 {
  wait tl >= tv
  exec gemm reads a, tt writes t[0:256]
  signal tl = tv + 1
  barrier
  memory_barrier
}
submit x0 {
  copy a[0:1K] -> h[4K:5K]
}
submit c0 step(j = k + 2^20, m = 16)
wait tl >= 2*tv - 1
signal tl = 5
read h
write a[0:256]
repeat i in 0..3 {
  submit c1 {
    signal s1 = i
  }
  repeat r in 1..n {
    read h[i:i + 1]
  }
}
free a
alloc a
)";

}  // namespace

TEST_CASE("lexer: literals") {
  auto v = [](const char* s) { return lex_line(s, 1, 1)[0].value; };
  CHECK(v("4096") == 4096);
  CHECK(v("0x1000") == 4096);
  CHECK(v("4K") == 4096);
  CHECK(v("2M") == (2 << 20));
  CHECK(v("1G") == (1 << 30));
  CHECK(v("2^31") == (i128(1) << 31));
  CHECK(v("18446744073709551615") == kU64Max);
  CHECK_THROWS_AS(lex_line("18446744073709551616", 1, 1), InputError);
  CHECK_THROWS_AS(lex_line("2^64", 1, 1), InputError);
  CHECK_THROWS_AS(lex_line("4KB", 1, 1), InputError);
  CHECK_THROWS_AS(lex_line("0x", 1, 1), InputError);
  auto toks = lex_line("a[0..3] -> b # comment", 1, 1);
  CHECK(toks[3].kind == Tok::DotDot);
  CHECK(toks[6].kind == Tok::Arrow);
  CHECK(toks.back().kind == Tok::End);
  CHECK(toks.size() == 9);
}

TEST_CASE("parser: every construct of language.md parses") {
  CHECK(input_error(kAll) == "");
  SourceSet src;
  LoadResult r = load_program_text(src, "all.hcq", kAll);
  REQUIRE(r.program);
  const Program& p = *r.program;
  CHECK(p.devices.size() == 3);
  CHECK(p.buffers.size() == 5);
  CHECK(p.buffers[4].base == 0);  // tt is a view of a view of a
  CHECK(evaluate(p.buffers[4].base_lo, {}) == 256);
  CHECK(evaluate(p.buffers[4].base_hi, {}) == 1024);
  CHECK(p.signals[2].init.constant == (i128(1) << 31));
  CHECK(p.queues[2].ordering == Ordering::Overlap);
  CHECK(p.vars[1].range.hi == (i128(1) << 31));
  CHECK(p.lists[0].params.size() == 2);
  CHECK(p.maps.size() == 2);
  CHECK(p.peers.size() == 1);
}

TEST_CASE("printer: print is a fixed point and parse(print(p)) equals p") {
  SourceSet src;
  LoadResult r = load_program_text(src, "all.hcq", kAll);
  REQUIRE(r.program);
  std::string once = print_program(*r.program);
  LoadResult r2 = load_program_text(src, "printed.hcq", once);
  REQUIRE(r2.program);
  CHECK(print_program(*r2.program) == once);
  CHECK(structure(*r.program, src) == structure(*r2.program, src));
}

TEST_CASE("json: the IR round-trips through JSON - with source locations") {
  SourceSet src;
  LoadResult r = load_program_text(src, "all.hcq", kAll);
  REQUIRE(r.program);
  std::string json = write_json_program(*r.program, src);
  LoadResult back = load_program_text(src, "all.json", json);
  REQUIRE(back.program);
  CHECK(structure(*back.program, src) == structure(*r.program, src));
  CHECK(back.program->stmts[5].loc.line == r.program->stmts[5].loc.line);
  CHECK(print_program(*back.program) == print_program(*r.program));
}

TEST_CASE("json: every corpus program reads back from its JSON form as the same program") {
  namespace fs = std::filesystem;
  size_t n = 0;
  for (auto& entry : fs::directory_iterator(fs::path(QVET_SOURCE_DIR) / "corpus")) {
    if (entry.path().extension() != ".hcq") continue;
    CAPTURE(entry.path().string());
    std::ifstream in(entry.path());
    std::stringstream ss;
    ss << in.rdbuf();
    SourceSet src;
    LoadResult r = load_program_text(src, entry.path().string(), ss.str());
    REQUIRE(r.program);
    LoadResult back = load_program_text(src, "back.json", write_json_program(*r.program, src));
    REQUIRE(back.program);
    CHECK(print_program(*back.program) == print_program(*r.program));
    CHECK(structure(*back.program, src) == structure(*r.program, src));
    CHECK(back.program->expects.size() == r.program->expects.size());
    ++n;
  }
  CHECK(n > 100);
}

TEST_CASE("json: the static rules are the .hcq parser's (one builder)") {
  auto err = [](const std::string& stmts, const std::string& expect = "[]") {
    SourceSet src;
    LoadResult r = load_program_text(src, "t.json", "{\"format\": \"qvet-program\", \"statements\": [" + stmts +
                                                         "], \"expect\": " + expect + "}");
    return r.error ? r.error->message : std::string("(accepted)");
  };
  const std::string dev = "{\"kind\": \"device\", \"name\": \"g\", \"arch\": \"nv\"}";
  const std::string buf = "{\"kind\": \"buffer\", \"name\": \"a\", \"on\": \"g\", \"size\": \"4\"}";
  CHECK(err(dev + ", " + buf + ", {\"kind\": \"read\", \"range\": \"a[2:8]\"}") ==
        "range a[2:8] is out of bounds of 'a' (4 bytes)");
  CHECK(err(dev + ", " + dev) == "'g' is already declared");
  CHECK(err(dev + ", {\"kind\": \"buffer\", \"name\": \"b\", \"on\": \"g\", \"size\": \"0\"}") == "buffer size can be 0");
  CHECK(err("{\"kind\": \"param\", \"name\": \"n\", \"constraints\": [\">= 3\", \"<= 2\"]}") ==
        "param 'n' has no admissible value");
  CHECK(err("{\"kind\": \"param\", \"name\": \"n\", \"constraints\": []}") ==
        "invalid JSON program: 'constraints' must hold at least one constraint");
  CHECK(err(dev, "[{\"clean\": true}, {\"rule\": \"race\", \"lines\": [1]}]") ==
        "'# expect: clean' must stand alone, but the file has other expectations");
  CHECK(err(dev + ", " + buf + ", {\"kind\": \"commands\", \"name\": \"l\", \"params\": [\"o\"], \"body\": "
                "[{\"op\": \"exec\", \"kernel\": \"k\", \"reads\": [\"a[o:o+4]\"]}]}, "
                "{\"kind\": \"queue\", \"name\": \"q\", \"on\": \"g\", \"engine\": \"compute\"}, "
                "{\"kind\": \"submit_list\", \"queue\": \"q\", \"list\": \"l\", \"args\": [[\"o\", \"1\"]]}")
            .find("out of bounds of 'a' (4 bytes) when submitted at line") != std::string::npos);
}

TEST_CASE("json: errors in JSON input point at the statement's source line") {
  SourceSet src;
  std::string j = R"({"format": "qvet-program", "version": 1, "source": "x.hcq", "statements": [
    {"kind": "device", "name": "g", "arch": "nv", "loc": {"line": 1, "column": 1}},
    {"kind": "buffer", "name": "a", "on": "g", "size": "4K", "loc": {"line": 2, "column": 1}},
    {"kind": "read", "range": "zz", "loc": {"line": 7, "column": 1}}]})";
  LoadResult r = load_program_text(src, "x.json", j);
  REQUIRE(r.error);
  CHECK(r.error->loc.line == 7);
  CHECK(r.error->message.find("undeclared name 'zz'") != std::string::npos);
  LoadResult bad = load_program_text(src, "y.json", "{\"format\": \"qvet-program\", \n \"statements\": [}");
  REQUIRE(bad.error);
  CHECK(bad.error->loc.line == 2);
}

TEST_CASE("parser: expectations") {
  SourceSet src;
  LoadResult r = load_program_text(src, "e.hcq", "# expect: race@12,19\n#expect: deadlock@3 signal-race@4 race@c1.pm4:45,c0.pm4:7\ndevice g nv\n");
  REQUIRE(r.program);
  REQUIRE(r.program->expects.size() == 4);
  CHECK(r.program->expects[0].rule == "race");
  CHECK(r.program->expects[0].line2 == 19);
  CHECK(r.program->expects[2].line1 == 4);
  // A place may name the stream file its dword lies in (docs/encoded.md); a bare line names none.
  CHECK(r.program->expects[0].file1.empty());
  CHECK((r.program->expects[3].file1 == "c1.pm4" && r.program->expects[3].line1 == 45));
  CHECK((r.program->expects[3].file2 == "c0.pm4" && r.program->expects[3].line2 == 7));
  CHECK(input_error("# expect: race@:4\n").find("not a file name") != std::string::npos);
  CHECK(input_error("# expect: race@a/b.pm4:4\n").find("not a file name") != std::string::npos);
  CHECK(input_error("# expect: clean\n# expect: race@1\n") != "");
  CHECK(input_error("# expect: racy@1\n").find("unknown rule") != std::string::npos);
}

TEST_CASE("parser: every error class names its line") {
  struct Case {
    const char* text;
    const char* where_what;
  };
  const Case cases[] = {
      {"device g nv\nbuffer a on g 4K\nread zz\n", "3: undeclared name 'zz'"},
      {"device g nv\ndevice g amd\n", "2: 'g' is already declared"},
      {"device queue nv\n", "1: 'queue' is a reserved keyword"},
      {"device g nv\nbuffer a on g 4K\nread a[0:5K]\n", "3: range a[0:5K] is out of bounds"},
      {"device g nv\nbuffer a on g 4K\nread a[8:8]\n", "3: range a[8:8] is empty"},
      {"device g nv\nbuffer a on g 4K\nbuffer v = a[2K:5K]\n", "3: range a[2K:5K] is out of bounds"},
      {"device g nv\nbuffer a on g 4K\nqueue x on g copy\nsubmit x {\n  copy a[0:1K] -> a[1K:3K]\n}\n", "5: copy length mismatch"},
      {"device g nv\nparam n >= 1\nbuffer a on g n*n\n", "3: expression is not affine"},
      {"device g nv\nbuffer a on g 18446744073709551616\n", "2: integer literal is beyond 64 bits"},
      {"device g nv\nqueue c on g compute\nsubmit c {\n  barrier\n", "3: block opened here is never closed"},
      {"device g nv\n}\n", "2: stray '}'"},
      {"device g tpu\n", "1: unknown architecture 'tpu'"},
      {"device g nv\nqueue c on g video\n", "2: unknown engine 'video'"},
      {"device g nv\nqueue c on g compute ordering fast\n", "2: unknown ordering 'fast'"},
      {"device g nv\ncommands l(k) {\n  barrier\n}\nqueue c on g compute\nsubmit c l(j = 1)\n", "6: command list 'l' has no parameter 'j'"},
      {"device g nv\ncommands l(k) {\n  barrier\n}\nqueue c on g compute\nsubmit c l()\n", "6: missing argument 'k'"},
      {"device g nv\ncommands l(k) {\n  barrier\n}\nqueue c on g compute\nsubmit c l(k = 1, k = 2)\n", "6: argument 'k' is given twice"},
      {"device g nv\nbuffer a on g 4K\nbuffer v = a[0:1K]\nfree v\n", "4: free applies to base buffers"},
      {"device g nv\nbuffer a on g 4K\nfree a\nfree a\n", "4: 'a' is freed but is not live"},
      {"device g nv\nbuffer a on g 4K\nalloc a\n", "3: 'a' is allocated but is already live"},
      {"param n >= 5, <= 3\n", "1: param 'n' has no admissible value"},
      {"device g nv\nparam n in 1..10\nbuffer a on g 4K\nread a[0:n*1K]\n", "4: range a[0:1024*n] can be out of bounds"},
      {"device g nv\nrepeat i in 0..3 {\n  buffer a on g 4K\n}\n", "3: declarations belong at top level"},
      {"device g nv\nqueue q on g compute\nsubmit q {\n  signal s on host\n}\n", "4: declarations belong at top level"},
      {"device g nv\nbuffer a on g 4K\nexec k reads a\n", "3: 'exec' is a device command"},
      {"device g nv\nsignal s on host\nbuffer a on g 4K\nwait a >= 1\n", "4: 'a' is a buffer, not a signal"},
      {"device g nv\nqueue c on g compute\nsubmit c { barrier }\n", "3: '{' must end the line"},
      {"device g nv\nqueue c on g compute\nsubmit c {\n  barrier }\n", "4: expected end of line"},
      {"device g nv\x01\n", "1: non-text input"},
      {"device g nv\nqueue c on g compute\nsubmit c l(k = 1)\n", "3: undeclared name 'l'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    std::string got = input_error(c.text);
    std::string want = c.where_what;
    std::string line = want.substr(0, want.find(':'));
    CHECK(got.substr(0, got.find(':')) == line);
    CHECK(got.find(want.substr(want.find(':') + 2)) != std::string::npos);
  }
}

TEST_CASE("parser: deep nesting - long lines and binary garbage are input errors - not crashes") {
  std::string deep = "device g nv\n";
  for (int i = 0; i < 5000; ++i) deep += "repeat i" + std::to_string(i) + " in 0..1 {\n";
  CHECK(input_error(deep).find("nested too deeply") != std::string::npos);
  std::string parens = "param n >= " + std::string(10000, '(') + "1" + std::string(10000, ')') + "\n";
  CHECK(input_error(parens).find("nested too deeply") != std::string::npos);
  std::string longline(2 << 20, 'a');
  CHECK(input_error(longline + " b\n").find("1: unknown statement") == 0);
  std::string bin;
  for (int i = 0; i < 4096; ++i) bin += char((i * 7919) & 0xff);
  CHECK(input_error(bin).find("non-text input") != std::string::npos);
  CHECK(input_error("device g nv\nrepeat i in 0..2^40 {\n  signal s = 1\n}\n") != "");
}

TEST_CASE("parser: command-list ranges are checked with each submit's arguments") {
  const char* base = "device g nv\nbuffer a on g 4K\nqueue c on g compute\ncommands l(k) {\n  exec x reads a[k:k + 1K]\n}\n";
  CHECK(input_error(std::string(base) + "submit c l(k = 1K)\n") == "");
  CHECK(input_error(std::string(base) + "submit c l(k = 4K)\n").find("5: range a[4K:5K] is out of bounds") == 0);
}

TEST_CASE("expressions: exact integers - no intermediate value is silently capped") {
  const char* head = "device g nv\nparam v >= 1\nsignal s on host = 0\nqueue c on g compute\n";
  // Intermediates beyond 2^124 are refused where they arise; below it the arithmetic is exact.
  CHECK(input_error("device g nv\nbuffer a on g 4G*4G*4G*4G*4G - 4G*4G*4G*4G + 5\n").find("2: value too large") == 0);
  CHECK(input_error("device g nv\nbuffer a on g 4G*4G*4G - 4G*4G*4G + 4K\n") == "");
  CHECK(input_error("device g nv\nbuffer a on g 4G*4G*4G - 4G*4G + 4K\n").find("2: buffer size") == 0);
  CHECK(input_error(std::string(head) + "submit c {\n  signal s = 4G*4G*4G*4G*4G - 4G*4G*4G*4G + 5\n}\n").find("6: value too large") == 0);
  CHECK(input_error(std::string(head) + "submit c {\n  signal s = 2^63*2^63*v - 2^63*2^63*v\n}\n").find("6: value too large") == 0);
  // A list argument multiplies the body's coefficients: the product is checked at the submit.
  CHECK(input_error("device g nv\nsignal s on host = 0\nqueue c on g compute\ncommands l(k) {\n  signal s = 2^40*k\n}\n"
                    "submit c l(k = 2^60*2^60)\n")
            .find("5: value too large") == 0);
  // Values past 2^64 that the limit admits are the rule value-width, exact in the message.
  auto c = test::check(std::string(head) + "submit c {\n  signal s = 4G*4G*4G - 4G*4G*4G + 2^63*2\n  wait s >= 4G*4G*4G + 1\n}\n");
  REQUIRE(!c->input_error);
  std::string widths;
  for (auto& d : c->diags)
    if (d.rule == "value-width") widths += std::to_string(d.loc.line) + ": " + d.message.substr(0, d.message.find(" does")) + "\n";
  CHECK(widths == "6: signal value 18446744073709551616\n7: wait threshold 79228162514264337593543950337\n");
  // A threshold past 2^64 is not `redundant` (nor stale) because its truncation is 0.
  auto r = test::check(std::string(head) + "submit c {\n  wait s >= 2^63*2\n  signal s = 1\n}\n");
  CHECK(r->summary(true) == std::vector<std::string>{"value-width@6"});
  // Symbolic: 2^40*v for every v >= 1 is decided exactly (not capped at 2^64 or 2^120).
  auto sym = test::check(std::string(head) + "submit c {\n  signal s = 2^40*v - 2^40*v + v\n}\n");
  CHECK(sym->summary().empty());
}

TEST_CASE("printer: values past 2^64 print as expressions that parse back (no literal is that wide)") {
  SourceSet src;
  LoadResult r = load_program_text(src, "wide.hcq",
                                   "device g nv\nsignal tl on host\nqueue c on g compute\nsubmit c {\n  signal tl = 2^63*2 + 5\n}\n"
                                   "wait tl >= 4G*4G*4G - 3\n");
  REQUIRE(r.program);
  std::string once = print_program(*r.program);
  CHECK(once.find("(16*2^60 + 5)") != std::string::npos);
  LoadResult r2 = load_program_text(src, "printed.hcq", once);
  REQUIRE(r2.program);
  CHECK(print_program(*r2.program) == once);
}

// The stream binding's words (docs/encoded.md) are contextual, never reserved: programs that use
// them as names read as before.
TEST_CASE("parser: at, region, kernel, stream, file and args stay ordinary names") {
  const char* text = R"(device gpu0 amd
buffer at on gpu0 4K
buffer region on gpu0 4K at 0x10000
signal kernel on host = 0
signal stream on host at 0x20000
queue file on gpu0 compute
commands args(k) {
  exec region reads at writes region
  signal kernel = k
}
submit file args(k = 1)
submit file {
  exec kernel reads at
  wait stream >= 0
}
wait kernel >= 1
)";
  SourceSet src;
  LoadResult r = load_program_text(src, "words.hcq", text);
  REQUIRE(r.program);
  CHECK(r.program->buffers[0].name == "at");
  CHECK(r.program->signals[1].name == "stream");
  CHECK(r.program->lists[0].name == "args");
  // The binding is no part of the Program: it prints as the same program without its addresses.
  std::string printed = print_program(*r.program);
  CHECK(printed.find(" at 0x") == std::string::npos);
  LoadResult again = load_program_text(src, "printed.hcq", printed);
  REQUIRE(again.program);
  CHECK(print_program(*again.program) == printed);
}

TEST_CASE("parser: a stream named by a program read from memory resolves against the working directory, and '..' never") {
  SourceSet src;
  LoadResult r = load_program_text(src, "sub/p.hcq", "device g amd\nqueue c on g compute\nsubmit c stream amd-pm4 \"a/../../x.pm4\"\n");
  REQUIRE(r.error);
  CHECK(r.error->loc.line == 3);
  CHECK(r.error->message.find("'..'") != std::string::npos);
}
