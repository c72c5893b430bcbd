// Files in and out: atomic writes, reading what is not a file, JSON positions and field checks,
// SARIF URIs, carets far past a line.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "core/atomic_file.h"
#include "core/diagnostic.h"
#include "core/render.h"
#include "core/syntax/json_positions.h"
#include "core/syntax/parser.h"

using namespace qvet;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A fresh directory under /tmp, removed with its files when the test ends.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/qvet-test-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

std::string json_error(const std::string& text) {
  SourceSet src;
  LoadResult r = load_program_text(src, "t.json", text);
  return r.error ? format_loc(r.error->loc, src) + ": " + r.error->message : "";
}

// One diagnostic at `loc`.
Diagnostic at(Loc loc, const char* rule = "race") {
  Diagnostic d;
  d.rule = rule;
  d.message = "m";
  d.loc = loc;
  return d;
}

}  // namespace

TEST_CASE("atomic write: replaces the target whole, keeps its mode, leaves no temporary file") {
  TempDir d;
  std::string target = d.path + "/out.hcq", error;
  REQUIRE(write_file_atomic(target, "first\n", error));
  ::chmod(target.c_str(), 0640);
  REQUIRE(write_file_atomic(target, "second\n", error));
  CHECK(slurp(target) == "second\n");
  struct stat st {};
  ::stat(target.c_str(), &st);
  CHECK((st.st_mode & 0777) == 0640);
  CHECK(std::system(("test $(ls -A '" + d.path + "' | wc -l) = 1").c_str()) == 0);
}

TEST_CASE("atomic write: a failure names the file and the reason and changes nothing") {
  TempDir d;
  std::string error;
  CHECK_FALSE(write_file_atomic(d.path + "/no/such/out.hcq", "x", error));
  CHECK(error == "cannot write '" + d.path + "/no/such/out.hcq': No such file or directory");
  CHECK_FALSE(write_file_atomic(d.path, "x", error));
  CHECK(error.find("Is a directory") != std::string::npos);
  CHECK_FALSE(write_file_atomic("", "x", error));
}

TEST_CASE("atomic write: a device is written in place, never replaced") {
  std::string error;
  CHECK(write_file_atomic("/dev/null", "discarded", error));
  struct stat st {};
  ::stat("/dev/null", &st);
  CHECK(S_ISCHR(st.st_mode));
}

TEST_CASE("read_file: a directory and a missing file are errors with the reason") {
  TempDir d;
  std::string text, error;
  CHECK_FALSE(read_file(d.path, text, &error));
  CHECK(error == "cannot read file: Is a directory");
  CHECK_FALSE(read_file(d.path + "/missing.hcq", text, &error));
  CHECK(error == "cannot open file: No such file or directory");
  SourceSet src;
  LoadResult r = load_program(src, d.path);
  REQUIRE(r.error);
  CHECK(format_loc(r.error->loc, src) == d.path);
}

TEST_CASE("read_regular_file: only regular files within the size cap") {
  TempDir d;
  std::string text;
  CHECK_FALSE(read_regular_file("/dev/zero", 1 << 20, text));
  CHECK_FALSE(read_regular_file(d.path, 1 << 20, text));
  std::string fifo = d.path + "/f.hcq";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_FALSE(read_regular_file(fifo, 1 << 20, text));  // and it does not block
  std::string small = d.path + "/s.hcq", error;
  REQUIRE(write_file_atomic(small, "device g nv\n", error));
  CHECK(read_regular_file(small, 100, text));
  CHECK(text == "device g nv\n");
  CHECK_FALSE(read_regular_file(small, 5, text));
}

TEST_CASE("parser: keywords do not name kernels") {
  for (const char* k : {"copy", "writes", "reads", "device", "exec"}) {
    SourceSet src;
    std::string text = "device g nv\nbuffer b on g 4K\nqueue q on g compute\nsubmit q {\n  exec " + std::string(k) + " writes b\n}\n";
    LoadResult r = load_program_text(src, "k.hcq", text);
    REQUIRE(r.error);
    CHECK(r.error->loc.line == 5);
    CHECK(r.error->message == "'" + std::string(k) + "' is a reserved keyword and cannot name a kernel");
  }
}

