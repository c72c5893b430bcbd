// libqvet's C interface (include/qvet/qvet.h) over the same front end, verifier and renderers as
// `qvet check`: a program is .hcq or JSON text (built line by line or given whole), checked by
// verify_program. Every entry point catches what the C++ side throws and turns it into a status.
#include "qvet/qvet.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "core/input_error.h"
#include "core/render.h"
#include "core/syntax/option_values.h"
#include "core/syntax/parser.h"
#include "checkers/checker.h"
#include "verify/verify.h"

struct qvet_program {
  std::string name = "<program>";
  std::string text;
  std::vector<std::string> tags;  // per line (1-based: tags[line - 1]); "" where none
  std::vector<const char*> calls;  // per line: the call that made it (qvet_add_buffer, ...), or null
  bool in_batch = false;           // between qvet_begin_submit and qvet_end_submit
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

// "name:line:col: message", with the call and tag that made its line where it has them.
std::string located(const qvet::SourceSet& src, const std::string& name, uint32_t file, const Diagnostic& d,
                    const qvet_program& p) {
  std::string out = d.loc.file ? src.name(d.loc.file) : name;
  if (d.loc.line) out += ":" + std::to_string(d.loc.line) + (d.loc.col ? ":" + std::to_string(d.loc.col) : "");
  out += ": " + d.message;
  const uint32_t f = d.loc.file ? d.loc.file : file;
  const char* call = f == file && d.loc.line >= 1 && d.loc.line <= p.calls.size() ? p.calls[d.loc.line - 1] : nullptr;
  const std::string* t = tag_of(p.tags, f, d.loc);
  if (call) out += std::string(" (") + call + (t ? " at " + *t : std::string()) + ")";
  else if (t) out += " (the line added at " + *t + ")";
  return out;
}

// One line appended: its tag and the call that made it (null: qvet_program_add's text).
qvet_status append_line(qvet_program* p, const std::string& line, const char* tag, const char* call) {
  // (A program parsed whole has a tag, empty, per line: tags stay one per line.)
  if (!p->text.empty() && p->text.back() != '\n') p->text += '\n', p->tags.emplace_back(), p->calls.push_back(nullptr);
  p->text += line + '\n';
  p->tags.push_back(tag ? tag : "");
  p->calls.push_back(call);
  p->error.clear();
  return QVET_OK;
}

bool is_json(const qvet_program* p) {
  size_t i = p->text.find_first_not_of(" \t\r\n");
  return i != std::string::npos && p->text[i] == '{';
}

// A typed call's statement: its arguments are checked here, the rest by qvet_check.
class Statement {
 public:
  enum class Where { Outside, Inside };  // of a batch
  Statement(qvet_program* p, const char* call, const char* tag, Where where) : p_(p), call_(call), tag_(tag), where_(where) {
    if (!p_) return;
    if (is_json(p_)) fail("a JSON program is not extended call by call");
    else if (where == Where::Inside && !p_->in_batch) fail("a command belongs inside qvet_begin_submit ... qvet_end_submit");
    else if (where == Where::Outside && p_->in_batch) fail("inside a batch (qvet_begin_submit) only commands are added");
  }
  // Appends a name, a word of the language (a keyword), a number, or a range.
  Statement& name(const char* n, const char* what) {
    bool ok = n && (std::isalpha(static_cast<unsigned char>(n[0])) || n[0] == '_');
    for (const char* c = n; ok && *c; ++c) ok = std::isalnum(static_cast<unsigned char>(*c)) || *c == '_';
    if (!ok) return fail(std::string(what) + (n ? " '" + printable(n) + "' is not a name" : " is NULL"));
    return word(n);
  }
  Statement& word(const std::string& w) {
    if (!text_.empty() && w != ",") text_ += ' ';
    text_ += w;
    return *this;
  }
  Statement& number(uint64_t v) { return word(std::to_string(v)); }
  Statement& range(const qvet_range& r, const char* what) {
    name(r.buffer, what);
    if (r.lo == 0 && r.hi == 0) return *this;
    if (r.hi <= r.lo)
      return fail(std::string(what) + " [" + std::to_string(r.lo) + ":" + std::to_string(r.hi) + ") is empty (0, 0: all of it)");
    text_ += "[" + std::to_string(r.lo) + ":" + std::to_string(r.hi) + "]";
    return *this;
  }
  Statement& fail(const std::string& why) {
    if (error_.empty()) error_ = why;
    return *this;
  }
  // Appends the statement, or says why not.
  qvet_status done() {
    if (!p_) return QVET_BAD_CALL;
    if (!error_.empty()) {
      p_->error = std::string(call_) + (tag_ ? std::string(" (at ") + tag_ + ")" : std::string()) + ": " + error_;
      return QVET_BAD_CALL;
    }
    return append_line(p_, (where_ == Where::Inside && text_ != "}" ? "  " : "") + text_, tag_, call_);  // (as the printer indents)
  }
 private:
  static std::string printable(const char* n) {
    std::string out;
    for (const char* c = n; *c && out.size() < 64; ++c) out += std::isprint(static_cast<unsigned char>(*c)) ? *c : '?';
    return out;
  }
  qvet_program* p_;
  const char* call_;
  const char* tag_;
  Where where_;
  std::string text_, error_;
};

// Runs a typed call: `f` fills the statement, whose text is then appended.
template <class F>
qvet_status typed(qvet_program* p, const char* call, const char* tag, Statement::Where where, F&& f) {
  if (!p) return QVET_BAD_CALL;
  return guarded(p->error, [&] {
    Statement s(p, call, tag, where);
    f(s);
    return s.done();
  });
}

// An enum argument as the int a C caller passed: any int may come, and a C++ load of one outside
// the enum's values is undefined, so it is read through its bytes.
template <class E>
int raw(const E& e) {
  static_assert(sizeof(E) == sizeof(int));
  int v;
  std::memcpy(&v, &e, sizeof v);
  return v;
}
const char* arch_word(int a) { return a == QVET_NV ? "nv" : a == QVET_AMD ? "amd" : a == QVET_STRICT ? "strict" : nullptr; }
const char* engine_word(int e) { return e == QVET_COMPUTE ? "compute" : e == QVET_COPY ? "copy" : nullptr; }
const char* ordering_words(int o) {
  return o == QVET_SERIAL ? "ordering serial" : o == QVET_OVERLAP ? "ordering overlap" : o == QVET_CHAINED ? "ordering chained" : nullptr;
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
    p->calls.assign(p->tags.size(), nullptr);
    p->in_batch = false;
    p->error.clear();
    qvet::SourceSet src;
    qvet::LoadResult r = qvet::load_program_text(src, p->name, p->text);
    if (r.program) return QVET_OK;
    p->error = located(src, p->name, 1, *r.error, *p);  // (the program is the set's first file)
    return QVET_INVALID_INPUT;
  });
}

