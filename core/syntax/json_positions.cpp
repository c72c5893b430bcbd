#include "core/syntax/json_positions.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <unordered_set>

namespace qvet {

void JsonPositions::skip_space(size_t& i) const {
  while (i < text_.size() && (text_[i] == ' ' || text_[i] == '\t' || text_[i] == '\n' || text_[i] == '\r')) ++i;
}

// Reads the string at `i` (its opening quote) and returns its value.
std::string JsonPositions::scan_string(size_t& i) const {
  size_t begin = i++;
  bool escaped = false;
  while (i < text_.size() && text_[i] != '"') {
    if (text_[i] == '\\') escaped = true, ++i;
    ++i;
  }
  ++i;
  std::string raw = text_.substr(begin, std::min(i, text_.size()) - begin);
  if (!escaped) return raw.substr(1, raw.size() - 2);
  try {
    return J::parse(raw).get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return raw;
  }
}

// Skips the value at `i`, recording where each value starts (document order) when `starts`
// is given, and the first duplicate key.
void JsonPositions::scan_value(size_t& i, std::vector<size_t>* starts) {
  skip_space(i);
  if (i >= text_.size()) return;
  if (starts) starts->push_back(i);
  char open = text_[i];
  if (open == '"') {
    scan_string(i);
    return;
  }
  if (open != '{' && open != '[') {  // a number, true, false or null
    while (i < text_.size() && !std::strchr(",]} \t\r\n", text_[i])) ++i;
    return;
  }
  char close = open == '{' ? '}' : ']';
  std::unordered_set<std::string> keys;
  ++i;
  skip_space(i);
  while (i < text_.size() && text_[i] != close) {
    if (open == '{') {
      size_t key_at = i;
      std::string key = scan_string(i);
      if (!keys.insert(key).second && duplicate_at_ == std::string::npos) duplicate_at_ = key_at, duplicate_key_ = key;
      skip_space(i);
      ++i;  // ':'
    }
    scan_value(i, starts);
    skip_space(i);
    if (i < text_.size() && text_[i] == ',') ++i, skip_space(i);
  }
  ++i;
}

// Gives each object and array of `node`'s tree its start, in the order scan_value saw them.
void JsonPositions::pair_with_nodes(const J& node, const std::vector<size_t>& starts, size_t& k) {
  if (k >= starts.size()) return;
  size_t start = starts[k++];
  if (!node.is_structured()) return;
  containers_.push_back({&node, start});
  for (const J& child : node) pair_with_nodes(child, starts, k);
}

size_t JsonPositions::first_value() const {
  return text_.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;  // nlohmann skips a byte order mark
}

void JsonPositions::build() {
  if (built_) return;
  built_ = true;
  std::vector<size_t> starts;
  size_t i = first_value();
  scan_value(i, &starts);
  size_t k = 0;
  if (duplicate_at_ == std::string::npos) pair_with_nodes(root_, starts, k);  // else they would not pair up
  std::sort(containers_.begin(), containers_.end());
}

std::pair<Loc, std::string> JsonPositions::duplicate_key() {
  if (!built_) {
    size_t i = first_value();
    scan_value(i, nullptr);
  }
  if (duplicate_at_ == std::string::npos) return {};
  return {at(duplicate_at_), duplicate_key_};
}

size_t JsonPositions::offset_of(const J& node) {
  build();
  auto it = std::lower_bound(containers_.begin(), containers_.end(), std::pair<const J*, size_t>{&node, 0});
  return it != containers_.end() && it->first == &node ? it->second : std::string::npos;
}

Loc JsonPositions::at(size_t offset) {
  if (offset == std::string::npos) return {file_, 1, 1};
  if (line_starts_.empty()) {
    line_starts_.push_back(0);
    for (size_t n = text_.find('\n'); n != std::string::npos; n = text_.find('\n', n + 1)) line_starts_.push_back(n + 1);
  }
  size_t line = size_t(std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) - line_starts_.begin());
  size_t col = offset - line_starts_[line - 1] + 1;
  return {file_, uint32_t(std::min<size_t>(line, UINT32_MAX)), uint32_t(std::min<size_t>(col, UINT32_MAX))};
}

Loc JsonPositions::of(const J& node) { return at(offset_of(node)); }

Loc JsonPositions::of_field(const J& object, std::string_view key) {
  size_t i = offset_of(object);
  if (i == std::string::npos || !object.is_object() || !object.contains(std::string(key))) return at(i);
  size_t found = i;
  for (++i, skip_space(i); i < text_.size() && text_[i] != '}';) {
    bool match = scan_string(i) == key;
    skip_space(i);
    ++i;  // ':'
    skip_space(i);
    if (match) found = i;
    scan_value(i, nullptr);
    skip_space(i);
    if (i < text_.size() && text_[i] == ',') ++i, skip_space(i);
  }
  return at(found);
}

}  // namespace qvet
