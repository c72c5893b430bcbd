#include "core/source.h"

namespace qvet {

SourceSet::SourceSet() { files_.push_back({"", "", {}}); }

uint32_t SourceSet::add(std::string name, std::string text) {
  files_.push_back({std::move(name), std::move(text), {}});
  return uint32_t(files_.size() - 1);
}

void SourceSet::set_text(uint32_t file, std::string text) {
  files_[file].text = std::move(text);
  files_[file].line_starts.clear();
}

std::string_view SourceSet::line(uint32_t file, uint32_t line) const {
  if (file == 0 || file >= files_.size() || line == 0) return {};
  File& f = files_[file];
  if (f.line_starts.empty()) {
    f.line_starts.push_back(0);
    for (size_t i = f.text.find('\n'); i != std::string::npos; i = f.text.find('\n', i + 1))
      f.line_starts.push_back(uint32_t(i + 1));
  }
  if (line > f.line_starts.size()) return {};
  uint32_t b = f.line_starts[line - 1];
  uint32_t e = line < f.line_starts.size() ? f.line_starts[line] - 1 : uint32_t(f.text.size());
  std::string_view s(f.text.data() + b, e - b);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

}  // namespace qvet