qvet_status qvet_program_add(qvet_program* p, const char* line, const char* tag) {
  if (!p) return QVET_BAD_CALL;
  return guarded(p->error, [&] {
    if (!line) return p->error = "qvet_program_add: line is NULL", QVET_BAD_CALL;
    if (is_json(p)) return p->error = "qvet_program_add: a JSON program is not extended line by line", QVET_BAD_CALL;
    std::string l(line);
    if (l.find_first_of("\n\r") != std::string::npos)
      return p->error = "qvet_program_add: one line at a time (the line holds a line break)", QVET_BAD_CALL;
    return append_line(p, l, tag, nullptr);
  });
}

using Where = Statement::Where;

qvet_status qvet_add_device(qvet_program* p, const char* name, qvet_arch arch, const char* tag) {
  return typed(p, "qvet_add_device", tag, Where::Outside, [&](Statement& s) {
    s.word("device").name(name, "the device");
    if (const char* a = arch_word(raw(arch))) s.word(a);
    else s.fail("unknown architecture " + std::to_string(raw(arch)));
  });
}

qvet_status qvet_add_peer(qvet_program* p, const char* a, const char* b, const char* tag) {
  return typed(p, "qvet_add_peer", tag, Where::Outside, [&](Statement& s) { s.word("peer").name(a, "the first device").name(b, "the second device"); });
}

