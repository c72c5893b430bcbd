// libqvet's C interface (include/qvet/qvet.h) over the same front end, verifier and renderers as
// `qvet check`: a program is .hcq or JSON text (built line by line or given whole), checked by
// verify_program. Every entry point catches what the C++ side throws and turns it into a status.
#include "qvet/qvet.h"

#include <algorithm>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "core/input_error.h"
#include "core/render.h"
#include "core/syntax/option_values.h"
#include "core/syntax/parser.h"
#include "verify/verify.h"

struct qvet_program {
  std::string name = "<program>";
  std::string text;
  std::vector<std::string> tags;  // per line (1-based: tags[line - 1]); "" where none
  std::string error;
};

struct qvet_options {
  qvet::VerifyOptions verify;
  bool werror = false;
};

struct qvet_result {
  qvet_status status = QVET_OK;
  std::string error, json;
  std::vector<qvet::Diagnostic> diags;
  std::vector<std::string> tags;  // the program's, for qvet_diag_tag
  uint32_t file = 0;              // the program's file (not a stream's or region's)
  bool werror = false;
};

namespace {

using qvet::Diagnostic;

// Sets `error` to `text`; where even that cannot be allocated, to nothing (never throws).
void set_error(std::string& error, const char* text) noexcept {
  try {
    error = text;
  } catch (...) {
    error.clear();
  }
}

// Runs `f`, turning anything thrown into a status and a message in `error`.
template <class F>
qvet_status guarded(std::string& error, F&& f) noexcept {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    set_error(error, "out of memory");
  } catch (const std::exception& e) {
    try {
      error = std::string("internal error: ") + e.what();
    } catch (...) {
      set_error(error, "internal error");
    }
  } catch (...) {
    set_error(error, "internal error");
  }
  return QVET_INTERNAL;
}

// The tag of a line of the program's own file (`file`), or null (a stream's, a region's line).
const std::string* tag_of(const std::vector<std::string>& tags, uint32_t file, const qvet::Loc& at) {
  return at.file == file && at.line >= 1 && at.line <= tags.size() && !tags[at.line - 1].empty() ? &tags[at.line - 1] : nullptr;
}

// "name:line:col: message", with the tag of its line where it has one.
std::string located(const qvet::SourceSet& src, const std::string& name, uint32_t file, const Diagnostic& d,
                    const std::vector<std::string>& tags) {
  std::string out = d.loc.file ? src.name(d.loc.file) : name;
  if (d.loc.line) out += ":" + std::to_string(d.loc.line) + (d.loc.col ? ":" + std::to_string(d.loc.col) : "");
  out += ": " + d.message;
  if (const std::string* t = tag_of(tags, d.loc.file ? d.loc.file : file, d.loc)) out += " (the line added at " + *t + ")";
  return out;
}

const Diagnostic* diag(const qvet_result* r, size_t i) { return r && i < r->diags.size() ? &r->diags[i] : nullptr; }

}  // namespace

