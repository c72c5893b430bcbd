// Source locations and the files they point into.
//
// A Loc names a place in an input: a file of the SourceSet, a line and a column (1-based).
// It does not assume text: a decoder of a binary command stream may store a dword offset in
// `line` and leave `col` at 0; renderers then print no source line.
// Thread safety: a SourceSet is written while inputs are read, then only read.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace qvet {

struct Loc {
  uint32_t file = 0;  // index into SourceSet; 0 is "no file"
  uint32_t line = 0;  // 1-based; 0 means unknown
  uint32_t col = 0;   // 1-based; 0 means the whole line
  bool valid() const { return line != 0; }
  friend bool operator==(const Loc&, const Loc&) = default;
  friend auto operator<=>(const Loc&, const Loc&) = default;
};

// Owns the text of every input file, so diagnostics can quote lines long after parsing.
// References returned by name() and text() stay valid while files are added.
class SourceSet {
 public:
  SourceSet();
  uint32_t add(std::string name, std::string text);  // returns the file index
  uint32_t size() const { return uint32_t(files_.size()); }  // file indices are [1, size())
  const std::string& name(uint32_t file) const { return files_[file].name; }
  const std::string& text(uint32_t file) const { return files_[file].text; }
  // The line's text without its newline; empty when the line does not exist.
  std::string_view line(uint32_t file, uint32_t line) const;
  // Attach text to a file that was named without its text (a JSON program names its .hcq source).
  void set_text(uint32_t file, std::string text);

 private:
  struct File {
    std::string name, text;
    std::vector<uint32_t> line_starts;  // built lazily
  };
  mutable std::deque<File> files_;  // a deque: adding a file keeps references to the others valid
};

}  // namespace qvet
