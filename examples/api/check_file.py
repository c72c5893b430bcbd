"""libqvet from Python: check a program file and print its findings as `qvet check --format json`
does, exiting as `qvet check` would. With an installed prefix P:
    PYTHONPATH=P/lib/python3/site-packages python3 check_file.py FILE.hcq"""
import sys

import qvet

if len(sys.argv) != 2:
    sys.exit("usage: check_file.py FILE.hcq")
with open(sys.argv[1]) as f:
    text = f.read()
try:
    result = qvet.Program.parse(text, sys.argv[1]).check()
except qvet.QvetError as e:
    print(e, file=sys.stderr)
    sys.exit(e.status)
sys.stdout.write(result.json)
for d in result.diagnostics:
    print(f"{sys.argv[1]}:{d.line}: [{d.rule}] {d.message}", file=sys.stderr)
sys.exit(result.exit_code)
