#!/usr/bin/env python3
"""make install as a user of the C client meets it: staged with DESTDIR (the
.pc file names PREFIX, never the staging root) and undone by make uninstall;
then installed into a temporary prefix, every public header compiled alone
from it, and examples/client_hello.c built with pkg-config only, shared and
static, and run against the real server on an ephemeral loopback port.
Run by tests/run.sh (ANIM_BUILD_DIR: the build to install, already built)."""
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from animtest import ROOT, Server, check  # noqa: E402

BUILD = os.environ.get("ANIM_BUILD_DIR", "build")
EXAMPLE = os.path.join(ROOT, "examples", "client_hello.c")
HEADERS = sorted(h for h in os.listdir(os.path.join(ROOT, "include")) if h.endswith(".h"))
CC = os.environ.get("CC", "cc")


def run(args, env=None, cwd=None, expect=0):
    """stdout + stderr of a command that exits with ``expect``."""
    result = subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    if result.returncode != expect:
        raise AssertionError(f"{' '.join(args)}: exit {result.returncode}, expected {expect}\n"
                             f"{result.stdout}\n{result.stderr}")
    return result.stdout + result.stderr


def make(*args, expect=0):
    # The build under test, as tests/run.sh names it; install only copies (the build is up to date).
    build = BUILD if os.path.isabs(BUILD) else os.path.relpath(os.path.abspath(BUILD), ROOT)
    return run(["make", "--no-print-directory", "-C", ROOT, f"BUILD={build}"] + list(args), expect=expect)


def files_under(top):
    """Every file and symlink under top, relative to it."""
    found = set()
    for folder, _, names in os.walk(top):
        found.update(os.path.relpath(os.path.join(folder, n), top) for n in names)
    return found


def needed(path):
    """The NEEDED entries (sonames) of an ELF file."""
    return re.findall(r"^\s*NEEDED\s+(\S+)", run(["objdump", "-p", path]), re.M)


EXPECTED = ({"bin/animserver", "bin/animctl", "bin/animdb", "lib/libanimclient.a", "lib/libanimclient_replica.a",
             "lib/libanimclient.so",
             "lib/libanimclient.so.0", "lib/pkgconfig/animclient.pc"} |
            {f"include/animserver/{h}" for h in HEADERS})


def staged_install_and_uninstall(tmp):
    stage, prefix = os.path.join(tmp, "stage"), "/opt/animserver-test"
    make("install", f"DESTDIR={stage}", f"PREFIX={prefix}")
    root = stage + prefix
    check(files_under(stage) == {os.path.relpath(os.path.join(root, f), stage) for f in EXPECTED},
          f"make install DESTDIR=... PREFIX={prefix}: exactly the programs, libraries, headers and .pc, "
          f"under DESTDIR/PREFIX")
    check(os.readlink(os.path.join(root, "lib/libanimclient.so")) == "libanimclient.so.0",
          "libanimclient.so: a relative link to the soname")
    with open(os.path.join(root, "lib/pkgconfig/animclient.pc")) as f:
        pc = f.read()
    check(f"prefix={prefix}\n" in pc and stage not in pc,
          ".pc file: prefix is PREFIX, the staging root appears nowhere")
    check("Cflags: -I${includedir}\n" in pc and "includedir=${prefix}/include\n" in pc,
          ".pc file: Cflags is the include folder, so <animserver/anim_client.h> resolves")
    make("uninstall", f"DESTDIR={stage}", f"PREFIX={prefix}")
    left = files_under(stage)
    check(not left, f"make uninstall with the same DESTDIR and PREFIX removes every file install put (left: {left})")
    check(not os.path.exists(os.path.join(root, "include/animserver")), "make uninstall removes include/animserver/")
    out = make("install", "DESTDIR=" + stage, "PREFIX=relative/dir", expect=2)
    check("PREFIX must be an absolute path" in out and not os.path.exists(os.path.join(stage, "relative")),
          "make install PREFIX=relative/dir: refused, naming PREFIX, nothing installed")


def sanitizer_flags(library):
    """The flags a program needs to link a library built with sanitizers
    (make sanitize): their runtime must come first."""
    libs = needed(library)
    kinds = [kind for kind, so in (("address", "libasan.so"), ("undefined", "libubsan.so"))
             if any(n.startswith(so) for n in libs)]
    return [f"-fsanitize={','.join(kinds)}"] if kinds else []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def check_run(program, port, env, label):
    out = run([program, "127.0.0.1", str(port)], env=env)
    lines = out.splitlines()
    check(re.fullmatch(r"server \S+, character [1-9][0-9]*", lines[0]) is not None,
          f"{label}: hello answered and a character created ({lines[0]!r})")
    frames = [re.fullmatch(r"tick (\d+) root (\S+) (\S+) (\S+)", line) for line in lines[1:]]
    check(len(frames) == 10 and all(frames), f"{label}: ten stream frames printed")
    ticks = [int(m.group(1)) for m in frames]
    z = [float(m.group(4)) for m in frames]
    check(all(b > a for a, b in zip(ticks, ticks[1:])), f"{label}: ticks increase ({ticks[0]}..{ticks[-1]})")
    check(z[-1] - z[0] > 0.5, f"{label}: the character walks forward (root z {z[0]:.2f} -> {z[-1]:.2f} m)")


