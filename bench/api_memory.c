/* libqvet: the same program built by the typed calls, or parsed from its text, then checked; run
 * each under /usr/bin/time -f %M to compare peak memory (not a test). Build against build/:
 *   cc -O2 -Iinclude bench/api_memory.c -Lbuild -lqvet -Wl,-rpath,$PWD/build -o /tmp/api_memory
 *   /usr/bin/time -f "%e s %M KB" /tmp/api_memory calls 100000   (or: text 100000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <qvet/qvet.h>
/* argv[1]: "calls" or "text"; argv[2]: batches. The bench/api.py program: 4 queues, own timelines. */
int main(int argc, char** argv) {
  if (argc != 3) return fprintf(stderr, "usage: api_memory calls|text BATCHES\n"), 2;
  int calls = strcmp(argv[1], "calls") == 0;
  long n = atol(argv[2]);
  qvet_program* p = qvet_program_new("m");
  char name[64], name2[64], *text = NULL;
  size_t len = 0, cap = 0;
#define LINE(...) do { char b_[256]; int n_ = snprintf(b_, sizeof b_, __VA_ARGS__); if (len + n_ + 2 > cap) { cap = 2 * (len + n_ + 2); text = realloc(text, cap); } memcpy(text + len, b_, n_); len += n_; text[len++] = '\n'; } while (0)
  long done[4] = {0, 0, 0, 0};
  if (calls) {
    qvet_add_device(p, "g0", QVET_NV, "m.c:1"); qvet_add_device(p, "g1", QVET_NV, "m.c:2"); qvet_add_peer(p, "g0", "g1", "m.c:3");
    for (int i = 0; i < 4; ++i) {
      snprintf(name, sizeof name, "b%d", i); qvet_add_buffer(p, name, i % 2 ? "g1" : "g0", 4096, "m.c:4");
      snprintf(name, sizeof name, "t%d", i); qvet_add_signal(p, name, i % 2 ? "g1" : "g0", 0, "m.c:5");
      snprintf(name, sizeof name, "c%d", i); qvet_add_queue(p, name, i % 2 ? "g1" : "g0", QVET_COMPUTE, QVET_ORDERING_DEFAULT, "m.c:6");
    }
  } else {
    LINE("device g0 nv"); LINE("device g1 nv"); LINE("peer g0 g1");
    for (int i = 0; i < 4; ++i) { LINE("buffer b%d on g%d 4096", i, i % 2); LINE("signal t%d on g%d = 0", i, i % 2); LINE("queue c%d on g%d compute", i, i % 2); }
  }
  for (long k = 0; k < n; ++k) {
    int q = k % 4, prev = (k + 3) % 4;
    if (calls) {
      qvet_range r = {name2, 0, 0}, w = {name, 0, 0};
      snprintf(name, sizeof name, "c%d", q); qvet_begin_submit(p, name, "m.c:10");
      snprintf(name, sizeof name, "t%d", prev); qvet_cmd_wait(p, name, done[prev], "m.c:11");
      snprintf(name2, sizeof name2, "b%d", prev); snprintf(name, sizeof name, "b%d", q);
      char kn[16]; snprintf(kn, sizeof kn, "k%ld", k % 7);
      qvet_cmd_exec(p, kn, &r, 1, &w, 1, "m.c:12");
      snprintf(name, sizeof name, "t%d", q); qvet_cmd_signal(p, name, ++done[q], "m.c:13");
      qvet_end_submit(p, "m.c:10");
    } else {
      LINE("submit c%d {", q); LINE("  wait t%d >= %ld", prev, done[prev]); LINE("  exec k%ld reads b%d writes b%d", k % 7, prev, q);
      LINE("  signal t%d = %ld", q, ++done[q]); LINE("}");
    }
  }
  if (!calls) { if (qvet_program_parse(p, text, len) != QVET_OK) { fprintf(stderr, "%s\n", qvet_program_error(p)); return 2; } free(text); }
  qvet_result* r = qvet_check(p, NULL);
  printf("%s: status %d, %zu diagnostics\n", argv[1], qvet_result_status(r), qvet_result_count(r));
  qvet_result_free(r);
  qvet_program_free(p);
  return 0;
}
