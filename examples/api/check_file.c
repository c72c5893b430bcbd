/* libqvet from C: check a program file, print its findings as `qvet check --format json` does,
 * and exit as `qvet check` would. Build against an installed prefix P:
 *   cc check_file.c $(PKG_CONFIG_PATH=P/lib/pkgconfig pkg-config --cflags --libs qvet)
 * or with CMake: find_package(qvet) and target_link_libraries(... qvet::qvet). */
#include <stdio.h>
#include <stdlib.h>

#include <qvet/qvet.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILE.hcq\n", argv[0]);
    return 2;
  }
  FILE* f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 2;
  }
  char* text = NULL;
  size_t len = 0, cap = 0, n;
  char chunk[65536];
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (len + n > cap) {
      cap = 2 * (len + n);
      char* grown = realloc(text, cap);
      if (!grown) return free(text), fclose(f), 3;
      text = grown;
    }
    for (size_t i = 0; i < n; ++i) text[len + i] = chunk[i];
    len += n;
  }
  fclose(f);

  qvet_program* p = qvet_program_new(argv[1]);
  if (!p) return free(text), 3;
  if (qvet_program_parse(p, text, len) != QVET_OK) {
    fprintf(stderr, "%s\n", qvet_program_error(p));
    qvet_program_free(p);
    free(text);
    return 2;
  }
  free(text);
  qvet_result* r = qvet_check(p, NULL);
  int rc = qvet_result_exit_code(r);
  if (qvet_result_status(r) != QVET_OK) fprintf(stderr, "%s\n", qvet_result_error(r));
  else fputs(qvet_result_json(r), stdout);
  for (size_t i = 0; i < qvet_result_count(r); ++i)
    fprintf(stderr, "%s:%u: [%s] %s\n", argv[1], qvet_diag_line(r, i), qvet_diag_rule(r, i), qvet_diag_message(r, i));
  qvet_result_free(r);
  qvet_program_free(p);
  return rc;
}
