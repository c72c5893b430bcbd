// `qvet gen`: deterministic synthetic programs in the tinygrad eager pattern (each queue waits
// on its own timeline's previous value and on producers' timelines, then signals the next value),
// clean unless missing waits are injected with --bugs.
#pragma once
#include <stdexcept>
#include <cstdint>
#include <string>
#include <vector>

namespace qvet {

struct GenUsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct GenOptions {
  int devices = 2, queues_per_device = 2;
  uint64_t commands = 1000;
  uint64_t seed = 1;
  int sync_every = 10;     // commands per batch (one batch ends with a signal, starts with waits)
  int cross_percent = 50;  // batches that also wait on another queue's timeline and read its output
  int bugs = 0;            // missing cross-queue waits to inject
  std::string arch = "nv";  // nv | amd | strict | mixed
  std::string format = "hcq";
  bool symbolic = false;  // a `param tv in 0..2` as the threshold of each queue's first cross wait
  // eager (the pattern above), or one of the shapes that stress one cost of the checker
  // (bench/run.sh measures each): chained-waits, sliding-reads, many-queues, param-loop, overlap-copies, racing-pairs, host-refill.
  std::string shape = "eager";
};

// Writes the program; `bug_lines` receives the line of each injected bug.
std::string generate_program(const GenOptions& o, std::vector<uint64_t>* bug_lines = nullptr);
std::string gen_help();
int run_gen(int argc, char** argv);

}  // namespace qvet