def prefix_install_and_example(tmp):
    prefix = os.path.join(tmp, "prefix")
    make("install", f"PREFIX={prefix}")
    # pkg-config finds animclient in the prefix only, libprotobuf-c where Debian put it.
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    env.pop("PKG_CONFIG_LIBDIR", None)

    def pkg(*args):
        return shlex.split(run(["pkg-config"] + list(args) + ["animclient"], env=env))

    cflags, libs, static_libs = pkg("--cflags"), pkg("--libs"), pkg("--libs", "--static")
    check(cflags == [f"-I{prefix}/include"], f"pkg-config --cflags: {cflags}")
    check(libs == [f"-L{prefix}/lib", "-lanimclient"], f"pkg-config --libs: {libs}")
    check(static_libs[:2] == libs and "-lm" in static_libs and "-lprotobuf-c" in static_libs,
          f"pkg-config --libs --static adds libm and protobuf-c: {static_libs}")

    san = sanitizer_flags(os.path.join(prefix, "lib", "libanimclient.so.0"))
    if san:
        print(f"  (library built with sanitizers: programs linked with {' '.join(san)})")

    # Each header stands alone from the prefix, in C and in C++ (its neighbours found as "anim_x.h").
    for header in HEADERS:
        for compiler, std in ((CC, "-std=c99"), ("c++", "-std=c++11")):
            lang = "c" if compiler == CC else "c++"
            result = subprocess.run([compiler, std, "-Wall", "-Wextra", "-Werror", "-fsyntax-only", "-x", lang, "-"]
                                    + cflags, input=f"#include <animserver/{header}>\n", capture_output=True,
                                    text=True, cwd=tmp)
            if result.returncode != 0:
                raise AssertionError(f"<animserver/{header}> ({lang}) from the prefix:\n{result.stderr}")
    check(True, f"each of the {len(HEADERS)} installed headers compiles alone as <animserver/...> in C99 and C++11")

    shared = os.path.join(tmp, "client_hello")
    run([CC, "-Wall", "-Wextra", "-Werror", "-o", shared, EXAMPLE] + san + cflags + libs, cwd=tmp)
    run_env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(prefix, "lib"))
    ldd = run(["ldd", shared], env=run_env)
    check(f"libanimclient.so.0 => {prefix}/lib/libanimclient.so.0" in ldd,
          "cc client_hello.c $(pkg-config --cflags --libs animclient): links, and runs on the prefix's library")

    static = os.path.join(tmp, "client_hello_static")
    if san:
        # Sanitizer runtimes cannot be linked -static: the prefix's archives statically, libc dynamically.
        run([CC, "-o", static, EXAMPLE] + san + cflags + ["-Wl,-Bstatic"] + static_libs + ["-Wl,-Bdynamic"], cwd=tmp)
        left = [n for n in needed(static) if n.startswith(("libanimclient", "libprotobuf-c", "libm."))]
        check(not left, "link with pkg-config --static, -Bstatic (sanitizers: libc dynamic): needs none of "
              f"libanimclient, libprotobuf-c, libm (needs: {needed(static)})")
    else:
        # glibc warns that a static getaddrinfo needs its shared NSS modules for names; the example passes an address.
        run([CC, "-static", "-o", static, EXAMPLE] + cflags + static_libs, cwd=tmp)
        check(needed(static) == [], "cc -static client_hello.c $(pkg-config --cflags --libs --static animclient): "
              "links, no shared library needed")

    with Server() as server:
        check_run(shared, server.port, run_env, "client_hello (shared)")
        check_run(static, server.port, run_env, "client_hello (static)")

    port = free_port()
    out = run([shared, "127.0.0.1", str(port)], env=run_env, expect=1)
    check(f"127.0.0.1:{port}: cannot connect" in out, f"client_hello with no server: exit 1, {out.strip()!r}")
    make("uninstall", f"PREFIX={prefix}")
    check(not files_under(prefix), "make uninstall PREFIX=... leaves no file in the prefix")


def main():
    with tempfile.TemporaryDirectory(prefix="anim-install-") as tmp:
        staged_install_and_uninstall(tmp)
        prefix_install_and_example(tmp)
    print("test_install: ok")


if __name__ == "__main__":
    main()
