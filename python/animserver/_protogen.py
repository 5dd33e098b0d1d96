"""Generates the protocol's Python modules with protoc, standard library only.

The protocol is ``proto/animserver.proto`` (the envelopes) and its parts,
``proto/animserver/*.proto`` (one per area), which it imports publicly. protoc
writes the parts' modules as ``animserver/<part>_pb2.py`` and imports them as
``animserver.<part>_pb2``: a name this package owns. So every generated module
and stub is placed in the subpackage ``animserver._generated`` and its imports
are qualified to match (``animserver._generated.animserver.<part>_pb2``).

Used by ``_proto.py`` (a source tree: generated on first import, cached) and
by the build backend ``animserver_build.py`` (a wheel carries the result), so
both lay the modules out alike. Nothing here imports the package itself.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List

PACKAGE = "animserver._generated"
"""Where the generated modules live (the wheel's folder of the same name)."""

_PART_REF = re.compile(r"(?<![\w.])animserver\.(\w+_pb2)\b")
_PART_FROM = re.compile(r"\bfrom animserver import (\w+_pb2)\b")


def proto_files(proto: Path) -> List[Path]:
    """The envelope file and its parts, in a stable order."""
    parts = proto.parent / proto.stem
    return [proto] + (sorted(parts.glob("*.proto")) if parts.is_dir() else [])


def digest(proto: Path) -> str:
    """SHA-256 over every file of the protocol, names and bytes."""
    h = hashlib.sha256()
    for path in proto_files(proto):
        h.update(path.relative_to(proto.parent).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


def _protoc() -> str:
    protoc = os.environ.get("PROTOC") or shutil.which("protoc")
    if not protoc:
        raise ImportError("animserver: protoc not found; the message classes are generated from the proto "
                          "(Debian: apt-get install protobuf-compiler), or install the package "
                          "(pip install ./python), which carries them")
    return protoc


def _qualify(text: str) -> str:
    text = text.replace("'animserver_pb2'", f"'{PACKAGE}.animserver_pb2'")  # the classes' __module__
    text = _PART_FROM.sub(lambda m: f"from {PACKAGE}.animserver import {m.group(1)}", text)
    return _PART_REF.sub(lambda m: f"{PACKAGE}.animserver.{m.group(1)}", text)


def generate(proto: Path, out_dir: Path, stubs: bool = False) -> bool:
    """Writes the modules for ``proto`` (and, with ``stubs``, their type stubs
    from protoc-gen-mypy, Debian: mypy-protobuf) into ``out_dir``, laid out as
    the package ``animserver._generated``. Returns whether stubs were written.

    Raises ImportError naming what is missing when protoc is not installed."""
    protoc = _protoc()
    files = [str(p) for p in proto_files(proto)]
    out_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run([protoc, f"--python_out={out_dir}", f"-I{proto.parent}", *files], check=True)
    typed = False
    if stubs:
        plugin = shutil.which("protoc-gen-mypy")
        if plugin:
            # The plugin is a script of the system's Python: pip's isolated
            # build environment (PYTHONPATH) would hide its own packages from it.
            env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME")}
            run = subprocess.run([protoc, f"--mypy_out={out_dir}", f"-I{proto.parent}", *files], env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            typed = run.returncode == 0
            if not typed:
                print(f"animserver: protoc-gen-mypy failed ({run.stderr.strip()[-300:]}): "
                      "the message classes are untyped", file=sys.stderr)
        else:
            print("animserver: protoc-gen-mypy not found (Debian: mypy-protobuf): the message classes "
                  "are untyped", file=sys.stderr)
    for path in list(out_dir.rglob("*.py")) + list(out_dir.rglob("*.pyi")):
        path.write_text(_qualify(path.read_text()))
    note = '"""Generated from the protocol by protoc (never edited)."""\n'
    for folder in (out_dir, out_dir / "animserver"):
        if folder.is_dir():
            (folder / "__init__.py").write_text(note)
    return typed
