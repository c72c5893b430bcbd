/* libqvet's C interface as a C99 caller sees it: a program built line by line with tags, the
 * findings read through the accessors, and every bad call answered with a status and a message,
 * never a crash. Run by CTest (api/c), also in the sanitizer build. */
#include <stdio.h>
#include <string.h>

#include <qvet/qvet.h>

static int failures = 0;
#define CHECK(c)                                                     \
  do {                                                               \
    if (!(c)) {                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
      ++failures;                                                    \
    }                                                                \
  } while (0)

/* A program parsed from `text`, named `name`. */
static qvet_program* parsed(const char* name, const char* text) {
  qvet_program* p = qvet_program_new(name);
  CHECK(qvet_program_parse(p, text, strlen(text)) == QVET_OK);
  return p;
}

/* `p` checked with `o`: the check ran and found `count` diagnostics. */
static qvet_result* checked(const qvet_program* p, const qvet_options* o, size_t count) {
  qvet_result* r = qvet_check(p, o);
  CHECK(qvet_result_status(r) == QVET_OK && qvet_result_count(r) == count);
  return r;
}

static qvet_program* racy(void) {
  qvet_program* p = qvet_program_new("racy.hcq");
  CHECK(qvet_program_add(p, "device g nv", "setup.py:1") == QVET_OK);
  CHECK(qvet_program_add(p, "buffer a on g 4096", "setup.py:2") == QVET_OK);
  CHECK(qvet_program_add(p, "queue c0 on g compute", "setup.py:3") == QVET_OK);
  CHECK(qvet_program_add(p, "submit c0 {", "run.py:10") == QVET_OK);
  CHECK(qvet_program_add(p, "  exec k writes a", "run.py:11") == QVET_OK);
  CHECK(qvet_program_add(p, "}", "run.py:10") == QVET_OK);
  CHECK(qvet_program_add(p, "read a", "run.py:12") == QVET_OK);
  return p;
}

