#include "cli/files.h"

#include "core/atomic_file.h"
#include "core/input_error.h"
#include "core/render.h"
#include "verify/verify.h"

namespace qvet::cli {

bool write_output(const std::string& path, std::string_view data, bool replaces_input) {
  std::string error;
  if (write_file_atomic(path, data, error, replaces_input)) return true;
  std::cerr << "qvet: error: " << error << "\n";
  return false;
}

int report_input_error(const Diagnostic& d, const SourceSet& src, std::ostream& err) {
  err << render_text({d}, src);
  return 2;
}

bool load_streamed(SourceSet& src, const std::string& file, std::string text, const Args& a, int& rc,
                   std::optional<Program>& keep, Trace& t, std::ostream& err) {
  double elaborate_s = 0;
  size_t bytes = text.size();
  std::optional<Diagnostic> error;
  Stopwatch whole;
  bool ok = qvet::load_streamed(src, file, std::move(text), a.load, keep, t, error, &elaborate_s);
  if (a.stats) {
    double total = whole.lap();
    err << "stats: parse " << total - elaborate_s << " s (" << double(bytes) / 1e6 / (total - elaborate_s) << " MB/s), elaborate "
        << elaborate_s << " s\n";
  }
  if (!ok) rc = report_input_error(*error, src, err);
  return ok;
}

bool load_elaborated(SourceSet& src, const Args& a, std::optional<Program>& p, Trace& t, int& rc) {
  std::string text, error, name = a.files[0] == "-" ? "<stdin>" : a.files[0];
  if (!read_file(a.files[0], text, &error)) {
    rc = report_input_error(input_diagnostic({{src.add(name, ""), 0, 0}, error}), src);
    return false;
  }
  if (streamable(text)) return load_streamed(src, name, std::move(text), a, rc, p, t);
  LoadResult r = load_program_text(src, name, std::move(text), nullptr, a.load);
  if (!r.program) {
    rc = report_input_error(*r.error, src);
    return false;
  }
  p = std::move(*r.program);
  try {
    t = elaborate(*p, bind_params(*p, a.params));
  } catch (const InputError& e) {
    Diagnostic d = input_diagnostic(e);
    if (!d.loc.file) d.loc.file = p->file;
    rc = report_input_error(d, src);
    return false;
  }
  return true;
}

}  // namespace qvet::cli
