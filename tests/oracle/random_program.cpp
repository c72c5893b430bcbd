#include "tests/oracle/random_program.h"

#include <random>
#include <vector>

namespace qvet::oracle {

namespace {

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}

  std::string program() {
    const char* archs[] = {"nv", "amd", "strict"};
    int ndev = 1 + pick(3);
    for (int d = 0; d < ndev; ++d) {
      arch_.push_back(archs[pick(3)]);
      line("device d" + std::to_string(d) + " " + arch_.back());
    }
    for (int a = 0; a < ndev; ++a)
      for (int b = a + 1; b < ndev; ++b)
        if (pick(10) < 8) line("peer d" + std::to_string(a) + " d" + std::to_string(b));
    int nbuf = 1 + pick(3);
    for (int b = 0; b < nbuf; ++b) {
      line("buffer b" + std::to_string(b) + " on " + owner(ndev) + " 64");
      live_.push_back(true);
    }
    if (pick(3) == 0) views_ = 1, line("buffer v0 = b0[16:48]");
    if (ndev > 1 && pick(4) == 0) line("map b0 into d" + std::to_string(1 + pick(ndev - 1)));
    int nsig = 1 + pick(3);
    for (int s = 0; s < nsig; ++s)
      line("signal s" + std::to_string(s) + " on " + owner(ndev) + (pick(4) == 0 ? " = " + value() : ""));
    nsig_ = nsig;
    const char* modes[] = {"", "", " ordering serial", " ordering overlap", " ordering chained"};
    int nq = 1 + pick(4);
    for (int q = 0; q < nq; ++q) {
      bool copy = pick(4) == 0;
      copy_.push_back(copy);
      line("queue q" + std::to_string(q) + " on d" + std::to_string(pick(ndev)) + (copy ? " copy" : " compute") + modes[pick(5)]);
    }
    if (pick(3) == 0) {
      line("commands L(k) {");
      line("  wait " + sig() + " >= k");
      line("  exec lk reads " + range() + " writes " + range());
      line("  signal " + sig() + " = k + 1");
      line("}");
      list_ = true;
    }
    int nstmt = 3 + pick(7);
    for (int i = 0; i < nstmt; ++i) host_statement(nq, "", 0);
    return text_;
  }

 private:
  std::mt19937_64 rng_;
  std::string text_;
  std::vector<std::string> arch_;
  std::vector<bool> copy_, live_;
  int views_ = 0, nsig_ = 0;
  bool list_ = false;

  int pick(int n) { return int(rng_() % uint64_t(n)); }
  void line(const std::string& s) { text_ += s + "\n"; }
  std::string owner(int ndev) { return pick(3) == 0 ? "host" : "d" + std::to_string(pick(ndev)); }
  std::string sig() { return "s" + std::to_string(pick(nsig_)); }
  // Small timeline values (0 among them: resets), a value nobody writes, values around 2^32 (32-bit
  // wraps) and around 2^63 (where nv's circular compare stops agreeing with >=).
  std::string value() {
    const char* wide[] = {"2^32 - 1", "2^32", "2^32 + 1", "0xffffffff", "2^63 - 1", "2^63"};
    int r = pick(20);
    if (r < 16) return std::to_string(r % 4);
    if (r < 18) return "7";
    return wide[pick(6)];
  }
  std::string range() {
    static const char* spans[] = {"", "[0:16]", "[16:32]", "[0:32]", "[32:64]", "[8:24]"};
    int nb = int(live_.size());
    if (views_ && pick(6) == 0) return "v0" + std::string(pick(2) ? "" : "[0:16]");
    return "b" + std::to_string(pick(nb)) + spans[pick(6)];
  }
  std::string command(bool copy, const std::string& var) {
    std::string v = var.empty() || pick(2) ? value() : var + (pick(2) ? "" : " + 1");
    switch (pick(copy ? 7 : 10)) {
      case 0: case 1: return "wait " + sig() + " >= " + v;
      case 2: case 3: return "signal " + sig() + " = " + v;
      case 4: return pick(2) ? "barrier" : "timestamp " + sig();
      case 5: case 6: {
        std::string lo = pick(2) ? "[0:16]" : "[16:32]", hi = pick(2) ? "[32:48]" : "[8:24]";
        int a = pick(int(live_.size())), b = pick(int(live_.size()));
        return "copy b" + std::to_string(a) + lo + " -> b" + std::to_string(b) + hi;
      }
      case 7: return "memory_barrier";
      default: {
        std::string s = "exec k" + std::to_string(pick(3));
        if (pick(4)) s += " reads " + range();
        if (pick(4)) s += " writes " + range();
        return s;
      }
    }
  }
  void host_statement(int nq, const std::string& var, int depth) {
    std::string in(depth * 2, ' ');
    int r = pick(20);
    if (r < 9) {
      int q = pick(nq);
      if (list_ && pick(5) == 0) {
        line(in + "submit q" + std::to_string(q) + " L(k = " + (var.empty() ? value() : var) + ")");
        return;
      }
      line(in + "submit q" + std::to_string(q) + " {");
      int n = 1 + pick(4);
      for (int i = 0; i < n; ++i) line(in + "  " + command(copy_[size_t(q)] && pick(8), var));
      line(in + "}");
    } else if (r < 12) {
      line(in + "wait " + sig() + " >= " + (var.empty() || pick(2) ? value() : var));
    } else if (r < 14) {
      line(in + "signal " + sig() + " = " + (var.empty() || pick(2) ? value() : var + " + 1"));
    } else if (r < 16) {
      line(in + (pick(2) ? "read " : "write ") + range());
    } else if (r < 18 && depth == 0) {
      // Frees and allocs at top level only, so the generator knows what is live.
      size_t b = size_t(pick(int(live_.size())));
      line(in + (live_[b] ? "free b" : "alloc b") + std::to_string(b));
      live_[b] = !live_[b];
    } else if (depth == 0) {
      line("repeat i in 0..1 {");
      int n = 1 + pick(2);
      for (int i = 0; i < n; ++i) host_statement(nq, "i", 1);
      line("}");
    } else {
      line(in + "read " + range());
    }
  }
};

}  // namespace

std::string random_program(uint64_t seed) { return Gen(seed).program(); }

}  // namespace qvet::oracle
