// ProgramBuilder: the static rules of language.md, shared by both front ends.
//
// The .hcq parser (parser.cpp) and the JSON reader (json_io.cpp) each build a Program through
// one ProgramBuilder, statement by statement in source order. The builder owns the Program being
// built, its names (declared once, never a keyword, looked up by kind, loop variables and list
// parameters in scope) and every check a declaration or statement must pass: sizes and bounds
// in [0, 2^64), ranges non-empty and inside their buffer, copies of equal length, a command list
// checked again with each submit's arguments, exact arithmetic within kValueLimit. The first
// violation throws InputError at the offending token.
//
// Names, expressions, ranges and words are read from tokens: the .hcq parser hands the builder a
// line, the JSON reader one field at a time (each field's tokens located at its JSON node), so
// an expression means the same in both formats. Not thread-safe; one builder per program.
#pragma once
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/ir.h"
#include "core/syntax/lexer.h"

namespace qvet {

// True for words the language reserves.
bool is_keyword(std::string_view word);

constexpr int kMaxDepth = 256;  // nested blocks and parentheses: an implementation limit (docs/language-notes.md)

class ProgramBuilder {
 public:
  explicit ProgramBuilder(uint32_t file) { p_.file = file; }

  // ---- the tokens being read ------------------------------------------------------------
  // The buffer the next reads take tokens from (ends with Tok::End); call rewind() after filling it.
  std::vector<Token>& tokens() { return toks_; }
  void rewind() { ti_ = 0; }
  // Lexes one JSON field's text (which must outlive the reads) with every token located at `loc`.
  void read_field(std::string_view text, const Loc& loc);
  const Token& peek(size_t k = 0) const { return toks_[std::min(ti_ + k, toks_.size() - 1)]; }
  const Token& take();
  bool at(Tok k) const { return peek().kind == k; }
  bool at_word(std::string_view w) const { return peek().kind == Tok::Ident && peek().text == w; }
  const Token& expect(Tok k, const char* what);
  void expect_word(std::string_view w);
  void expect_end();
  [[noreturn]] void fail_expected(const char* what) const;
  [[noreturn]] static void fail(const Loc& loc, std::string msg) { throw InputError{loc, std::move(msg)}; }

  // ---- names and words ------------------------------------------------------------------
  std::string declare_name(const Token& t);  // a new name: not a keyword, not declared yet
  uint32_t device(const Token& t);
  uint32_t signal(const Token& t);
  uint32_t queue(const Token& t);
  uint32_t list(const Token& t);
  ObjectRef memory(const Token& t, const char* verb);  // a base buffer or a signal (map, free, alloc)
  uint32_t owner();                                    // reads `host` or a device name
  Arch arch(const Token& t);
  EngineKind engine(const Token& t);
  Ordering ordering(const Token& t);

  // ---- expressions and ranges -------------------------------------------------------------
  Expr expr();                            // an affine expression over the names in scope
  Expr constant_expr(const char* what);  // a constant in [0, 2^64)
  Range range();                          // NAME or NAME[lo:hi], non-empty and in bounds
  Constraint constraint();                // >= E, <= E or in E..E
  void check_u64(const Expr& e, const Loc& loc, const char* what);  // in [0, 2^64) for every binding

  // ---- declarations: each fills `s` (kind, id, ...) and adds the declared thing --------------
  void add_device(Stmt& s, std::string name, Arch a);
  void add_peer(Stmt& s, const Token& a, const Token& b);
  void add_map(Stmt& s, ObjectRef object, uint32_t device);
  void add_base_buffer(Stmt& s, std::string name, uint32_t owner, Expr size, const Loc& size_loc);
  void add_view(Stmt& s, std::string name, const Range& r);
  void add_signal(Stmt& s, std::string name, uint32_t owner, std::optional<std::pair<Expr, Loc>> init);
  void add_queue(Stmt& s, std::string name, uint32_t device, EngineKind e, Ordering o);
  void add_param(Stmt& s, std::string name, std::vector<Constraint> cs);
  // A command list: its parameters are in scope from begin_list to end_list.
  void begin_list(Stmt& s, std::string name);
  void add_list_param(const Token& t);
  void end_list(Stmt& s, std::vector<Command> body);

  // ---- host statements ----------------------------------------------------------------------
  // `submit QUEUE LIST(args)`: each argument names one of the list's parameters, once; all are given.
  void begin_submit_list(Stmt& s, uint32_t queue, uint32_t list);
  uint32_t argument(const Stmt& s, const Token& param) const;  // the parameter it names (then push to s.args)
  void end_submit_list(Stmt& s, const Loc& close);
  // `repeat VAR in LO..HI {`: the variable is in scope from begin_repeat to end_repeat.
  void begin_repeat(Stmt& s, std::string var, const Loc& var_loc, Expr lo, const Loc& lo_loc, Expr hi, const Loc& hi_loc, int depth);
  void end_repeat();

  // ---- device commands ----------------------------------------------------------------------
  void set_kernel(Command& c, const Token& name);  // a kernel name (not a keyword)
  void check_copy(const Command& c, const std::string& context) const;  // equal lengths

  // Every `# expect:` item of the program, in order.
  void add_expectation(Expectation e) { p_.expects.push_back(std::move(e)); }
  const Program& program() const { return p_; }
  Program& program() { return p_; }
  // A decoded 32-bit signal at `at` that also writes 0 to the word's high half (DecodedCommand::
  // zero_high): finish() refuses it where some write of the signal can reach 2^32.
  void note_zero_high(uint32_t signal, const Loc& at) { zero_high_.push_back({signal, at}); }
  // The finished program ('# expect: clean' must stand alone).
  Program finish();

 private:
  struct NameRef {
    enum Kind { Device, Buffer, Signal, Queue, Var, List } kind;
    uint32_t id;
  };
  static const char* kind_word(NameRef::Kind k);
  NameRef lookup(const Token& t) const;
  uint32_t lookup_as(const Token& t, NameRef::Kind kind) const;
  template <class E>
  E word_of(const Token& t, const char* what, const char* (*name)(E), std::initializer_list<E> values) const;
  template <class T>
  uint32_t add(const std::string& n, NameRef::Kind k, std::vector<T>& table, T&& v);

  const std::vector<Interval>& ranges();
  void check_zero_high();
  bool uses_list_param(const Expr& e) const;
  Expr within_limit(Expr e, const Loc& loc, const std::string& context = "");
  Expr term();
  Expr factor();
  std::string show(const Expr& e) const;
  void check_range(const Range& r, const std::string& context);
  void check_list_instance(const Stmt& s);

  Program p_;
  std::vector<Token> toks_{Token{}};
  size_t ti_ = 0;
  // Looked up by string_view without building a string (one lookup per name on every line).
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, NameRef, NameHash, std::equal_to<>> names_;
  std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>> kernel_ids_;  // p_.kernels' places
  std::vector<std::pair<std::string, uint32_t>> scope_;  // loop variables and list parameters
  CommandList open_list_;                                  // between begin_list and end_list
  size_t list_scope_ = 0;                                  // scope_ size where it began
  int paren_depth_ = 0;
  std::vector<std::pair<uint32_t, Loc>> zero_high_;  // note_zero_high
  std::vector<Interval> ranges_;  // every variable's range, by id (rebuilt when variables were added)
};

}  // namespace qvet