extern "C" {

const char* qvet_version(void) { return QVET_VERSION; }
int qvet_abi(void) { return QVET_ABI; }

qvet_program* qvet_program_new(const char* name) {
  qvet_program* p = new (std::nothrow) qvet_program;
  if (p && name) {
    try {
      p->name = name;
    } catch (...) {
      delete p;
      return nullptr;
    }
  }
  return p;
}

void qvet_program_free(qvet_program* p) { delete p; }

qvet_status qvet_program_parse(qvet_program* p, const char* text, size_t length) {
  if (!p) return QVET_BAD_CALL;
  return guarded(p->error, [&] {
    if (!text && length) return p->error = "qvet_program_parse: text is NULL", QVET_BAD_CALL;
    p->text.assign(text ? text : "", length);
    p->tags.assign(size_t(std::count(p->text.begin(), p->text.end(), '\n')), std::string());
    p->error.clear();
    qvet::SourceSet src;
    qvet::LoadResult r = qvet::load_program_text(src, p->name, p->text);
    if (r.program) return QVET_OK;
    p->error = located(src, p->name, 1, *r.error, p->tags);  // (the program is the set's first file)
    return QVET_INVALID_INPUT;
  });
}

qvet_status qvet_program_add(qvet_program* p, const char* line, const char* tag) {
  if (!p) return QVET_BAD_CALL;
  return guarded(p->error, [&] {
    if (!line) return p->error = "qvet_program_add: line is NULL", QVET_BAD_CALL;
    if (p->text.find_first_not_of(" \t\r\n") != std::string::npos && p->text[p->text.find_first_not_of(" \t\r\n")] == '{')
      return p->error = "qvet_program_add: a JSON program is not extended line by line", QVET_BAD_CALL;
    std::string l(line);
    if (l.find_first_of("\n\r") != std::string::npos)
      return p->error = "qvet_program_add: one line at a time (the line holds a line break)", QVET_BAD_CALL;
    // (A program parsed whole has a tag, empty, per line: tags stay one per line.)
    if (!p->text.empty() && p->text.back() != '\n') p->text += '\n', p->tags.emplace_back();
    p->text += l + '\n';
    p->tags.push_back(tag ? tag : "");
    p->error.clear();
    return QVET_OK;
  });
}

const char* qvet_program_error(const qvet_program* p) { return p ? p->error.c_str() : ""; }

qvet_options* qvet_options_new(void) { return new (std::nothrow) qvet_options; }
void qvet_options_free(qvet_options* o) { delete o; }

qvet_status qvet_options_set_rules(qvet_options* o, const char* rules) {
  if (!o || !rules) return QVET_BAD_CALL;
  std::string dummy;
  return guarded(dummy, [&] {
    std::vector<std::string> list;
    std::string unknown;
    if (!qvet::parse_rule_list(rules, list, unknown)) return QVET_BAD_CALL;
    o->verify.rules = std::move(list);
    return QVET_OK;
  });
}

qvet_status qvet_options_set_param(qvet_options* o, const char* name, const char* value) {
  if (!o || !name || !value) return QVET_BAD_CALL;
  std::string dummy;
  return guarded(dummy, [&] {
    qvet::i128 v = 0;
    if (!qvet::parse_integer(value, v)) return QVET_BAD_CALL;
    o->verify.fixed.push_back({name, v});
    return QVET_OK;
  });
}

qvet_status qvet_options_set_werror(qvet_options* o, int werror) {
  if (!o) return QVET_BAD_CALL;
  o->werror = werror != 0;
  return QVET_OK;
}

qvet_status qvet_options_set_witness(qvet_options* o, int witness) {
  if (!o) return QVET_BAD_CALL;
  o->verify.witness = witness != 0;
  return QVET_OK;
}

qvet_result* qvet_check(const qvet_program* p, const qvet_options* o) {
  qvet_result* r = new (std::nothrow) qvet_result;
  if (!r) return nullptr;
  r->status = guarded(r->error, [&] {
    if (!p) return r->error = "qvet_check: program is NULL", QVET_BAD_CALL;
    r->tags = p->tags;
    r->werror = o && o->werror;
    qvet::SourceSet src;
    qvet::LoadResult l = qvet::load_program_text(src, p->name, p->text);
    if (!l.program) return r->error = located(src, p->name, 1, *l.error, p->tags), QVET_INVALID_INPUT;
    r->file = l.program->file;
    try {
      r->diags = qvet::verify_program(*l.program, o ? o->verify : qvet::VerifyOptions{}).diagnostics;
    } catch (const qvet::InputError& e) {
      Diagnostic d = qvet::input_diagnostic(e);
      if (!d.loc.file) d.loc.file = l.program->file;
      return r->error = located(src, p->name, r->file, d, p->tags), QVET_INVALID_INPUT;
    }
    r->json = qvet::render_json(r->diags, src);
    return QVET_OK;
  });
  return r;
}

void qvet_result_free(qvet_result* r) { delete r; }
qvet_status qvet_result_status(const qvet_result* r) { return r ? r->status : QVET_BAD_CALL; }
const char* qvet_result_error(const qvet_result* r) { return r ? r->error.c_str() : ""; }

int qvet_result_exit_code(const qvet_result* r) {
  if (!r) return 3;
  if (r->status != QVET_OK) return r->status == QVET_INVALID_INPUT ? 2 : 3;
  for (const Diagnostic& d : r->diags)
    if (d.severity == qvet::Severity::Error || (r->werror && d.severity == qvet::Severity::Warning)) return 1;
  return 0;
}

const char* qvet_result_json(const qvet_result* r) { return r ? r->json.c_str() : ""; }
size_t qvet_result_count(const qvet_result* r) { return r ? r->diags.size() : 0; }
const char* qvet_diag_rule(const qvet_result* r, size_t i) { return diag(r, i) ? diag(r, i)->rule.c_str() : nullptr; }

qvet_severity qvet_diag_severity(const qvet_result* r, size_t i) {
  const Diagnostic* d = diag(r, i);
  if (!d) return QVET_NOTE;
  return d->severity == qvet::Severity::Error ? QVET_ERROR : d->severity == qvet::Severity::Warning ? QVET_WARNING : QVET_NOTE;
}

const char* qvet_diag_message(const qvet_result* r, size_t i) { return diag(r, i) ? diag(r, i)->message.c_str() : nullptr; }
unsigned qvet_diag_line(const qvet_result* r, size_t i) { return diag(r, i) ? diag(r, i)->loc.line : 0; }
unsigned qvet_diag_related_line(const qvet_result* r, size_t i) { return diag(r, i) ? diag(r, i)->related_loc().line : 0; }

const char* qvet_diag_tag(const qvet_result* r, size_t i) {
  const std::string* t = diag(r, i) ? tag_of(r->tags, r->file, diag(r, i)->loc) : nullptr;
  return t ? t->c_str() : nullptr;
}

const char* qvet_diag_related_tag(const qvet_result* r, size_t i) {
  const std::string* t = diag(r, i) ? tag_of(r->tags, r->file, diag(r, i)->related_loc()) : nullptr;
  return t ? t->c_str() : nullptr;
}

size_t qvet_diag_note_count(const qvet_result* r, size_t i) { return diag(r, i) ? diag(r, i)->notes.size() : 0; }

const char* qvet_diag_note(const qvet_result* r, size_t i, size_t k) {
  const Diagnostic* d = diag(r, i);
  return d && k < d->notes.size() ? d->notes[k].message.c_str() : nullptr;
}

size_t qvet_diag_fix_count(const qvet_result* r, size_t i) { return diag(r, i) ? diag(r, i)->fixes.size() : 0; }

const char* qvet_diag_fix(const qvet_result* r, size_t i, size_t k) {
  const Diagnostic* d = diag(r, i);
  return d && k < d->fixes.size() ? d->fixes[k].description.c_str() : nullptr;
}

}  // extern "C"
