// qvet's command line: the options every command reads (Args) and their parsing; --stats timing.
// Errors in the command line are UsageError (exit 2, with the usage line).
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/expr.h"
#include "core/syntax/parser.h"
#include "model/wait_rule.h"

namespace qvet::cli {

struct UsageError {
  std::string message;
};

struct Args {
  std::vector<std::string> files;
  std::string format;
  std::vector<std::string> formats;  // every --format given (encode takes several)
  bool expect = false, werror = false;
  std::vector<std::pair<std::string, i128>> params;
  LoadOptions load;  // --ignore-packet
  uint32_t around = 0;
  std::string out;  // fix -o
  bool witness = false;
  std::string witness_file;  // --witness=FILE
  int radius = 3;
  bool help = false;
  bool stats = false;
  unsigned jobs = 0;  // check -j N: files checked at once (0: the number of cores)
  std::vector<std::string> rules;  // --rules: run only these (default: all)
  EngineMode engine = EngineMode::Indexed;  // --engine
  size_t event_budget = 0;         // --event-budget (0: VerifyOptions' default)
  // sim
  uint64_t runs = 100, seed = 1;
  int depth = 3;
  std::string policy = "random";
  bool compare = false;
  std::string trace_file, timeline_file;
  // run
  std::string on, map;
  bool force = false, plan = false;
  uint64_t timeout_ms = 2000;
  bool runs_given = false;
  uint64_t run = 0;  // sim --run K: the run --trace and --timeline draw
  bool run_given = false;
};

// --stats: wall time per phase and peak memory, on standard error (for benchmarks).
struct Stopwatch {
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  double lap() {
    auto t = std::chrono::steady_clock::now();
    double s = std::chrono::duration<double>(t - t0).count();
    t0 = t;
    return s;
  }
};

long peak_rss_kb();
i128 parse_number(const std::string& s, const std::string& what);
// An integer option within [lo, hi]: a count, a line, a seed (never wrapped into range).
i128 parse_bounded(const std::string& s, const std::string& what, i128 lo, i128 hi);
// A file option's value: never empty (an empty one would be ignored silently).
std::string file_value(const std::string& v, const std::string& what);
// The options after the command name (argv[start] on).
Args parse_args(int argc, char** argv, int start);

}  // namespace qvet::cli
