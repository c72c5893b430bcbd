"""qvet for Python: check GPU queue programs from a runtime, through libqvet (docs/api.md).

    import qvet
    p = qvet.Program()
    p.device("gpu0", "nv")
    p.buffer("a", "gpu0", 4096)
    p.queue("c0", "gpu0", "compute")
    p.submit("c0", ["exec k writes a"])
    p.read("a")
    for d in p.check().diagnostics:
        print(d.rule, d.line, d.tag, d.message)

Every statement method takes a `tag` (default: the caller's "file.py:line"), which diagnostics
on that statement cite. `Recorder` records what a runtime submits through queue objects with the
calls of tinygrad's HWQueue. Standard library only (ctypes); the library is found through
QVET_LIBRARY, beside this package in an installed prefix, or on the loader's path.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Sequence

__all__ = ["Program", "Result", "Diagnostic", "Recorder", "QvetError", "version"]


class QvetError(Exception):
    """A call qvet refused: invalid input (status 2), a bad call (5), or an internal failure (3)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _load() -> ctypes.CDLL:
    names = []
    if os.environ.get("QVET_LIBRARY"):
        names.append(os.environ["QVET_LIBRARY"])
    here = Path(__file__).resolve()
    for up in (3, 4):  # PREFIX/lib/python3/site-packages/qvet/__init__.py -> PREFIX/lib
        if len(here.parents) > up:
            names.append(str(here.parents[up] / "libqvet.so.1"))
    found = ctypes.util.find_library("qvet")
    if found:
        names.append(found)
    for n in names:
        if os.path.exists(n) or "/" not in n:
            try:
                return ctypes.CDLL(n)
            except OSError:
                continue
    raise ImportError("libqvet not found: set QVET_LIBRARY to the path of libqvet.so.1")


_lib = _load()
_P, _R, _O = ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p
_S, _I, _Z, _U = ctypes.c_char_p, ctypes.c_int, ctypes.c_size_t, ctypes.c_uint
for _name, _res, _args in [
    ("qvet_version", _S, []), ("qvet_abi", _I, []),
    ("qvet_program_new", _P, [_S]), ("qvet_program_free", None, [_P]),
    ("qvet_program_parse", _I, [_P, _S, _Z]), ("qvet_program_add", _I, [_P, _S, _S]),
    ("qvet_program_error", _S, [_P]),
    ("qvet_options_new", _O, []), ("qvet_options_free", None, [_O]),
    ("qvet_options_set_rules", _I, [_O, _S]), ("qvet_options_set_param", _I, [_O, _S, _S]),
    ("qvet_options_set_werror", _I, [_O, _I]), ("qvet_options_set_witness", _I, [_O, _I]),
    ("qvet_check", _R, [_P, _O]), ("qvet_result_free", None, [_R]),
    ("qvet_result_status", _I, [_R]), ("qvet_result_error", _S, [_R]),
    ("qvet_result_exit_code", _I, [_R]), ("qvet_result_json", _S, [_R]),
    ("qvet_result_count", _Z, [_R]), ("qvet_diag_rule", _S, [_R, _Z]),
    ("qvet_diag_severity", _I, [_R, _Z]), ("qvet_diag_message", _S, [_R, _Z]),
    ("qvet_diag_line", _U, [_R, _Z]), ("qvet_diag_related_line", _U, [_R, _Z]),
    ("qvet_diag_tag", _S, [_R, _Z]), ("qvet_diag_related_tag", _S, [_R, _Z]),
    ("qvet_diag_note_count", _Z, [_R, _Z]), ("qvet_diag_note", _S, [_R, _Z, _Z]),
    ("qvet_diag_fix_count", _Z, [_R, _Z]), ("qvet_diag_fix", _S, [_R, _Z, _Z]),
]:
    _f = getattr(_lib, _name)
    _f.restype, _f.argtypes = _res, _args


def _s(b: Optional[bytes]) -> Optional[str]:
    return None if b is None else b.decode("utf-8", "replace")


def version() -> str:
    return _s(_lib.qvet_version())


