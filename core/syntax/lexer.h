// Tokens of one .hcq line. The language is line-oriented, so the lexer works a line at a time:
// the parser hands it a line and gets back the tokens, each with its column.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/expr.h"
#include "core/input_error.h"
#include "core/source.h"

namespace qvet {

enum class Tok : uint8_t {
  Ident, Int, LBracket, RBracket, Colon, Comma, Assign, Ge, Le, DotDot, Arrow,
  LParen, RParen, LBrace, RBrace, Plus, Minus, Star, Str, End
};
const char* tok_name(Tok t);

struct Token {
  std::string_view text;  // Str: the text between the quotes
  uint64_t value = 0;  // Int (literals fit in 64 bits, or they are an input error)
  Loc loc;
  Tok kind = Tok::End;
};

// Splits `line` (without its newline) into tokens; a comment ends the line. Throws InputError
// for characters outside the language, integers beyond 64 bits and malformed literals.
std::vector<Token> lex_line(std::string_view line, uint32_t file, uint32_t lineno);
// Same, into `out` (cleared first), so a parser can reuse one buffer for every line.
void lex_line(std::string_view line, uint32_t file, uint32_t lineno, std::vector<Token>& out);

// Rejects a line (numbered `lineno`) that is not text: NUL and other control bytes anywhere,
// non-ASCII outside comments. Throws InputError at the first offending byte.
void check_line_text(std::string_view line, uint32_t file, uint32_t lineno);

}  // namespace qvet
