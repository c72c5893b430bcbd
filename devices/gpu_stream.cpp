#include "devices/gpu_stream.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>
#include <vector>

namespace qvet {

namespace {

// The host's clock, ns.
uint64_t monotonic_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// One host allocation carved into what a Layout needs: words, the log's times, the calibration
// probe's two times and its empty descriptor, cells, seen entries, scratch cells and the probe
// descriptors (copied in).
struct HostBlock {
  static size_t words64(const Layout& l) { return l.words + 2 * size_t(l.slots) + 4; }
  static size_t words32(const Layout& l) { return size_t(l.cells) + l.seen + l.scratch + l.desc.size(); }
  static size_t bytes(const Layout& l) { return 8 * words64(l) + 4 * words32(l) + 8; }
  HostBlock() = default;
  HostBlock(void* base, const Layout& l) {
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
  Memory mem;
  uint64_t* calibration = nullptr;  // [0], [1]: times; [2], [3]: zero, the empty descriptor
  uint32_t *scratch = nullptr, *desc = nullptr;
};

class GpuStreamBackend : public Backend {
 public:
  explicit GpuStreamBackend(std::unique_ptr<GpuApi> api) : api_(std::move(api)) {}
  ~GpuStreamBackend() override;
  const char* name() const override { return api_->name(); }
  bool open(const Layout& l, const std::vector<uint32_t>& physical, std::string& error) override;
  Memory memory() override { return block_.mem; }
  void begin_run(uint64_t) override;
  void probe(uint32_t s, const Probe& p) override { launch(stream_gpu_[s], streams_[s], p, block_.mem.times, p.slot); }
  void copy_cells(uint32_t s, uint32_t first, uint32_t count) override {
    uint32_t g = stream_gpu_[s];
    if (use(g)) api_->copy(streams_[s], at(g, block_.scratch), at(g, block_.mem.cells + first), 4 * size_t(count));
  }
  // A 32-bit wait compares, and a 32-bit write replaces, the low half (little-endian).
  void wait_value(uint32_t s, uint32_t word, uint64_t value, int width) override {
    uint32_t g = stream_gpu_[s];
    if (use(g)) api_->wait_value(streams_[s], at(g, block_.mem.words + word), value, width);
  }
  void write_value(uint32_t s, uint32_t word, uint64_t value, int width) override {
    uint32_t g = stream_gpu_[s];
    if (use(g)) api_->write_value(streams_[s], at(g, block_.mem.words + word), value, width);
  }
  void record(uint32_t s, uint32_t event) override;
  void wait_event(uint32_t s, uint32_t event) override;
  uint64_t now() override { return monotonic_ns(); }
  bool host_clock_shared() const override { return false; }
  void pause(uint64_t ns) override { std::this_thread::sleep_for(std::chrono::nanoseconds(ns)); }
  bool idle() override;
  uint64_t device_skew_ns() override;
  std::string failed() override { return error_.empty() ? api_->error() : error_; }