qvet_status qvet_add_map(qvet_program* p, const char* object, const char* device, const char* tag) {
  return typed(p, "qvet_add_map", tag, Where::Outside,
               [&](Statement& s) { s.word("map").name(object, "the buffer or signal").word("into").name(device, "the device"); });
}

qvet_status qvet_add_buffer(qvet_program* p, const char* name, const char* owner, uint64_t size, const char* tag) {
  return typed(p, "qvet_add_buffer", tag, Where::Outside,
               [&](Statement& s) { s.word("buffer").name(name, "the buffer").word("on").name(owner, "the owner").number(size); });
}

qvet_status qvet_add_view(qvet_program* p, const char* name, qvet_range of, const char* tag) {
  return typed(p, "qvet_add_view", tag, Where::Outside, [&](Statement& s) { s.word("buffer").name(name, "the view").word("=").range(of, "its range"); });
}

qvet_status qvet_add_signal(qvet_program* p, const char* name, const char* owner, uint64_t init, const char* tag) {
  return typed(p, "qvet_add_signal", tag, Where::Outside,
               [&](Statement& s) { s.word("signal").name(name, "the signal").word("on").name(owner, "the owner").word("=").number(init); });
}

qvet_status qvet_add_queue(qvet_program* p, const char* name, const char* device, qvet_engine engine, qvet_ordering ordering,
                           const char* tag) {
  return typed(p, "qvet_add_queue", tag, Where::Outside, [&](Statement& s) {
    s.word("queue").name(name, "the queue").word("on").name(device, "the device");
    if (const char* e = engine_word(raw(engine))) s.word(e);
    else s.fail("unknown engine " + std::to_string(raw(engine)));
    if (const char* o = ordering_words(raw(ordering))) s.word(o);
    else if (raw(ordering) != QVET_ORDERING_DEFAULT) s.fail("unknown ordering " + std::to_string(raw(ordering)));
  });
}

qvet_status qvet_add_param(qvet_program* p, const char* name, uint64_t lo, uint64_t hi, const char* tag) {
  return typed(p, "qvet_add_param", tag, Where::Outside, [&](Statement& s) {
    s.word("param").name(name, "the param").word("in").number(lo).word("..").number(hi);
    if (hi < lo) s.fail("the range " + std::to_string(lo) + ".." + std::to_string(hi) + " is empty");
  });
}

qvet_status qvet_begin_submit(qvet_program* p, const char* queue, const char* tag) {
  qvet_status st = typed(p, "qvet_begin_submit", tag, Where::Outside, [&](Statement& s) { s.word("submit").name(queue, "the queue").word("{"); });
  if (st == QVET_OK) p->in_batch = true;
  return st;
}

qvet_status qvet_end_submit(qvet_program* p, const char* tag) {
  qvet_status st = typed(p, "qvet_end_submit", tag, Where::Inside, [&](Statement& s) { s.word("}"); });
  if (st == QVET_OK) p->in_batch = false;
  return st;
}

qvet_status qvet_cmd_wait(qvet_program* p, const char* signal, uint64_t value, const char* tag) {
  return typed(p, "qvet_cmd_wait", tag, Where::Inside, [&](Statement& s) { s.word("wait").name(signal, "the signal").word(">=").number(value); });
}

qvet_status qvet_cmd_signal(qvet_program* p, const char* signal, uint64_t value, const char* tag) {
  return typed(p, "qvet_cmd_signal", tag, Where::Inside, [&](Statement& s) { s.word("signal").name(signal, "the signal").word("=").number(value); });
}

qvet_status qvet_cmd_timestamp(qvet_program* p, const char* signal, const char* tag) {
  return typed(p, "qvet_cmd_timestamp", tag, Where::Inside, [&](Statement& s) { s.word("timestamp").name(signal, "the signal"); });
}