@dataclass
class Diagnostic:
    rule: str
    severity: str  # "error", "warning" or "note"
    message: str
    line: int  # 0: none
    related_line: int  # 0: none
    tag: Optional[str]  # the tag of its line (Program methods, Recorder calls)
    related_tag: Optional[str] = None
    notes: List[str] = field(default_factory=list)
    fixes: List[str] = field(default_factory=list)


@dataclass
class Result:
    diagnostics: List[Diagnostic]
    exit_code: int  # what `qvet check` would exit with
    json: str  # as `qvet check --format json`

    @property
    def errors(self) -> List[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]


def _caller_tag(depth: int = 2) -> str:
    frame = sys._getframe(depth)  # (inspect.stack() reads every frame's source: 100x slower)
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


def _value(v) -> str:
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise TypeError(f"a value is an int or a .hcq expression, got {v!r}")
    return str(v)


class Program:
    """A queue program, built statement by statement (or parsed whole), checked by libqvet."""

    def __init__(self, name: str = "<python>"):
        self._p = _lib.qvet_program_new(name.encode())
        if not self._p:
            raise MemoryError("qvet_program_new")

    def __del__(self):
        if getattr(self, "_p", None):
            _lib.qvet_program_free(self._p)
            self._p = None

    @classmethod
    def parse(cls, text: str, name: str = "<python>") -> "Program":
        p = cls(name)
        data = text.encode()
        st = _lib.qvet_program_parse(p._p, data, len(data))
        if st != 0:
            raise QvetError(st, _s(_lib.qvet_program_error(p._p)))
        return p

    def line(self, text: str, tag: Optional[str] = None) -> "Program":
        """Appends one line of .hcq, cited by diagnostics as `tag`."""
        st = _lib.qvet_program_add(self._p, text.encode(), (tag or _caller_tag()).encode())
        if st != 0:
            raise QvetError(st, _s(_lib.qvet_program_error(self._p)))
        return self

    # Declarations, named after the language (docs/language.md).
    def device(self, name: str, arch: str, tag=None):
        return self.line(f"device {name} {arch}", tag or _caller_tag())

    def peer(self, a: str, b: str, tag=None):
        return self.line(f"peer {a} {b}", tag or _caller_tag())

    def buffer(self, name: str, device: str, size, tag=None):
        return self.line(f"buffer {name} on {device} {_value(size)}", tag or _caller_tag())

    def signal(self, name: str, on: str = "host", init=None, tag=None):
        return self.line(f"signal {name} on {on}" + (f" = {_value(init)}" if init is not None else ""), tag or _caller_tag())

    def queue(self, name: str, device: str, kind: str = "compute", ordering: Optional[str] = None, tag=None):
        return self.line(f"queue {name} on {device} {kind}" + (f" ordering {ordering}" if ordering else ""), tag or _caller_tag())

    def param(self, name: str, lo, hi, tag=None):
        return self.line(f"param {name} in {_value(lo)}..{_value(hi)}", tag or _caller_tag())

    # Host statements.
    def submit(self, queue: str, commands: Sequence[str], tag=None):
        """Submits a batch: each command a line of .hcq (`exec k reads a writes b`, `wait s >= 1`, ...)."""
        tag = tag or _caller_tag()
        self.line(f"submit {queue} {{", tag)
        for c in commands:
            self.line(f"  {c}", tag)
        return self.line("}", tag)

    def wait(self, signal: str, value, tag=None):
        return self.line(f"wait {signal} >= {_value(value)}", tag or _caller_tag())

    def set_signal(self, signal: str, value, tag=None):
        """The host's `signal S = V` (a write; `signal()` declares one)."""
        return self.line(f"signal {signal} = {_value(value)}", tag or _caller_tag())

    def read(self, ranges: str, tag=None):
        return self.line(f"read {ranges}", tag or _caller_tag())

    def write(self, ranges: str, tag=None):
        return self.line(f"write {ranges}", tag or _caller_tag())

    def free(self, buffer: str, tag=None):
        return self.line(f"free {buffer}", tag or _caller_tag())

    def alloc(self, buffer: str, tag=None):
        return self.line(f"alloc {buffer}", tag or _caller_tag())

    def check(self, rules: Optional[Sequence[str]] = None, params: Optional[dict] = None,
              werror: bool = False, witness: bool = False) -> Result:
        o = _lib.qvet_options_new()
        if not o:
            raise MemoryError("qvet_options_new")
        try:
            if isinstance(rules, str):
                raise TypeError("rules is a list of rule ids, not a string")
            if rules is not None and (st := _lib.qvet_options_set_rules(o, ",".join(rules).encode())) != 0:
                raise QvetError(st, f"unknown rule in {list(rules)}")
            for k, v in (params or {}).items():
                if (st := _lib.qvet_options_set_param(o, k.encode(), str(v).encode())) != 0:
                    raise QvetError(st, f"param {k}: not an integer: {v!r}")
            _lib.qvet_options_set_werror(o, int(werror))
            _lib.qvet_options_set_witness(o, int(witness))
            r = _lib.qvet_check(self._p, o)
        finally:
            _lib.qvet_options_free(o)
        if not r:
            raise MemoryError("qvet_check")
        try:
            st = _lib.qvet_result_status(r)
            if st != 0:
                raise QvetError(st, _s(_lib.qvet_result_error(r)))
            sev = {0: "error", 1: "warning", 2: "note"}
            ds = []
            for i in range(_lib.qvet_result_count(r)):
                ds.append(Diagnostic(
                    rule=_s(_lib.qvet_diag_rule(r, i)), severity=sev[_lib.qvet_diag_severity(r, i)],
                    message=_s(_lib.qvet_diag_message(r, i)), line=_lib.qvet_diag_line(r, i),
                    related_line=_lib.qvet_diag_related_line(r, i), tag=_s(_lib.qvet_diag_tag(r, i)),
                    related_tag=_s(_lib.qvet_diag_related_tag(r, i)),
                    notes=[_s(_lib.qvet_diag_note(r, i, k)) for k in range(_lib.qvet_diag_note_count(r, i))],
                    fixes=[_s(_lib.qvet_diag_fix(r, i, k)) for k in range(_lib.qvet_diag_fix_count(r, i))]))
            return Result(ds, _lib.qvet_result_exit_code(r), _s(_lib.qvet_result_json(r)))
        finally:
            _lib.qvet_result_free(r)


