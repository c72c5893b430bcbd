#include "tests/fake_drivers/fake_gpu.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

namespace qvet::fake {

namespace {

struct Knobs {
  int devices = 2;
  uint64_t delay_us = 30;
  std::string fault_call, fault_what;
  uint64_t fault_nth = 1;
  Knobs() {
    if (const char* v = std::getenv("QVET_FAKE_DEVICES")) devices = std::atoi(v);
    if (const char* v = std::getenv("QVET_FAKE_DELAY_US")) delay_us = std::strtoull(v, nullptr, 10);
    if (const char* v = std::getenv("QVET_FAKE_FAULT"); v && *v) {
      std::string f = v;
      size_t colon = f.find(':'), hash = f.find('#');
      fault_call = f.substr(0, colon);
      if (colon != std::string::npos) fault_what = f.substr(colon + 1, hash == std::string::npos ? std::string::npos : hash - colon - 1);
      if (hash != std::string::npos) fault_nth = std::strtoull(f.c_str() + hash + 1, nullptr, 10);
    }
  }
};

// Never destroyed: streams' threads may use them until the exit check runs.
struct State {
  Knobs knobs;
  std::mutex m;
  std::string name = "fake driver";
  std::map<std::string, uint64_t> calls;
  std::map<std::string, int64_t> live;
  std::map<uintptr_t, size_t> pinned;        // base: bytes
  std::map<uint64_t, uint64_t> device_wrote;  // address: the last value a device wrote there
};
State& state() {
  static State* s = new State;
  return *s;
}

thread_local std::atomic<bool>* running_stop = nullptr;  // the stop flag of the stream this thread runs

uint64_t next(uint64_t& x) {  // splitmix64
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t read_word(uint64_t address, int bytes) {
  if (bytes == 8) return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(address)).load(std::memory_order_acquire);
  return std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(address)).load(std::memory_order_acquire);
}

// The leak check, when the library is unloaded at exit.
__attribute__((destructor)) void check_released() {
  State& s = state();
  std::string left;
  for (auto& [kind, n] : s.live)
    if (n) left += (left.empty() ? "" : ", ") + std::to_string(n) + " " + kind + "(s)";
  if (left.empty()) return;
  std::fprintf(stderr, "%s: not released at exit: %s\n", s.name.c_str(), left.c_str());
  std::fflush(stderr);
  _exit(70);
}

}  // namespace

void set_driver_name(const char* name) {
  std::lock_guard g(state().m);
  state().name = name;
}

Fault take_fault(const char* call) {
  State& s = state();
  std::lock_guard g(s.m);
  if (s.knobs.fault_call != call || ++s.calls[call] != s.knobs.fault_nth) return {};
  if (s.knobs.fault_what == "hang") return {true, true, {}};
  return {true, false, s.knobs.fault_what};
}

int device_count() { return state().knobs.devices; }

void created(const char* kind) {
  std::lock_guard g(state().m);
  ++state().live[kind];
}
void released(const char* kind) {
  std::lock_guard g(state().m);
  --state().live[kind];
}

void* pinned_alloc(size_t bytes) {
  void* p = std::calloc(1, bytes ? bytes : 1);
  if (!p) return nullptr;
  std::lock_guard g(state().m);
  state().pinned[reinterpret_cast<uintptr_t>(p)] = bytes;
  return p;
}

bool pinned_free(void* p) {
  {
    std::lock_guard g(state().m);
    if (!state().pinned.erase(reinterpret_cast<uintptr_t>(p))) return false;
  }
  std::free(p);
  return true;
}

bool pinned(uint64_t address, size_t bytes) {
  std::lock_guard g(state().m);
  auto& m = state().pinned;
  auto it = m.upper_bound(uintptr_t(address));
  if (it == m.begin()) return false;
  --it;
  return address >= it->first && address + bytes >= address && address + bytes <= it->first + it->second;
}

Stream::Stream(uint64_t seed) : rng_(seed), thread_([this] { run(); }) {}

Stream::~Stream() {
  {
    std::lock_guard g(m_);
    stop_ = true;
    ops_.clear();
  }
  cv_.notify_all();
  thread_.join();
}

void Stream::push(Op op) {
  {
    std::lock_guard g(m_);
    ops_.push_back(std::move(op));
  }
  cv_.notify_all();
}

bool Stream::idle() {
  std::lock_guard g(m_);
  return ops_.empty() && !busy_;
}

void Stream::run() {
  running_stop = &stop_;
  for (;;) {
    Op op;
    {
      std::unique_lock l(m_);
      cv_.wait(l, [&] { return stop_ || !ops_.empty(); });
      if (stop_) return;
      op = std::move(ops_.front());
      ops_.pop_front();
      busy_ = true;
    }
    // The drawn delay: streams drift against each other, so unordered work overlaps in some runs.
    if (uint64_t d = state().knobs.delay_us) std::this_thread::sleep_for(std::chrono::microseconds(next(rng_) % (d + 1)));
    op();
    std::lock_guard g(m_);
    busy_ = false;
  }
}

bool spin() {
  std::this_thread::yield();
  return running_stop && running_stop->load();
}

void wait_marker(const Marker& marker) {
  while (marker && !marker->load() && !(running_stop && running_stop->load())) std::this_thread::sleep_for(std::chrono::microseconds(5));
}

void wait_word(uint64_t address, int bytes, const std::function<bool(uint64_t)>& met, bool deaf) {
  uint64_t at_start = read_word(address, bytes);
  for (;;) {
    uint64_t w = read_word(address, bytes);
    if (!deaf && met(w)) return;
    if (deaf && w != at_start && met(w)) {
      std::lock_guard g(state().m);
      auto it = state().device_wrote.find(address);
      if (it == state().device_wrote.end() || it->second != w) return;
    }
    if (running_stop && running_stop->load()) return;
    std::this_thread::sleep_for(std::chrono::microseconds(5));
  }
}

void write_word(uint64_t address, uint64_t value, int bytes) {
  {
    std::lock_guard g(state().m);
    state().device_wrote[address] = value;
  }
  if (bytes == 8) std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(address)).store(value, std::memory_order_release);
  else std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(address)).store(uint32_t(value), std::memory_order_release);
}

}  // namespace qvet::fake

namespace qvet::fake {

ProbeArgs probe_args(void** p) {
  ProbeArgs a;
  auto get = [&](auto& field, int i) { std::memcpy(&field, p[i], sizeof field); };
  get(a.times, 0), get(a.slot, 1), get(a.stamp, 2), get(a.duration, 3), get(a.cells, 4), get(a.desc, 5), get(a.d, 6);
  get(a.seen, 7), get(a.word, 8), get(a.value, 9), get(a.width, 10), get(a.hz, 11), get(a.shift, 12);
  return a;
}

bool probe_args_valid(const ProbeArgs& a) {
  return pinned(a.times + 16 * uint64_t(a.slot), 16) && pinned(a.cells, 1) && pinned(a.desc + 4 * uint64_t(a.d), 4) &&
         pinned(a.seen, 1) && (a.word == 0 || (a.word % 8 == 0 && pinned(a.word, 8)));
}

}  // namespace qvet::fake
