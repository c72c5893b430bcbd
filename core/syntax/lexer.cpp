#include "core/syntax/lexer.h"

#include <cctype>
#include <cstdio>

namespace qvet {

const char* tok_name(Tok t) {
  static const char* names[] = {"identifier", "integer", "'['", "']'", "':'", "','", "'='", "'>='", "'<='",
                                "'..'", "'->'", "'('", "')'", "'{'", "'}'", "'+'", "'-'", "'*'", "a string", "end of line"};
  return names[int(t)];
}

void check_line_text(std::string_view line, uint32_t file, uint32_t lineno) {
  bool comment = false;
  for (size_t i = 0; i < line.size(); ++i) {
    unsigned char c = (unsigned char)line[i];
    if (c >= 32 && c < 127) {
      comment |= c == '#';
      continue;
    }
    if (c == '\t' || c == '\r' || (c >= 128 && comment)) continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, "non-text input: byte 0x%02x is not allowed here", c);
    throw InputError{{file, lineno, uint32_t(i + 1)}, buf};
  }
}

namespace {

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

// Parses digits (decimal or 0x hex) starting at i; returns the value, throws beyond 64 bits.
i128 lex_number(std::string_view s, size_t& i, const Loc& loc) {
  i128 v = 0;
  auto too_big = [&] { throw InputError{loc, "integer literal is beyond 64 bits"}; };
  if (s[i] == '0' && i + 1 < s.size() && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
    i += 2;
    size_t start = i;
    while (i < s.size() && std::isxdigit((unsigned char)s[i])) {
      int d = is_digit(s[i]) ? s[i] - '0' : (s[i] | 32) - 'a' + 10;
      v = v * 16 + d;
      if (v > kU64Max) too_big();
      ++i;
    }
    if (i == start) throw InputError{loc, "hex literal needs digits after '0x'"};
  } else {
    while (i < s.size() && is_digit(s[i])) {
      v = v * 10 + (s[i] - '0');
      if (v > kU64Max) too_big();
      ++i;
    }
  }
  if (i < s.size() && (s[i] == 'K' || s[i] == 'M' || s[i] == 'G')) {
    int shift = s[i] == 'K' ? 10 : s[i] == 'M' ? 20 : 30;
    v <<= shift;
    if (v > kU64Max) too_big();
    ++i;
  }
  if (i < s.size() && is_ident_char(s[i]))
    throw InputError{loc, "malformed integer literal (suffixes are K, M and G)"};
  return v;
}

}  // namespace

std::vector<Token> lex_line(std::string_view s, uint32_t file, uint32_t lineno) {
  std::vector<Token> out;
  lex_line(s, file, lineno, out);
  return out;
}

void lex_line(std::string_view s, uint32_t file, uint32_t lineno, std::vector<Token>& out) {
  out.clear();
  if (out.capacity() < 32) out.reserve(32);
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '#') break;
    Token t;
    t.loc = {file, lineno, uint32_t(i + 1)};
    size_t start = i;
    if (is_ident_start(c)) {
      while (i < s.size() && is_ident_char(s[i])) ++i;
      t.kind = Tok::Ident;
    } else if (is_digit(c)) {
      t.kind = Tok::Int;
      i128 value = lex_number(s, i, t.loc);
      if (i < s.size() && s[i] == '^') {
        ++i;
        if (i >= s.size() || !is_digit(s[i])) throw InputError{{file, lineno, uint32_t(i + 1)}, "expected an exponent after '^'"};
        Loc eloc{file, lineno, uint32_t(i + 1)};
        i128 e = lex_number(s, i, eloc);
        i128 v = 1;
        for (i128 k = 0; k < e; ++k) {
          v *= value;
          if (v > kU64Max) throw InputError{t.loc, "integer power is beyond 64 bits"};
          if (v == 0 || v == 1) break;
        }
        if (e == 0) v = 1;
        value = v;
      }
      t.value = uint64_t(value);
    } else if (c == '"') {
      // A string (file names of the stream binding, docs/encoded.md): printable ASCII, no escapes.
      size_t e = s.find('"', i + 1);
      if (e == std::string_view::npos) throw InputError{t.loc, "string is never closed (a '\"' ends it on the same line)"};
      t.kind = Tok::Str;
      t.text = s.substr(i + 1, e - i - 1);
      i = e + 1;
      out.push_back(t);
      continue;
    } else {
      auto two = [&](char a, char b) { return c == a && i + 1 < s.size() && s[i + 1] == b; };
      if (two('>', '=')) t.kind = Tok::Ge, i += 2;
      else if (two('<', '=')) t.kind = Tok::Le, i += 2;
      else if (two('.', '.')) t.kind = Tok::DotDot, i += 2;
      else if (two('-', '>')) t.kind = Tok::Arrow, i += 2;
      else {
        switch (c) {
          case '[': t.kind = Tok::LBracket; break;
          case ']': t.kind = Tok::RBracket; break;
          case ':': t.kind = Tok::Colon; break;
          case ',': t.kind = Tok::Comma; break;
          case '=': t.kind = Tok::Assign; break;
          case '(': t.kind = Tok::LParen; break;
          case ')': t.kind = Tok::RParen; break;
          case '{': t.kind = Tok::LBrace; break;
          case '}': t.kind = Tok::RBrace; break;
          case '+': t.kind = Tok::Plus; break;
          case '-': t.kind = Tok::Minus; break;
          case '*': t.kind = Tok::Star; break;
          default: {
            char buf[48];
            if (c >= 32 && c < 127) std::snprintf(buf, sizeof buf, "unexpected character '%c'", c);
            else std::snprintf(buf, sizeof buf, "unexpected byte 0x%02x", (unsigned char)c);
            throw InputError{t.loc, buf};
          }
        }
        ++i;
      }
    }
    t.text = s.substr(start, i - start);
    out.push_back(t);
  }
  Token end;
  end.kind = Tok::End;
  end.loc = {file, lineno, uint32_t(s.size() + 1)};
  out.push_back(end);
}

}  // namespace qvet
