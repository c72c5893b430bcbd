/* libqvet: check GPU queue programs from inside a runtime (docs/api.md).
 *
 * A program is built from .hcq text (qvet_program_parse, JSON too), call by call (qvet_add_*,
 * qvet_cmd_*, qvet_host_*: one call per statement of the language), or line by line
 * (qvet_program_add). Every call carries a caller's tag such as "hcq2.py:311" that diagnostics
 * on its statement cite. qvet_check verifies it against the device
 * semantics exactly as `qvet check` does (every rule, every admissible param value) and returns a
 * result whose diagnostics are read through accessors or as the CLI's JSON.
 *
 * Errors are values: a call that fails returns a status other than QVET_OK, and
 * qvet_program_error / qvet_result_error say why, naming the statement and its tag. Nothing
 * aborts, nothing throws across this interface, and the library never writes to standard output
 * or standard error.
 *
 * Ownership: every pointer returned is owned by the object it came from (a program or a result)
 * and stays valid until that object is freed (qvet_program_error's: until the next call on that
 * program); strings are NUL-terminated UTF-8. Free each
 * program with qvet_program_free and each result with qvet_result_free (both accept NULL).
 *
 * Thread safety: independent programs and results may be used on different threads at once;
 * one program or result must not be used by two threads at the same time.
 *
 * Version: QVET_ABI changes when a declaration here changes incompatibly; qvet_abi() is the
 * library's. Symbols not declared here are hidden. */
#ifndef QVET_QVET_H
#define QVET_QVET_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define QVET_API __attribute__((visibility("default")))
#else
#define QVET_API
#endif

#define QVET_ABI 1

typedef enum qvet_status {
  QVET_OK = 0,
  QVET_INVALID_INPUT = 2, /* the program breaks a rule of the language (the CLI's exit 2) */
  QVET_INTERNAL = 3,      /* qvet failed (out of memory, a bug): the CLI's exit 3 */
  QVET_BAD_CALL = 5       /* a null pointer, a call on a finished object, a bad option */
} qvet_status;

typedef enum qvet_severity { QVET_ERROR = 0, QVET_WARNING = 1, QVET_NOTE = 2 } qvet_severity;

typedef struct qvet_program qvet_program;
typedef struct qvet_options qvet_options;
typedef struct qvet_result qvet_result;

QVET_API const char* qvet_version(void); /* "0.1.0" */
QVET_API int qvet_abi(void);             /* QVET_ABI of the library */

/* Programs. `name` is the file name diagnostics cite (NULL: "<program>"). */
QVET_API qvet_program* qvet_program_new(const char* name); /* NULL only when out of memory */
QVET_API void qvet_program_free(qvet_program* p);
/* Replaces the program with `text` (.hcq, or JSON when it starts with '{'), read at once: QVET_OK,
 * or QVET_INVALID_INPUT with the error at its file:line:col in qvet_program_error. */
QVET_API qvet_status qvet_program_parse(qvet_program* p, const char* text, size_t length);
/* Appends one line of .hcq (a statement, a `submit Q {` opening, one command, a closing `}`).
 * `tag` (may be NULL) is cited by diagnostics and errors on that line. The program is read as a
 * whole by qvet_check, which reports a line that breaks a rule with its tag. A program parsed
 * from JSON is not extended this way (QVET_BAD_CALL). */
QVET_API qvet_status qvet_program_add(qvet_program* p, const char* line, const char* tag);
/* One call per statement (docs/language.md), each appended to the program like one line of
 * .hcq. A call checks its own arguments at once: names are identifiers, words are known, numbers
 * fit, commands come inside a batch and statements outside one; a bad argument is QVET_BAD_CALL,
 * and qvet_program_error names the call and its tag. What needs the whole program (a name not
 * declared, a range past its buffer, a free of what is not live) is found by qvet_check, whose
 * error names the call and its tag too. `tag` may be NULL. */
typedef enum qvet_arch { QVET_NV = 0, QVET_AMD = 1, QVET_STRICT = 2 } qvet_arch;
typedef enum qvet_engine { QVET_COMPUTE = 0, QVET_COPY = 1 } qvet_engine;
typedef enum qvet_ordering {
  QVET_ORDERING_DEFAULT = 0, /* the architecture's (semantics.md, "Profiles") */
  QVET_SERIAL = 1,
  QVET_OVERLAP = 2,
  QVET_CHAINED = 3
} qvet_ordering;
/* Bytes [lo, hi) of a buffer or view; lo == hi == 0: all of it. */
typedef struct qvet_range {
  const char* buffer;
  uint64_t lo, hi;
} qvet_range;

/* Declarations. `owner`: "host" or a device's name. */
QVET_API qvet_status qvet_add_device(qvet_program* p, const char* name, qvet_arch arch, const char* tag);
QVET_API qvet_status qvet_add_peer(qvet_program* p, const char* a, const char* b, const char* tag);
QVET_API qvet_status qvet_add_map(qvet_program* p, const char* object, const char* device, const char* tag);
QVET_API qvet_status qvet_add_buffer(qvet_program* p, const char* name, const char* owner, uint64_t size, const char* tag);
QVET_API qvet_status qvet_add_view(qvet_program* p, const char* name, qvet_range of, const char* tag);
QVET_API qvet_status qvet_add_signal(qvet_program* p, const char* name, const char* owner, uint64_t init, const char* tag);
QVET_API qvet_status qvet_add_queue(qvet_program* p, const char* name, const char* device, qvet_engine engine,
                                    qvet_ordering ordering, const char* tag);
