// Where the values of a parsed JSON document stand in its text. nlohmann's DOM keeps no
// positions, so errors in the JSON itself (a wrong type, a missing field) would have no location;
// this scans the (already valid) text again in document order, which ordered_json preserves,
// and pairs every object and array with its offset. Built on first use, only when a location is
// needed.
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/source.h"

namespace qvet {

class JsonPositions {
 public:
  using J = nlohmann::ordered_json;
  // `text` must be the text `root` was parsed from; both must outlive this object.
  JsonPositions(const std::string& text, const J& root, uint32_t file) : text_(text), root_(root), file_(file) {}

  // The location of `node` (an object or array of the document); 1:1 when it is unknown.
  Loc of(const J& node);
  // The location of the value of `key` in the object `object`, else of the object.
  Loc of_field(const J& object, std::string_view key);
  // The location of byte `offset`.
  Loc at(size_t offset);
  // The first key that appears twice in one object (RFC 8259 leaves its meaning open, and the
  // DOM keeps one of the two): its location and name; line 0 when there is none.
  std::pair<Loc, std::string> duplicate_key();

 private:
  void build();
  size_t offset_of(const J& node);
  void skip_space(size_t& i) const;
  std::string scan_string(size_t& i) const;
  void scan_value(size_t& i, std::vector<size_t>* starts);
  size_t first_value() const;
  void pair_with_nodes(const J& node, const std::vector<size_t>& starts, size_t& k);

  const std::string& text_;
  const J& root_;
  uint32_t file_;
  bool built_ = false;
  std::vector<std::pair<const J*, size_t>> containers_;  // sorted by address
  std::vector<size_t> line_starts_;
  size_t duplicate_at_ = std::string::npos;
  std::string duplicate_key_;
};

}  // namespace qvet
