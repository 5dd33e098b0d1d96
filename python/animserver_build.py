"""PEP 517 build backend for the animserver package, standard library only.

Why not setuptools: ``pip install ./python`` builds in an isolated
environment, which would download setuptools from PyPI; machines that run
animserver often reach no package index. This backend needs nothing but the
standard library and ``protoc`` (Debian: protobuf-compiler), which generates
``animserver/_generated/animserver_pb2.py`` from the proto at build time, so
an installed package always carries code generated from the proto it was built
from (its SHA-256 is ``animserver.PROTO_SHA256``). The proto is looked for in
``./proto`` (an sdist) then ``../proto`` (the repository).

Hooks: ``build_wheel``, ``build_editable`` (a .pth to this folder: the
package then generates its module from the repository's proto on import, see
``animserver/_proto.py``), ``build_sdist``, and their ``get_requires_*``
(nothing).
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import subprocess
import shutil
import tarfile
import tempfile
import zipfile
from pathlib import Path

NAME = "animserver"
VERSION = "0.1.0"
HERE = Path(__file__).resolve().parent
METADATA = f"""Metadata-Version: 2.1
Name: {NAME}
Version: {VERSION}
Summary: Python client for animserver: blocking and asyncio clients, poses as numpy arrays
License: MIT
Requires-Python: >=3.9
Requires-Dist: protobuf>=3.20
Requires-Dist: numpy>=1.21
"""
WHEEL = """Wheel-Version: 1.0
Generator: animserver_build
Root-Is-Purelib: true
Tag: py3-none-any
"""


def _proto() -> Path:
    for candidate in (HERE / "proto" / "animserver.proto", HERE.parent / "proto" / "animserver.proto"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("animserver_build: proto/animserver.proto not found beside or above python/")


def _generate(proto: Path) -> bytes:
    protoc = os.environ.get("PROTOC") or shutil.which("protoc")
    if not protoc:
        raise RuntimeError("animserver_build: protoc not found (Debian: apt-get install protobuf-compiler)")
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([protoc, f"--python_out={out}", f"-I{proto.parent}", str(proto)], check=True)
        return (Path(out) / "animserver_pb2.py").read_bytes()


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _write_wheel(directory: str, files: dict) -> str:
    dist_info = f"{NAME}-{VERSION}.dist-info"
    files = dict(files)
    files[f"{dist_info}/METADATA"] = METADATA.encode()
    files[f"{dist_info}/WHEEL"] = WHEEL.encode()
    record = [_record_line(name, data) for name, data in files.items()] + [f"{dist_info}/RECORD,,"]
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    filename = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, filename), "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            wheel.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), data)
    return filename


def _package_files() -> dict:
    files = {}
    for path in sorted((HERE / NAME).rglob("*.py")):
        relative = path.relative_to(HERE)
        if "_generated" in relative.parts or "__pycache__" in relative.parts:
            continue
        files[relative.as_posix()] = path.read_bytes()
    return files


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    proto = _proto()
    files = _package_files()
    files[f"{NAME}/_generated/__init__.py"] = b'"""Generated at build time from animserver.proto (never edited)."""\n'
    files[f"{NAME}/_generated/animserver_pb2.py"] = _generate(proto)
    files[f"{NAME}/_generated/animserver.proto"] = proto.read_bytes()
    return _write_wheel(wheel_directory, files)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _generate(_proto())  # fail now, not at the first import, when protoc is missing
    return _write_wheel(wheel_directory, {f"__editable__.{NAME}.pth": (str(HERE) + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{VERSION}"
    filename = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz") as sdist:
        def add(name: str, data: bytes) -> None:
            info = tarfile.TarInfo(f"{base}/{name}")
            info.size = len(data)
            sdist.addfile(info, io.BytesIO(data))
        for name, data in _package_files().items():
            add(name, data)
        for name in ("pyproject.toml", "animserver_build.py"):
            add(name, (HERE / name).read_bytes())
        add("proto/animserver.proto", _proto().read_bytes())
        add("PKG-INFO", METADATA.encode())
    return filename
