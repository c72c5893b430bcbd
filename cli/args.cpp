#include "cli/args.h"

#include <sys/resource.h>

#include <algorithm>
#include <cctype>

#include "core/diagnostic.h"
#include "core/syntax/option_values.h"
#include "devices/streams.h"

namespace qvet::cli {

long peak_rss_kb() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

i128 parse_number(const std::string& s, const std::string& what) {
  i128 v = 0;
  if (!parse_integer(s, v)) throw UsageError{what + " needs an integer, got '" + s + "'"};
  return v;
}

i128 parse_bounded(const std::string& s, const std::string& what, i128 lo, i128 hi) {
  i128 v = parse_number(s, what);
  if (v < lo || v > hi) throw UsageError{what + " is between " + i128_to_string(lo) + " and " + i128_to_string(hi) + ", got " + s};
  return v;
}

std::string file_value(const std::string& v, const std::string& what) {
  if (v.empty()) throw UsageError{what + " needs a file name"};
  return v;
}

Args parse_args(int argc, char** argv, int start) {
  Args a;
  for (int i = start; i < argc; ++i) {
    std::string s = argv[i];
    auto value = [&](const std::string& flag) -> std::string {
      auto eq = s.find('=');
      if (eq != std::string::npos && s.rfind("--", 0) == 0 && s.substr(0, eq) == flag) return s.substr(eq + 1);
      if (i + 1 >= argc) throw UsageError{flag + " needs a value"};
      return argv[++i];
    };
    auto is = [&](const char* flag) { return s == flag || s.rfind(std::string(flag) + "=", 0) == 0; };
    if (s == "--help" || s == "-h") a.help = true;
    else if (is("--format")) a.format = value("--format"), a.formats.push_back(a.format);
    else if (s == "--expect") a.expect = true;
    else if (s == "--werror") a.werror = true;
    else if (s == "--stats") a.stats = true;
    else if (s == "-j" || is("--jobs") || (s.size() > 2 && s.rfind("-j", 0) == 0 && std::isdigit((unsigned char)s[2]))) {
      std::string v = s == "-j" ? (i + 1 < argc ? argv[++i] : throw UsageError{"-j needs a number"}) : s.rfind("-j", 0) == 0 ? s.substr(2) : value("--jobs");
      a.jobs = unsigned(parse_bounded(v, "-j", 1, 1024));
    }
    else if (s == "--witness") a.witness = true;
    else if (s.rfind("--witness=", 0) == 0) a.witness = true, a.witness_file = s.substr(10);
    else if (is("--rules")) {
      if (std::string unknown; !parse_rule_list(value("--rules"), a.rules, unknown))
        throw UsageError{"--rules: unknown rule '" + unknown + "'"};
    }
    else if (is("--engine")) {
      if (!parse_engine_mode(value("--engine"), a.engine)) throw UsageError{"--engine: plain, indexed or checked"};
    }
    else if (is("--ignore-packet")) {
      // [FORMAT:]N, FORMAT amd-pm4 when left out (the first format, before there were others).
      std::string v = value("--ignore-packet"), fmt = "amd-pm4";
      if (auto colon = v.find(':'); colon != std::string::npos) fmt = v.substr(0, colon), v = v.substr(colon + 1);
      const StreamFormat* f = find_stream_format(fmt);
      if (!f) throw UsageError{"--ignore-packet: unknown stream format '" + fmt + "'"};
      i128 op = parse_number(v, "--ignore-packet");
      if (op < 0 || op > f->max_packet)
        throw UsageError{"--ignore-packet " + fmt + ":N takes " + std::string(f->packet_word) + " 0 to " + format_hex(f->max_packet)};
      if (const char* name = f->decoded_packet(uint32_t(op)))
        throw UsageError{"--ignore-packet " + fmt + ":" + format_hex(uint32_t(op)) + ": the decoder reads " + name +
                         " as a command or its ordering, so skipping it would drop what the stream does; only " + f->packet_word +
                         "s it does not decode can be skipped"};
      a.load.ignored_packets.push_back({fmt, uint32_t(op)});
    } else if (is("--param")) {
      std::string v = value("--param");
      auto eq = v.find('=');
      if (eq == std::string::npos) throw UsageError{"--param needs NAME=VALUE"};
      a.params.push_back({v.substr(0, eq), parse_number(v.substr(eq + 1), "--param " + v.substr(0, eq))});
    } else if (s == "-o" || is("--output")) {
      if (s == "-o" && i + 1 >= argc) throw UsageError{"-o needs a file"};
      a.out = s == "-o" ? argv[++i] : value("--output");
    } else if (is("--event-budget")) {
      i128 n = parse_number(value("--event-budget"), "--event-budget");
      if (n < 1 || n > i128(1) << 40) throw UsageError{"--event-budget is between 1 and 2^40"};
      a.event_budget = size_t(n);
    } else if (is("--around")) a.around = uint32_t(parse_bounded(value("--around"), "--around", 1, UINT32_MAX));
    else if (is("--radius")) a.radius = int(parse_bounded(value("--radius"), "--radius", 0, INT32_MAX));
    else if (is("--runs")) a.runs = uint64_t(parse_bounded(value("--runs"), "--runs", 0, i128(1) << 40)), a.runs_given = true;
    else if (is("--run")) a.run = uint64_t(parse_bounded(value("--run"), "--run", 0, i128(1) << 40)), a.run_given = true;
    else if (is("--on")) a.on = value("--on");
    else if (is("--map")) a.map = value("--map");
    else if (s == "--force") a.force = true;
    else if (s == "--plan") a.plan = true;
    else if (is("--timeout-ms")) a.timeout_ms = uint64_t(parse_bounded(value("--timeout-ms"), "--timeout-ms", 0, i128(1) << 40));
    else if (is("--seed")) a.seed = uint64_t(parse_bounded(value("--seed"), "--seed", 0, i128(UINT64_MAX)));
    else if (is("--depth")) a.depth = int(std::min<i128>(parse_number(value("--depth"), "--depth"), 64));
    else if (is("--policy")) a.policy = value("--policy");
    else if (s == "--compare") a.compare = true;
    else if (is("--trace")) a.trace_file = file_value(value("--trace"), "--trace");
    else if (is("--timeline")) a.timeline_file = file_value(value("--timeline"), "--timeline");
    else if (s.size() > 1 && s[0] == '-') throw UsageError{"unknown option '" + s + "'"};
    else if (s == "-" && std::count(a.files.begin(), a.files.end(), "-")) throw UsageError{"standard input ('-') can be read once"};
    else a.files.push_back(s);
  }
  return a;
}

}  // namespace qvet::cli
