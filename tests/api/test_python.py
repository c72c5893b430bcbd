"""The Python package (python/qvet) against libqvet: programs built call by call and through the
Recorder, tags on findings, the same diagnostics as the CLI, and bad calls as QvetError.
Run by CTest (api/python) with pytest, or as a plain script."""
import json
import os
import subprocess
import sys

import qvet

QVET = os.environ.get("QVET_CLI", "qvet")


def racy():
    p = qvet.Program("racy.hcq")
    p.device("g", "nv", tag="setup:1")
    p.buffer("a", "g", 4096, tag="setup:2")
    p.queue("c0", "g", "compute", tag="setup:3")
    p.submit("c0", ["exec k writes a"], tag="step:10")
    p.read("a", tag="step:12")
    return p


def test_a_race_names_the_tags_of_its_lines():
    r = racy().check()
    assert r.exit_code == 1
    [d] = r.diagnostics
    assert (d.rule, d.severity, d.line, d.related_line) == ("race", "error", 7, 5)
    assert (d.tag, d.related_tag) == ("step:12", "step:10")
    assert d.fixes and all(isinstance(f, str) for f in d.fixes)
    assert json.loads(r.json)["diagnostics"][0]["rule"] == "race"


def test_the_default_tag_is_the_callers_line():
    p = qvet.Program()
    p.device("g", "nv")
    p.buffer("a", "g", 64)
    p.queue("c0", "g")
    p.submit("c0", ["exec k writes a"])
    p.read("a"); line = sys._getframe().f_lineno  # noqa: E702
    [d] = p.check().diagnostics
    assert d.tag == f"test_python.py:{line}"


def recorded(wait_first):
    rec = qvet.Recorder()
    p = rec.program
    p.device("g", "nv")
    p.buffer("a", "g", 4096)
    p.buffer("b", "g", 4096)
    p.signal("tl", "host", 0)
    p.queue("c0", "g", "compute")
    p.queue("c1", "g", "copy")
    rec.queue("c0").exec("k", writes=["a"]).signal("tl", 1).submit("g")
    q = rec.queue("c1")
    if wait_first:
        q.wait("tl", 1)
    q.copy("b", "a", 256).submit("g")
    rec.queue("c0").memory_barrier().timestamp("tl").barrier().submit("g")
    return rec


def test_the_recorder_takes_hwqueue_calls():
    [d] = recorded(wait_first=False).check().diagnostics  # the copy reads a[0:256] as k writes it
    copy_line = recorded.__code__.co_firstlineno + 13  # `q.copy(...)` in recorded()
    assert d.rule == "race" and d.tag == f"test_python.py:{copy_line}"
    assert recorded(wait_first=True).check().diagnostics == []


def test_the_same_diagnostics_as_the_cli_on_every_corpus_program():
    corpus = os.path.join(os.path.dirname(__file__), "..", "..", "corpus")
    names = sorted(f for f in os.listdir(corpus) if f.endswith(".hcq"))
    assert len(names) > 100
    for name in names:
        path = os.path.join(corpus, name)
        with open(path) as f:
            text = f.read()
        cli = subprocess.run([QVET, "check", "--format", "json", path], capture_output=True, text=True)
        try:
            r = qvet.Program.parse(text, path).check()
        except qvet.QvetError as e:
            assert cli.returncode == 2, (name, str(e))
            continue
        assert (r.json, r.exit_code) == (cli.stdout, cli.returncode), name


def test_bad_calls_raise_with_the_line_and_its_tag():
    p = racy()
    p.line("exec k reads nosuch", tag="step:40")
    try:
        p.check()
        raise AssertionError("no error")
    except qvet.QvetError as e:
        assert e.status == 2 and "racy.hcq:8" in str(e) and "step:40" in str(e)
    for text in ["device g nv\nqueue c0 on h compute\n",  # an unknown name
                 "device g nv\nbuffer a on g 64\nqueue c on g compute\nsubmit c {\n  exec k reads a[0:128]\n}\n",
                 "device g nv\nbuffer a on g 64\nfree a\nfree a\n",  # a free of what is not live
                 "device g nv\nsignal s on host = 18446744073709551616\n"]:  # past 2^64
        try:  # read at once by parse, or (a lifetime rule, which elaboration checks) by check
            qvet.Program.parse(text).check()
            raise AssertionError("no error: " + text)
        except qvet.QvetError as e:
            assert e.status == 2 and "<python>:" in str(e)
    for bad, want in [(lambda: racy().check(rules=["nosuchrule"]), 5), (lambda: racy().check(params={"n": "x"}), 5),
                      (lambda: qvet.Program().line("a\nb"), 5), (lambda: qvet.Program().buffer("a", "g", 1.5), TypeError),
                      (lambda: racy().check(rules="race"), TypeError)]:
        try:
            bad()
            raise AssertionError("no error")
        except qvet.QvetError as e:
            assert e.status == want, (e.status, want)
        except TypeError:
            assert want is TypeError


if __name__ == "__main__":
    tests = [f for n, f in sorted(globals().items()) if n.startswith("test_")]
    for t in tests:
        t()
    print(f"api/python: {len(tests)} tests passed")