/* A param in lo..hi: the program is checked for every value (reach it from text, qvet_program_add). */
QVET_API qvet_status qvet_add_param(qvet_program* p, const char* name, uint64_t lo, uint64_t hi, const char* tag);

/* A batch: qvet_begin_submit, its commands, qvet_end_submit. */
QVET_API qvet_status qvet_begin_submit(qvet_program* p, const char* queue, const char* tag);
QVET_API qvet_status qvet_end_submit(qvet_program* p, const char* tag);
QVET_API qvet_status qvet_cmd_wait(qvet_program* p, const char* signal, uint64_t value, const char* tag);
QVET_API qvet_status qvet_cmd_signal(qvet_program* p, const char* signal, uint64_t value, const char* tag);
QVET_API qvet_status qvet_cmd_timestamp(qvet_program* p, const char* signal, const char* tag);
/* `reads` and `writes` may be NULL when their count is 0. */
QVET_API qvet_status qvet_cmd_exec(qvet_program* p, const char* kernel, const qvet_range* reads, size_t n_reads,
                                   const qvet_range* writes, size_t n_writes, const char* tag);
QVET_API qvet_status qvet_cmd_copy(qvet_program* p, qvet_range src, qvet_range dst, const char* tag);
QVET_API qvet_status qvet_cmd_barrier(qvet_program* p, const char* tag);
QVET_API qvet_status qvet_cmd_memory_barrier(qvet_program* p, const char* tag);

/* Host statements. */
QVET_API qvet_status qvet_host_wait(qvet_program* p, const char* signal, uint64_t value, const char* tag);
QVET_API qvet_status qvet_host_signal(qvet_program* p, const char* signal, uint64_t value, const char* tag);
QVET_API qvet_status qvet_host_read(qvet_program* p, qvet_range range, const char* tag);
QVET_API qvet_status qvet_host_write(qvet_program* p, qvet_range range, const char* tag);
QVET_API qvet_status qvet_host_free(qvet_program* p, const char* object, const char* tag);
QVET_API qvet_status qvet_host_alloc(qvet_program* p, const char* object, const char* tag);

/* The last error of a call on `p` ("" when none). */
QVET_API const char* qvet_program_error(const qvet_program* p);

/* Options of a check; defaults as `qvet check`. A bad option (an unknown rule, a value that is
 * not an integer, a NULL) is QVET_BAD_CALL and leaves the options as they were. */
QVET_API qvet_options* qvet_options_new(void);
QVET_API void qvet_options_free(qvet_options* o);
/* Only these rules, comma separated (as --rules; "none": the ordering engine alone). */
QVET_API qvet_status qvet_options_set_rules(qvet_options* o, const char* rules);
/* Binds a param to a decimal value (as --param NAME=VALUE). */
QVET_API qvet_status qvet_options_set_param(qvet_options* o, const char* name, const char* value);
QVET_API qvet_status qvet_options_set_werror(qvet_options* o, int werror); /* warnings count as errors */
QVET_API qvet_status qvet_options_set_witness(qvet_options* o, int witness); /* races carry a schedule */

/* Checks `p` (options may be NULL). Never NULL but when out of memory; its status says whether
 * the check ran (QVET_OK) or why not (qvet_result_error). */
QVET_API qvet_result* qvet_check(const qvet_program* p, const qvet_options* o);
QVET_API void qvet_result_free(qvet_result* r);
QVET_API qvet_status qvet_result_status(const qvet_result* r);
QVET_API const char* qvet_result_error(const qvet_result* r);
/* What `qvet check` would exit with: 0 clean, 1 errors (or warnings with werror), 2, 3. */
QVET_API int qvet_result_exit_code(const qvet_result* r);
/* The diagnostics as `qvet check --format json` prints them. */
QVET_API const char* qvet_result_json(const qvet_result* r);

/* Diagnostic i of r, 0 <= i < qvet_result_count(r), in the CLI's order. Out of range: NULL, 0,
 * and QVET_NOTE for the severity. */
QVET_API size_t qvet_result_count(const qvet_result* r);
QVET_API const char* qvet_diag_rule(const qvet_result* r, size_t i); /* "race", "deadlock", ... */
QVET_API qvet_severity qvet_diag_severity(const qvet_result* r, size_t i);
QVET_API const char* qvet_diag_message(const qvet_result* r, size_t i);
QVET_API unsigned qvet_diag_line(const qvet_result* r, size_t i);         /* 0: no line */
QVET_API unsigned qvet_diag_related_line(const qvet_result* r, size_t i); /* 0: none */
/* The tag of its line or of its related line (qvet_program_add), NULL when it has none. */
QVET_API const char* qvet_diag_tag(const qvet_result* r, size_t i);
QVET_API const char* qvet_diag_related_tag(const qvet_result* r, size_t i);
QVET_API size_t qvet_diag_note_count(const qvet_result* r, size_t i);
QVET_API const char* qvet_diag_note(const qvet_result* r, size_t i, size_t k);
QVET_API size_t qvet_diag_fix_count(const qvet_result* r, size_t i);
QVET_API const char* qvet_diag_fix(const qvet_result* r, size_t i, size_t k); /* what the fix does */

#ifdef __cplusplus
}
#endif

#endif /* QVET_QVET_H */