qvet_status qvet_cmd_exec(qvet_program* p, const char* kernel, const qvet_range* reads, size_t n_reads, const qvet_range* writes,
                          size_t n_writes, const char* tag) {
  return typed(p, "qvet_cmd_exec", tag, Where::Inside, [&](Statement& s) {
    s.word("exec").name(kernel, "the kernel");
    if ((n_reads && !reads) || (n_writes && !writes)) return void(s.fail("a range list is NULL with a count above 0"));
    for (size_t i = 0; i < n_reads; ++i) {
      if (i) s.word(",");
      else s.word("reads");
      s.range(reads[i], "a read");
    }
    for (size_t i = 0; i < n_writes; ++i) {
      if (i) s.word(",");
      else s.word("writes");
      s.range(writes[i], "a write");
    }
  });
}

qvet_status qvet_cmd_copy(qvet_program* p, qvet_range src, qvet_range dst, const char* tag) {
  return typed(p, "qvet_cmd_copy", tag, Where::Inside,
               [&](Statement& s) { s.word("copy").range(src, "the source").word("->").range(dst, "the destination"); });
}

qvet_status qvet_cmd_barrier(qvet_program* p, const char* tag) {
  return typed(p, "qvet_cmd_barrier", tag, Where::Inside, [&](Statement& s) { s.word("barrier"); });
}

qvet_status qvet_cmd_memory_barrier(qvet_program* p, const char* tag) {
  return typed(p, "qvet_cmd_memory_barrier", tag, Where::Inside, [&](Statement& s) { s.word("memory_barrier"); });
}

qvet_status qvet_host_wait(qvet_program* p, const char* signal, uint64_t value, const char* tag) {
  return typed(p, "qvet_host_wait", tag, Where::Outside, [&](Statement& s) { s.word("wait").name(signal, "the signal").word(">=").number(value); });
}

qvet_status qvet_host_signal(qvet_program* p, const char* signal, uint64_t value, const char* tag) {
  return typed(p, "qvet_host_signal", tag, Where::Outside, [&](Statement& s) { s.word("signal").name(signal, "the signal").word("=").number(value); });
}

qvet_status qvet_host_read(qvet_program* p, qvet_range range, const char* tag) {
  return typed(p, "qvet_host_read", tag, Where::Outside, [&](Statement& s) { s.word("read").range(range, "the range"); });
}

qvet_status qvet_host_write(qvet_program* p, qvet_range range, const char* tag) {
  return typed(p, "qvet_host_write", tag, Where::Outside, [&](Statement& s) { s.word("write").range(range, "the range"); });
}

qvet_status qvet_host_free(qvet_program* p, const char* object, const char* tag) {
  return typed(p, "qvet_host_free", tag, Where::Outside, [&](Statement& s) { s.word("free").name(object, "the buffer or signal"); });
}

qvet_status qvet_host_alloc(qvet_program* p, const char* object, const char* tag) {
  return typed(p, "qvet_host_alloc", tag, Where::Outside, [&](Statement& s) { s.word("alloc").name(object, "the buffer or signal"); });
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
    const qvet::VerifyOptions vo = o ? o->verify : qvet::VerifyOptions{};
    // A large param-free program is elaborated while it is read, as the CLI reads a large file.
    const bool streamed = qvet::streamable(p->text) && vo.fixed.empty();
    std::optional<qvet::Program> program;
    qvet::Trace t;
    try {
      std::optional<Diagnostic> error;
      if (streamed) {
        if (!qvet::load_streamed(src, p->name, p->text, {}, program, t, error))
          return r->error = located(src, p->name, 1, *error, *p), QVET_INVALID_INPUT;
      } else {
        qvet::LoadResult l = qvet::load_program_text(src, p->name, p->text);
        if (!l.program) return r->error = located(src, p->name, 1, *l.error, *p), QVET_INVALID_INPUT;
        program = std::move(*l.program);
      }
      r->file = program->file;
      r->diags = streamed ? qvet::check_trace(t, vo.rules, vo.witness, vo.engine).diagnostics
                          : qvet::verify_program(*program, vo).diagnostics;
    } catch (const qvet::InputError& e) {
      const uint32_t file = r->file ? r->file : 1;  // the program's (the set's first file)
      Diagnostic d = qvet::input_diagnostic(e);
      if (!d.loc.file) d.loc.file = file;
      return r->error = located(src, p->name, file, d, *p), QVET_INVALID_INPUT;
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
