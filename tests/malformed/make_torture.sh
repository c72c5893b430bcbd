#!/bin/sh
# Writes three large "torture" inputs for qvet into directory $1 (created if needed).
# They are generated, not committed. For each NAME.hcq a sidecar NAME.line holds the
# line number qvet must report; the harness requires `qvet check NAME.hcq` to exit 2
# with an error message containing ":LINE:".
#
#   long_line.hcq       2 MiB single line of garbage identifiers, no newline.
#                       Line 1: `zq0 zq1 ...` is an unknown statement.          -> 1
#   nested_repeat.hcq   5000 nested `repeat` blocks (lines 1..5000), correctly
#                       closed (lines 5001..10000). qvet limits nesting to 256
#                       blocks (docs/language-notes.md), so the 257th `repeat`
#                       is the error.                                          -> 257
#   random_bytes.hcq    line 1 is a valid declaration; line 2 starts with byte
#                       0x01 followed by 64 KiB of random bytes: the first
#                       non-text byte is on line 2.                             -> 2
set -eu
dir=${1:?usage: make_torture.sh OUTDIR}
mkdir -p "$dir"

# 1. 2 MiB single line of identifiers.
awk 'BEGIN { n = 0; s = ""; while (n < 2097152) { w = sprintf("zq%d_x ", n % 99991); printf "%s", w; n += length(w) } }' \
  | head -c 2097152 > "$dir/long_line.hcq"
echo 1 > "$dir/long_line.line"

# 2. 5000 nested repeat blocks, closed, plus a stray '}'.
awk 'BEGIN {
  for (i = 0; i < 5000; i++) printf "repeat i%d in 0..0 {\n", i;
  for (i = 0; i < 5000; i++) print "}";
  print "}";
}' > "$dir/nested_repeat.hcq"
echo 257 > "$dir/nested_repeat.line"

# 3. 64 KiB of random binary bytes on (and after) line 2.
{
  printf 'device gpu0 nv\n\001'
  head -c 65536 /dev/urandom
} > "$dir/random_bytes.hcq"
echo 2 > "$dir/random_bytes.line"

# 4. JSON nested 3 million arrays deep, and 20000 nested `repeat` statements in JSON: refused at
#    the JSON nesting limit (512), reported on line 1.
python_free_nest() {  # $1: count, $2: open, $3: close
  awk -v n="$1" -v o="$2" -v c="$3" 'BEGIN { for (i = 0; i < n; i++) printf "%s", o; for (i = 0; i < n; i++) printf "%s", c }'
}
{ printf '{"format":"qvet-program","statements":'; python_free_nest 3000000 '[' ']'; printf '}'; } > "$dir/deep_json.hcq"
echo 1 > "$dir/deep_json.line"
{
  printf '{"format":"qvet-program","statements":['
  awk 'BEGIN { for (i = 0; i < 20000; i++) printf "{\"kind\":\"repeat\",\"var\":\"i%d\",\"from\":\"0\",\"to\":\"0\",\"body\":[", i;
               for (i = 0; i < 20000; i++) printf "]}" }'
  printf ']}'
} > "$dir/deep_json_repeat.hcq"
echo 1 > "$dir/deep_json_repeat.line"