class _RecordedQueue:
    """One HWQueue-like object: its calls are recorded as a batch until `submit(device)`."""

    def __init__(self, rec: "Recorder", queue: str):
        self._rec, self._queue, self._cmds = rec, queue, []

    def _add(self, text: str):
        self._cmds.append((text, _caller_tag(3)))
        return self

    def wait(self, signal: str, value):
        return self._add(f"wait {signal} >= {_value(value)}")

    def signal(self, signal: str, value):
        return self._add(f"signal {signal} = {_value(value)}")

    def exec(self, kernel: str, reads: Sequence[str] = (), writes: Sequence[str] = ()):
        text = f"exec {kernel}"
        if reads:
            text += " reads " + ", ".join(reads)
        if writes:
            text += " writes " + ", ".join(writes)
        return self._add(text)

    def copy(self, dst: str, src: str, size=None):
        """copy src -> dst (`size` bytes from the start of each, when given)."""
        if size is not None:
            src, dst = f"{src}[0:{_value(size)}]", f"{dst}[0:{_value(size)}]"
        return self._add(f"copy {src} -> {dst}")

    def timestamp(self, signal: str):
        return self._add(f"timestamp {signal}")

    def memory_barrier(self):
        return self._add("memory_barrier")

    def barrier(self):
        return self._add("barrier")

    def submit(self, device=None):
        """Submits what was recorded as one batch (the device is the queue's)."""
        p = self._rec.program
        first_tag = _caller_tag(2)
        p.line(f"submit {self._queue} {{", first_tag)
        for text, tag in self._cmds:
            p.line(f"  {text}", tag)
        p.line("}", first_tag)
        self._cmds = []
        return self


class Recorder:
    """Records a runtime's queues as a Program: `rec.queue("c0")` gives an object with HWQueue's
    calls (wait, signal, exec, copy, timestamp, memory_barrier, submit); declarations go to
    `rec.program` directly."""

    def __init__(self, name: str = "<recorded>"):
        self.program = Program(name)

    def queue(self, name: str) -> _RecordedQueue:
        return _RecordedQueue(self, name)

    def check(self, **kw) -> Result:
        return self.program.check(**kw)
