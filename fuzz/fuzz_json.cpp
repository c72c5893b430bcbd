// libFuzzer target for qvet's JSON program input (docs/json.md): any bytes, read as a JSON
// file. A program that loads must print as .hcq and as JSON, and both must read back to the
// same program; it then goes through elaboration (capped) and every checker, and its findings
// through every renderer (JSON and SARIF must stay valid UTF-8). Invalid input must end in an
// InputError whose rendering stays small (a caret far past a line's end).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "checkers/checker.h"
#include "core/render.h"
#include "core/syntax/json_io.h"
#include "core/syntax/parser.h"
#include "core/syntax/printer.h"

namespace {

void render_all(const std::vector<qvet::Diagnostic>& ds, const qvet::SourceSet& src) {
  if (render_text(ds, src).size() > (size_t(1) << 24)) __builtin_trap();
  render_json(ds, src);
  render_sarif(ds, src);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qvet;
  SourceSet src;
  uint32_t file = src.add("fuzz.json", std::string(reinterpret_cast<const char*>(data), size));
  std::optional<Program> p;
  try {
    p = read_json_program(src, file);  // JSON whatever the first byte
  } catch (const InputError& e) {
    render_all({input_diagnostic(e)}, src);
    return 0;
  }
  std::string hcq = print_program(*p);
  LoadResult from_hcq = load_program_text(src, "printed.hcq", hcq);
  if (!from_hcq.program || print_program(*from_hcq.program) != hcq) __builtin_trap();
  LoadResult from_json = load_program_text(src, "printed.json", write_json_program(*p, src));
  if (!from_json.program || print_program(*from_json.program) != hcq) __builtin_trap();
  try {
    Trace t = elaborate(*p, bind_params(*p, {}), 20000);
    render_all(check_trace(t).diagnostics, src);
  } catch (const InputError&) {
  }
  return 0;
}