TEST_CASE("json: structural errors are located in the JSON text") {
  CHECK(json_error("{\"format\": 1}") == "t.json:1:12: JSON input is not a qvet program (expected \"format\": \"qvet-program\")");
  CHECK(json_error("{\"format\": \"qvet-program\",\n \"statements\": 5}") == "t.json:2:16: invalid JSON program: 'statements' must be an array");
  CHECK(json_error("{\"format\": \"qvet-program\", \"statements\": [\n {\"kind\": \"device\", \"name\": \"g\"}]}") ==
        "t.json:2:2: invalid JSON program: missing field 'arch'");
  CHECK(json_error("{\"format\": \"qvet-program\", \"statements\": [],\n \"expect\": [{\"rule\": \"race\", \"lines\": [1, 2, 3]}]}") ==
        "t.json:2:39: invalid JSON program: 'lines' must hold one or two line numbers");
  CHECK(json_error("{\"format\": \"qvet-program\",\n\n  \"statements\": [}") .rfind("t.json:3:18: invalid JSON: ", 0) == 0);
}

TEST_CASE("json: fields are checked token by token before the builder reads them") {
  const std::string head = "{\"format\": \"qvet-program\", \"statements\": [{\"kind\": \"device\", \"name\": \"g\", \"arch\": \"nv\"}, ";
  auto stmt_error = [&](const std::string& stmt) { return json_error(head + stmt + "]}"); };
  CHECK(stmt_error("{\"kind\": \"read\", \"range\": \"a, b\"}").find("'range' must be a buffer or a range") != std::string::npos);
  CHECK(stmt_error("{\"kind\": \"read\", \"range\": \"a writes b\"}").find("'range' must be") != std::string::npos);
  CHECK(stmt_error("{\"kind\": \"signal_decl\", \"name\": \"s\", \"on\": \"host\"}, {\"kind\": \"wait\", \"signal\": \"s\", \"value\": \"1 # x\"}").find("'value' must be an expression") != std::string::npos);
  CHECK(stmt_error("{\"kind\": \"free\", \"object\": \"repeat\"}").find("'object' must be a name") != std::string::npos);
  CHECK(stmt_error("{\"kind\": \"param\", \"name\": \"n\", \"constraints\": [\"in 1..2, >= 0\"]}").find("'constraints' must hold") !=
        std::string::npos);
  // Well-formed fields reach the builder (the .hcq parser's rules), which reports at the JSON node when it has no "loc".
  CHECK(stmt_error("{\"kind\": \"read\", \"range\": \"zz[0:4]\"}") == "t.json:1:90: undeclared name 'zz'");
}

TEST_CASE("json positions: objects, fields and duplicate keys") {  // duplicates: no positions, only the key
  std::string text = "{\"a\": [1, {\"b\": 2}],\n \"c\": {\"d\": \"x\", \"d\": \"y\"}}";
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(text);
  JsonPositions pos(text, j, 7);
  auto [at, key] = pos.duplicate_key();
  CHECK(at == Loc{7, 2, 18});
  CHECK(key == "d");
  std::string clean = "{\"a\": [1, {\"b\": 2}],\n \"c\": {\"d\": \"x\"}}";
  nlohmann::ordered_json k = nlohmann::ordered_json::parse(clean);
  JsonPositions p2(clean, k, 7);
  CHECK(p2.of(k["a"][1]) == Loc{7, 1, 11});
  CHECK(p2.of_field(k["a"][1], "b") == Loc{7, 1, 17});
  CHECK(p2.of(k["c"]) == Loc{7, 2, 7});
  CHECK(p2.of_field(k, "c") == Loc{7, 2, 7});
  CHECK_FALSE(p2.duplicate_key().first.valid());
}

TEST_CASE("render: SARIF URIs are normalized, relative and percent-encoded") {
  CHECK(sarif_uri(".//sub/x.hcq") == "sub/x.hcq");
  CHECK(sarif_uri("./x.hcq") == "x.hcq");
  CHECK(sarif_uri("a b%.hcq") == "a%20b%25.hcq");
  CHECK(sarif_uri("bad\xff.hcq") == "bad%FF.hcq");
  CHECK(sarif_uri("c:x.hcq") == "c%3Ax.hcq");  // never read as a URI scheme
  CHECK(sarif_uri("../up.hcq") == "../up.hcq");
  CHECK(sarif_uri("/nowhere/x.hcq") == "/nowhere/x.hcq");
}

TEST_CASE("render: JSON and SARIF output stay UTF-8 for a file name that is not") {
  SourceSet src;
  Diagnostic d = at({src.add("bad\xff\xfe.hcq", "device g nv\n"), 1, 1});
  CHECK(render_json({d}, src).find("bad\xef\xbf\xbd\xef\xbf\xbd.hcq") != std::string::npos);
  CHECK(render_sarif({d}, src).find("bad%FF%FE.hcq") != std::string::npos);
}

TEST_CASE("render: a caret far past the end of its line stays on the line") {
  SourceSet src;
  Diagnostic d = at({src.add("c.hcq", "read a\n"), 1, 4000000000u}, "input");
  CHECK(render_text({d}, src) == "c.hcq:1:4000000000: error: m\n  read a\n        ^\n");
}
