#include "core/syntax/option_values.h"

#include "core/diagnostic.h"
#include "core/input_error.h"
#include "core/syntax/lexer.h"

namespace qvet {

bool parse_integer(const std::string& s, i128& out) {
  try {
    std::vector<Token> toks = lex_line(s, 0, 1);
    if (toks.size() != 2 || toks[0].kind != Tok::Int) return false;
    out = toks[0].value;
    return true;
  } catch (const InputError&) {
    return false;
  }
}

bool parse_rule_list(const std::string& list, std::vector<std::string>& out, std::string& unknown) {
  std::vector<std::string> rules;
  for (size_t b = 0; b <= list.size();) {
    size_t e = list.find(',', b);
    if (e == std::string::npos) e = list.size();
    std::string r = list.substr(b, e - b);
    if (r != "none" && !find_rule(r)) return unknown = r, false;
    rules.push_back(r);
    b = e + 1;
  }
  out.insert(out.end(), rules.begin(), rules.end());
  return true;
}

}  // namespace qvet
