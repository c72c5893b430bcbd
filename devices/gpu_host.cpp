#include "devices/gpu_host.h"

#include <algorithm>
#include <chrono>

namespace qvet {

namespace {
size_t words64(const Layout& l) { return l.words + 2 * size_t(l.slots) + 4; }
size_t words32(const Layout& l) { return size_t(l.cells) + l.seen + l.scratch + l.desc.size(); }
}  // namespace

size_t HostBlock::bytes(const Layout& l) { return 8 * words64(l) + 4 * words32(l) + 8; }

HostBlock::HostBlock(void* base, const Layout& l) {
  auto* p64 = static_cast<uint64_t*>(base);
  mem.words = p64;
  mem.times = p64 + l.words;
  calibration = mem.times + 2 * size_t(l.slots);
  calibration[2] = calibration[3] = 0;
  auto* p32 = reinterpret_cast<uint32_t*>(p64 + words64(l));
  mem.cells = p32;
  mem.seen = p32 + l.cells;
  scratch = mem.seen + l.seen;
  desc = scratch + l.scratch;
  std::copy(l.desc.begin(), l.desc.end(), desc);
}

bool map_devices(const std::string& api, uint32_t logical, const std::vector<uint32_t>& physical, int count,
                 std::vector<int>& used, std::vector<uint32_t>& gpu_of_logical, std::string& error) {
  gpu_of_logical.assign(logical, 0);
  for (uint32_t d = 0; d < std::max<uint32_t>(logical, 1); ++d) {  // a program with no device still gets GPU 0
    uint32_t ph = d < physical.size() ? physical[d] : d % uint32_t(count);
    if (ph >= uint32_t(count))
      return error = api + ": GPU " + std::to_string(ph) + " does not exist (" + std::to_string(count) + " found)", false;
    auto it = std::find(used.begin(), used.end(), int(ph));
    if (it == used.end()) it = used.insert(used.end(), int(ph));
    if (d < logical) gpu_of_logical[d] = uint32_t(it - used.begin());
  }
  return true;
}

uint64_t monotonic_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

}  // namespace qvet