 private:
  struct Gpu {
    uint64_t base = 0;   // the host allocation, as this GPU sees it
    uint64_t hz = 0;     // clock ticks per second (0: the clock counts ns)
    uint64_t shift = 0;  // the clock's lead over the host's, ns (probes subtract it)
    GpuApi::Handle stream = nullptr;  // for the calibration probes
    uint64_t anchor_d = 0, anchor_h = 0;  // the first calibration reading: the rate's baseline
    uint64_t error = 0;                   // how far the lead may be off (ns): half the host interval around its probe
    uint64_t drift = 0;                   // how far the lead had moved since it was last measured (ns)
  };
  // Makes `gpu` current (calls alternate between GPUs only with a multi-GPU mapping).
  bool use(uint32_t gpu) {
    if (current_ == gpu) return true;
    if (!api_->make_current(gpu)) return false;
    current_ = gpu;
    return true;
  }
  uint64_t at(uint32_t gpu, const void* host) const {
    return gpus_[gpu].base + uint64_t(static_cast<const char*>(host) - static_cast<const char*>(host_));
  }
  bool launch(uint32_t gpu, GpuApi::Handle s, const Probe& p, uint64_t* times, uint32_t slot);
  bool calibrate(uint32_t gpu, std::string& error);
  bool raw_probe(uint32_t gpu, uint64_t& device, uint64_t& host, uint64_t* width = nullptr);
  // The probe's conversion (devices/probe_kernel.h, qvet_ns).
  uint64_t device_ns(uint32_t gpu, uint64_t ticks) const {
    uint64_t hz = gpus_[gpu].hz;
    return hz ? ticks / hz * 1'000'000'000 + ticks % hz * 1'000'000'000 / hz : ticks;
  }
  // Ticks per second over a baseline of `ticks` device ticks and `ns` host nanoseconds.
  static uint64_t rate(uint64_t ticks, uint64_t ns) { return uint64_t((unsigned __int128)ticks * 1'000'000'000 / ns); }
  bool map_devices(uint32_t logical, const std::vector<uint32_t>& physical, int count, std::vector<int>& used,
                   std::vector<uint32_t>& gpu_of_logical, std::string& error) const;

  std::unique_ptr<GpuApi> api_;
  std::vector<Gpu> gpus_;               // the physical GPUs used, in GpuApi's numbering
  size_t gpus_added_ = 0;               // how many add_gpu accepted (each is removed at close)
  std::vector<uint32_t> stream_gpu_;    // per stream: its GPU
  std::vector<GpuApi::Handle> streams_;
  std::map<uint32_t, std::pair<GpuApi::Handle, uint32_t>> events_;  // id: (event, its GPU)
  void* host_ = nullptr;
  HostBlock block_;
  uint32_t current_ = kNone;
  std::string error_;  // a failure of this back end's own (not of a call)
};

// Per logical device, the index into `used` of its physical GPU: `physical[d]`, or round robin over
// the `count` GPUs found. A program with no device still gets GPU 0.
bool GpuStreamBackend::map_devices(uint32_t logical, const std::vector<uint32_t>& physical, int count,
                                   std::vector<int>& used, std::vector<uint32_t>& gpu_of_logical, std::string& error) const {
  gpu_of_logical.assign(logical, 0);
  for (uint32_t d = 0; d < std::max<uint32_t>(logical, 1); ++d) {
    uint32_t ph = d < physical.size() ? physical[d] : d % uint32_t(count);
    if (ph >= uint32_t(count))
      return error = std::string(name()) + ": GPU " + std::to_string(ph) + " does not exist (" + std::to_string(count) + " found)",
             false;
    auto it = std::find(used.begin(), used.end(), int(ph));
    if (it == used.end()) it = used.insert(used.end(), int(ph));
    if (d < logical) gpu_of_logical[d] = uint32_t(it - used.begin());
  }
  return true;
}

bool GpuStreamBackend::open(const Layout& l, const std::vector<uint32_t>& physical, std::string& error) {
  auto fail = [&]() { return error = api_->error(), false; };
  int count = 0;
  if (!api_->start(count, error)) return false;
  std::vector<int> used;
  std::vector<uint32_t> logical;
  if (!map_devices(l.devices, physical, count, used, logical, error)) return false;
  gpus_.resize(used.size());
  for (int ph : used) {
    if (!api_->add_gpu(ph, error)) return false;
    ++gpus_added_;
  }
  if (!use(0) || !(host_ = api_->host_alloc(HostBlock::bytes(l)))) return fail();
  block_ = HostBlock(host_, l);
  for (uint32_t g = 0; g < gpus_.size(); ++g) {
    if (!use(g) || !(gpus_[g].base = api_->device_address(host_))) return fail();
    if (!api_->load_probe(g, error)) return false;
  }
  for (uint32_t dev : l.stream_device) {
    uint32_t g = dev < logical.size() ? logical[dev] : 0;
    GpuApi::Handle s = use(g) ? api_->stream_create() : nullptr;
    if (!s) return fail();
    streams_.push_back(s);
    stream_gpu_.push_back(g);
  }
  for (uint32_t g = 0; g < gpus_.size(); ++g)
    if (!calibrate(g, error)) return false;
  return true;
}

// One GPU's clock against the host's: a warm-up probe (whose launch latency would skew the first
// reading), then two raw probes 20 ms apart give the rate and the lead (each GPU counts from its
// own origin, and GPUs need not agree with each other). The lead is measured again before every
// run (begin_run), so that an error in the rate does not add up over the runs.
bool GpuStreamBackend::calibrate(uint32_t gpu, std::string& error) {
  Gpu& g = gpus_[gpu];
  if (!use(gpu) || !(g.stream = api_->stream_create())) return error = api_->error(), false;
  uint64_t d0 = 0, h0 = 0, d1 = 0, h1 = 0;
  bool ok = raw_probe(gpu, d0, h0) && raw_probe(gpu, d0, h0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ok = ok && raw_probe(gpu, d1, h1);
  if (!ok || d1 <= d0 || h1 <= h0)
    return error = api_->error().empty() ? std::string(name()) + ": the clock calibration probes did not run" : api_->error(), false;
  g.anchor_d = d0, g.anchor_h = h0;
  g.hz = api_->clock_counts_ns() ? 0 : rate(d1 - d0, h1 - h0);
  if (!api_->clock_counts_ns() && !g.hz) return error = std::string(name()) + ": the device clock does not advance", false;
  g.shift = device_ns(gpu, d1) - h1;
  return true;
}

// Each GPU's lead again, from the best of three raw probes (the narrowest host interval bounds the
// error best); a measured rate is taken again over the whole time since open, which only grows.
void GpuStreamBackend::begin_run(uint64_t) {
  for (uint32_t gi = 0; gi < gpus_.size(); ++gi) {
    Gpu& g = gpus_[gi];
    uint64_t best_d = 0, best_h = 0, best_w = UINT64_MAX;
    for (int k = 0; k < 3; ++k) {
      uint64_t d = 0, h = 0, w = 0;
      if (!raw_probe(gi, d, h, &w)) return void(error_ = error_.empty() ? std::string(name()) + ": the clock calibration probe did not run" : error_);
      if (w < best_w) best_d = d, best_h = h, best_w = w;
    }
    uint64_t was = device_ns(gi, best_d) - g.shift;  // the host time the last calibration gives it
    g.drift = was > best_h ? was - best_h : best_h - was;
    if (g.hz && best_h > g.anchor_h && best_d > g.anchor_d) g.hz = std::max<uint64_t>(1, rate(best_d - g.anchor_d, best_h - g.anchor_h));
    g.shift = device_ns(gi, best_d) - best_h;
    g.error = best_w / 2;
  }
}

// Two devices' logged times may be off against each other by both leads' errors, plus the drift a
// lead shows over a run (measured as how far it had moved by the next calibration). One GPU: none.
uint64_t GpuStreamBackend::device_skew_ns() {
  if (gpus_.size() < 2) return 0;
  uint64_t e1 = 0, e2 = 0, drift = 0;
  for (const Gpu& g : gpus_) {
    if (g.error > e1) e2 = e1, e1 = g.error;
    else e2 = std::max(e2, g.error);
    drift = std::max(drift, g.drift);
  }
  return e1 + e2 + 2 * drift;
}

// A raw probe (ticks, no shift) on the GPU's calibration stream: the device's time, the host's
// midpoint around it and the width of that interval.
bool GpuStreamBackend::raw_probe(uint32_t gpu, uint64_t& device, uint64_t& host, uint64_t* width) {
  block_.calibration[0] = block_.calibration[1] = UINT64_MAX;
  uint64_t h0 = monotonic_ns();
  if (!launch(gpu, gpus_[gpu].stream, Probe{0, 0, 0, 0}, block_.calibration, 0)) return false;
  int q = 0;
  while ((q = api_->stream_query(gpus_[gpu].stream)) == 0) std::this_thread::yield();
  uint64_t h1 = monotonic_ns();
  host = (h0 + h1) / 2;
  if (width) *width = h1 - h0;
  device = block_.calibration[0];
  return q == 1 && device != UINT64_MAX;
}

bool GpuStreamBackend::launch(uint32_t gpu, GpuApi::Handle s, const Probe& p, uint64_t* times, uint32_t slot) {
  const Gpu& g = gpus_[gpu];
  bool raw = times == block_.calibration;  // calibration: raw ticks, the all-zero descriptor after its times
  uint64_t t = at(gpu, times), cells = at(gpu, block_.mem.cells), seen = at(gpu, block_.mem.seen);
  uint64_t desc = raw ? at(gpu, block_.calibration + 2) : at(gpu, block_.desc);
  uint32_t d = raw ? 0 : p.desc;
  uint64_t word = p.word == kNone ? 0 : at(gpu, block_.mem.words + p.word);
  uint32_t width = p.width, stamp = p.stamp;
  uint64_t duration = p.duration, value = p.value, hz = raw ? 0 : g.hz, shift = raw ? 0 : g.shift;
  // qvet_probe's parameters (devices/probe_kernel.h), in order; pointers are 64-bit device addresses.
  void* args[] = {&t, &slot, &stamp, &duration, &cells, &desc, &d, &seen, &word, &value, &width, &hz, &shift};
  return use(gpu) && api_->launch(gpu, s, args);
}

void GpuStreamBackend::record(uint32_t s, uint32_t event) {
  uint32_t g = stream_gpu_[s];
  if (!use(g)) return;
  auto it = events_.find(event);
  if (it == events_.end()) {
    GpuApi::Handle e = api_->event_create();
    if (!e) return;
    it = events_.insert({event, {e, g}}).first;
  }
  api_->event_record(it->second.first, streams_[s]);
}

void GpuStreamBackend::wait_event(uint32_t s, uint32_t event) {
  auto it = events_.find(event);
  if (it == events_.end()) return void(error_ = error_.empty() ? std::string(name()) + ": an event was waited before it was recorded" : error_);
  if (use(stream_gpu_[s])) api_->wait_event(streams_[s], it->second.first);
}

bool GpuStreamBackend::idle() {
  for (uint32_t s = 0; s < streams_.size(); ++s) {
    if (!use(stream_gpu_[s])) return true;
    int q = api_->stream_query(streams_[s]);
    if (q == 0) return false;
    if (q < 0) return true;  // failed: it will run nothing more
  }
  return true;
}

GpuStreamBackend::~GpuStreamBackend() {
  if (gpus_added_ == 0) return;
  // Streams still running would read freed memory: a busy device is left to process exit.
  if (!idle()) return;
  for (uint32_t g = 0; g < gpus_.size(); ++g)
    if (gpus_[g].stream && use(g) && api_->stream_query(gpus_[g].stream) == 0) return;
  for (uint32_t s = 0; s < streams_.size(); ++s)
    if (use(stream_gpu_[s])) api_->stream_destroy(streams_[s]);
  for (uint32_t g = 0; g < gpus_.size(); ++g)
    if (gpus_[g].stream && use(g)) api_->stream_destroy(gpus_[g].stream);
  for (auto& [id, e] : events_)
    if (use(e.second)) api_->event_destroy(e.first);
  if (host_ && use(0)) api_->host_free(host_);
  for (uint32_t g = 0; g < gpus_added_; ++g) api_->remove_gpu(g);
}

}  // namespace

std::unique_ptr<Backend> make_gpu_stream_backend(std::unique_ptr<GpuApi> api) {
  return std::make_unique<GpuStreamBackend>(std::move(api));
}

}  // namespace qvet