int main(void) {
  CHECK(qvet_abi() == QVET_ABI);
  CHECK(strlen(qvet_version()) > 0);

  /* A race, found with the tags of both lines. */
  qvet_program* p = racy();
  qvet_result* r = checked(p, NULL, 1);
  CHECK(qvet_result_exit_code(r) == 1);
  CHECK(strcmp(qvet_diag_rule(r, 0), "race") == 0);
  CHECK(qvet_diag_severity(r, 0) == QVET_ERROR);
  CHECK(qvet_diag_line(r, 0) == 7 && qvet_diag_related_line(r, 0) == 5);
  CHECK(qvet_diag_tag(r, 0) && strcmp(qvet_diag_tag(r, 0), "run.py:12") == 0);
  CHECK(qvet_diag_related_tag(r, 0) && strcmp(qvet_diag_related_tag(r, 0), "run.py:11") == 0);
  CHECK(qvet_diag_fix_count(r, 0) >= 1 && strlen(qvet_diag_fix(r, 0, 0)) > 0);
  CHECK(strstr(qvet_result_json(r), "\"rule\": \"race\"") || strstr(qvet_result_json(r), "\"rule\":\"race\""));
  /* Out of range: NULL and 0, no crash. */
  CHECK(qvet_diag_rule(r, 1) == NULL && qvet_diag_message(r, 99) == NULL && qvet_diag_line(r, 1) == 0);
  CHECK(qvet_diag_note(r, 0, 1000) == NULL && qvet_diag_fix(r, 0, 1000) == NULL && qvet_diag_tag(r, 5) == NULL);
  CHECK(qvet_diag_severity(r, 7) == QVET_NOTE && qvet_diag_severity(NULL, 0) == QVET_NOTE);
  qvet_result_free(r);
  qvet_program_free(p);

  /* A warning only (two unordered writes of a signal): exit 0, and 1 with werror; a param bound. */
  p = parsed("warn.hcq",
             "param n in 1..4\ndevice g amd\nsignal s on host = 0\nqueue c0 on g compute\nqueue c1 on g compute\n"
             "submit c0 {\n  signal s = n\n}\nsubmit c1 {\n  signal s = 9\n}\n");
  qvet_options* w = qvet_options_new();
  CHECK(qvet_options_set_param(w, "n", "3") == QVET_OK);
  r = checked(p, w, 1);
  CHECK(qvet_result_exit_code(r) == 0 && qvet_diag_severity(r, 0) == QVET_WARNING && strcmp(qvet_diag_rule(r, 0), "signal-race") == 0);
  qvet_result_free(r);
  CHECK(qvet_options_set_werror(w, 1) == QVET_OK && qvet_options_set_witness(w, 1) == QVET_OK);
  r = qvet_check(p, w);
  CHECK(qvet_result_exit_code(r) == 1);
  qvet_result_free(r);
  qvet_options_free(w);
  qvet_program_free(p);

  /* A clean program, parsed whole; options: some rules only. */
  p = parsed("fixed.hcq",
             "device g nv\nbuffer a on g 4096\nsignal s on host = 0\nqueue c0 on g compute\n"
             "submit c0 {\n  exec k writes a\n  signal s = 1\n}\nwait s >= 1\nread a\n");
  qvet_options* o = qvet_options_new();
  CHECK(qvet_options_set_rules(o, "race,deadlock") == QVET_OK);
  r = checked(p, o, 0);
  CHECK(qvet_result_exit_code(r) == 0);
  qvet_result_free(r);

  /* Bad input: the error names the line and its tag. */
  CHECK(qvet_program_add(p, "exec k reads nosuch", "run.py:40") == QVET_OK);  /* (read whole at check) */
  r = qvet_check(p, o);
  CHECK(qvet_result_status(r) == QVET_INVALID_INPUT && qvet_result_exit_code(r) == 2);
  CHECK(strstr(qvet_result_error(r), "fixed.hcq:11") != NULL);
  CHECK(strstr(qvet_result_error(r), "run.py:40") != NULL);
  qvet_result_free(r);
  qvet_program_free(p);

  /* Unknown names, ranges out of bounds, a free of what is not live, values past 2^64. */
  const char* bad[] = {
      "device g nv\nqueue c0 on h compute\n",
      "device g nv\nbuffer a on g 64\nqueue c0 on g compute\nsubmit c0 {\n  exec k reads a[0:128]\n}\n",
      "device g nv\nbuffer a on g 64\nfree a\nfree a\n",
      "device g nv\nsignal s on host = 18446744073709551616\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    /* Read at once by parse, or (a lifetime rule, which elaboration checks) by check. */
    p = qvet_program_new(NULL);
    qvet_status st = qvet_program_parse(p, bad[i], strlen(bad[i]));
    CHECK(st == QVET_OK || st == QVET_INVALID_INPUT);
    if (st == QVET_OK) {
      r = qvet_check(p, NULL);
      CHECK(qvet_result_status(r) == QVET_INVALID_INPUT && qvet_result_exit_code(r) == 2);
      CHECK(strstr(qvet_result_error(r), "<program>:") != NULL);
      qvet_result_free(r);
    } else {
      CHECK(strstr(qvet_program_error(p), "<program>:") != NULL);
    }
    qvet_program_free(p);
  }

  /* Typed calls: the bundled example built call by call gives what its text gives. */
  {
    qvet_program* t = qvet_program_new("example.hcq");
    qvet_range act = {"act", 0, 0}, act1 = {"act1", 0, 0};
    CHECK(qvet_add_device(t, "gpu0", QVET_NV, "rt.py:1") == QVET_OK);
    CHECK(qvet_add_device(t, "gpu1", QVET_NV, "rt.py:2") == QVET_OK);
    CHECK(qvet_add_peer(t, "gpu0", "gpu1", "rt.py:3") == QVET_OK);
    CHECK(qvet_add_buffer(t, "act", "gpu0", 4096, "rt.py:4") == QVET_OK);
    CHECK(qvet_add_buffer(t, "act1", "gpu1", 4096, "rt.py:5") == QVET_OK);
    CHECK(qvet_add_signal(t, "tl", "host", 0, "rt.py:6") == QVET_OK);
    CHECK(qvet_add_queue(t, "c0", "gpu0", QVET_COMPUTE, QVET_ORDERING_DEFAULT, "rt.py:7") == QVET_OK);
    CHECK(qvet_add_queue(t, "x1", "gpu1", QVET_COPY, QVET_ORDERING_DEFAULT, "rt.py:8") == QVET_OK);
    CHECK(qvet_begin_submit(t, "c0", "rt.py:9") == QVET_OK);
    CHECK(qvet_cmd_exec(t, "matmul", NULL, 0, &act, 1, "rt.py:10") == QVET_OK);
    CHECK(qvet_cmd_signal(t, "tl", 1, "rt.py:11") == QVET_OK);
    CHECK(qvet_end_submit(t, "rt.py:9") == QVET_OK);
    CHECK(qvet_begin_submit(t, "x1", "rt.py:12") == QVET_OK);
    CHECK(qvet_cmd_copy(t, act, act1, "rt.py:13") == QVET_OK);
    CHECK(qvet_cmd_signal(t, "tl", 2, "rt.py:14") == QVET_OK);
    CHECK(qvet_end_submit(t, "rt.py:12") == QVET_OK);
    CHECK(qvet_host_wait(t, "tl", 2, "rt.py:15") == QVET_OK);
    CHECK(qvet_host_read(t, act1, "rt.py:16") == QVET_OK);
    const char* text =
        "device gpu0 nv\ndevice gpu1 nv\npeer gpu0 gpu1\nbuffer act on gpu0 4096\nbuffer act1 on gpu1 4096\n"
        "signal tl on host = 0\nqueue c0 on gpu0 compute\nqueue x1 on gpu1 copy\nsubmit c0 {\n  exec matmul writes act\n"
        "  signal tl = 1\n}\nsubmit x1 {\n  copy act -> act1\n  signal tl = 2\n}\nwait tl >= 2\nread act1\n";
    qvet_program* whole = parsed("example.hcq", text);
    qvet_result* a = qvet_check(t, NULL);
    qvet_result* b = qvet_check(whole, NULL);
    CHECK(qvet_result_status(a) == QVET_OK && qvet_result_count(a) >= 1 && qvet_result_exit_code(a) == 1);
    CHECK(strcmp(qvet_result_json(a), qvet_result_json(b)) == 0);
    CHECK(strcmp(qvet_diag_rule(a, 0), "race") == 0 && strcmp(qvet_diag_tag(a, 0), "rt.py:13") == 0);
    CHECK(strcmp(qvet_diag_related_tag(a, 0), "rt.py:10") == 0);
    qvet_result_free(a);
    qvet_result_free(b);
    qvet_program_free(whole);

    /* Every other kind of statement, in a clean program. */
    qvet_range part = {"act", 0, 1024}, view = {"v", 0, 0}, tail = {"act", 1024, 2048};
    CHECK(qvet_add_view(t, "v", part, "rt.py:20") == QVET_OK);
    CHECK(qvet_add_map(t, "act1", "gpu0", "rt.py:21") == QVET_OK);
    CHECK(qvet_add_param(t, "n", 1, 4, "rt.py:22") == QVET_OK);
    CHECK(qvet_add_queue(t, "c1", "gpu0", QVET_COMPUTE, QVET_CHAINED, "rt.py:23") == QVET_OK);
    CHECK(qvet_begin_submit(t, "c1", "rt.py:24") == QVET_OK);
    CHECK(qvet_cmd_wait(t, "tl", 2, "rt.py:25") == QVET_OK);
    CHECK(qvet_cmd_barrier(t, "rt.py:26") == QVET_OK);
    CHECK(qvet_cmd_memory_barrier(t, "rt.py:27") == QVET_OK);
    CHECK(qvet_cmd_exec(t, "k", &view, 1, &tail, 1, "rt.py:28") == QVET_OK);
    CHECK(qvet_cmd_timestamp(t, "tl", "rt.py:29") == QVET_OK);
    CHECK(qvet_end_submit(t, "rt.py:24") == QVET_OK);
    CHECK(qvet_host_signal(t, "tl", 7, "rt.py:30") == QVET_OK);
    CHECK(qvet_host_write(t, part, "rt.py:31") == QVET_OK);
    CHECK(qvet_host_free(t, "act1", "rt.py:32") == QVET_OK);
    CHECK(qvet_host_alloc(t, "act1", "rt.py:33") == QVET_OK);
    a = qvet_check(t, NULL);
    CHECK(qvet_result_status(a) == QVET_OK);
    qvet_result_free(a);

    /* Bad calls: refused at once, naming the call and its tag; the program is unchanged. */
    qvet_range empty = {"act", 8, 8}, unnamed = {NULL, 0, 0};
    CHECK(qvet_add_device(t, "gpu 2", QVET_NV, "rt.py:40") == QVET_BAD_CALL);
    CHECK(strstr(qvet_program_error(t), "qvet_add_device (at rt.py:40)") && strstr(qvet_program_error(t), "'gpu 2' is not a name"));
    CHECK(qvet_add_device(t, "g9", (qvet_arch)9, NULL) == QVET_BAD_CALL && strstr(qvet_program_error(t), "architecture"));
    CHECK(qvet_add_queue(t, "q9", "gpu0", (qvet_engine)5, QVET_ORDERING_DEFAULT, NULL) == QVET_BAD_CALL);
    CHECK(qvet_add_queue(t, "q9", "gpu0", QVET_COPY, (qvet_ordering)7, NULL) == QVET_BAD_CALL);
    CHECK(qvet_add_buffer(t, "b\nsubmit", "gpu0", 64, NULL) == QVET_BAD_CALL);
    CHECK(qvet_add_signal(t, NULL, "host", 0, NULL) == QVET_BAD_CALL && strstr(qvet_program_error(t), "is NULL"));
    CHECK(qvet_add_param(t, "m", 5, 4, NULL) == QVET_BAD_CALL);
    CHECK(qvet_cmd_wait(t, "tl", 1, "rt.py:41") == QVET_BAD_CALL && strstr(qvet_program_error(t), "qvet_begin_submit"));
    CHECK(qvet_end_submit(t, NULL) == QVET_BAD_CALL);
    CHECK(qvet_host_read(t, empty, NULL) == QVET_BAD_CALL && strstr(qvet_program_error(t), "empty"));
    CHECK(qvet_host_write(t, unnamed, NULL) == QVET_BAD_CALL);
    CHECK(qvet_begin_submit(t, "c0", NULL) == QVET_OK);
    CHECK(qvet_host_wait(t, "tl", 1, NULL) == QVET_BAD_CALL && strstr(qvet_program_error(t), "only commands"));
    CHECK(qvet_begin_submit(t, "c0", NULL) == QVET_BAD_CALL);
    CHECK(qvet_cmd_exec(t, "k", NULL, 2, NULL, 0, NULL) == QVET_BAD_CALL);
    CHECK(qvet_cmd_copy(t, act, empty, NULL) == QVET_BAD_CALL);
    CHECK(qvet_end_submit(t, NULL) == QVET_OK);
    CHECK(qvet_add_device(NULL, "g", QVET_NV, NULL) == QVET_BAD_CALL);
    a = qvet_check(t, NULL);
    CHECK(qvet_result_status(a) == QVET_OK);  /* (only the empty batch was added) */
    qvet_result_free(a);

    /* What needs the whole program is found by qvet_check, naming the call and its tag. */
    qvet_range past = {"act", 0, 8192};
    CHECK(qvet_host_read(t, past, "rt.py:50") == QVET_OK);
    a = qvet_check(t, NULL);
    CHECK(qvet_result_status(a) == QVET_INVALID_INPUT && strstr(qvet_result_error(a), "(qvet_host_read at rt.py:50)"));
    qvet_result_free(a);
    qvet_program_free(t);
  }

  /* Null pointers and bad options: a status, never a crash. */
  CHECK(qvet_program_parse(NULL, "x", 1) == QVET_BAD_CALL);
  CHECK(qvet_program_add(NULL, "x", NULL) == QVET_BAD_CALL);
  p = qvet_program_new(NULL);
  CHECK(qvet_program_add(p, NULL, NULL) == QVET_BAD_CALL && strlen(qvet_program_error(p)) > 0);
  CHECK(qvet_program_add(p, "device g nv\nbuffer a on g 64", NULL) == QVET_BAD_CALL);
  CHECK(qvet_program_parse(p, NULL, 5) == QVET_BAD_CALL);
  CHECK(qvet_program_parse(p, "{\"statements\": []}", 18) != QVET_BAD_CALL);
  CHECK(qvet_program_add(p, "device g nv", "x.py:1") == QVET_BAD_CALL);  /* JSON is not extended by lines */
  CHECK(strstr(qvet_program_error(p), "JSON") != NULL);
  CHECK(qvet_options_set_rules(o, "nosuchrule") == QVET_BAD_CALL);
  CHECK(qvet_options_set_rules(NULL, "race") == QVET_BAD_CALL);
  CHECK(qvet_options_set_param(o, "n", "twelve") == QVET_BAD_CALL);
  CHECK(qvet_options_set_param(o, NULL, "1") == QVET_BAD_CALL);
  r = qvet_check(NULL, o);
  CHECK(qvet_result_status(r) == QVET_BAD_CALL && qvet_result_exit_code(r) == 3);
  qvet_result_free(r);
  CHECK(qvet_result_status(NULL) == QVET_BAD_CALL && qvet_result_count(NULL) == 0 && qvet_diag_rule(NULL, 0) == NULL);
  qvet_result_free(NULL);
  qvet_program_free(NULL);
  qvet_options_free(NULL);
  qvet_options_free(o);
  qvet_program_free(p);

  if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
  else printf("api/c: all checks passed\n");
  return failures ? 1 : 0;
}
