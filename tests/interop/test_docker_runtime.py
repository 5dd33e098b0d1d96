#!/usr/bin/env python3
"""deploy/Dockerfile's runtime stage installs what its programs need. No
Docker daemon runs here, so the check is the one the image's loader would
make: each program the stage copies is this build's (ANIM_BUILD_DIR), its
NEEDED entries (objdump -p) are resolved by ldd and mapped to Debian
packages with dpkg -S; each package must be installed by the stage's
apt-get line or be one every Debian image has (required, essential, and
what they depend on). The
host must be the release the image is based on, so the names match. Every
package the stage installs must be needed by one of them (a slim image).
Run by tests/run.sh."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from animtest import ROOT, check  # noqa: E402

BUILD = os.environ.get("ANIM_BUILD_DIR", "build")
DOCKERFILE = os.path.join(ROOT, "deploy", "Dockerfile")
# Runtimes of a make sanitize build (BUILD=build/sanitize): the image builds without sanitizers.
SANITIZER_RUNTIMES = ("libasan.so", "libubsan.so", "liblsan.so", "libtsan.so")


def instructions(path):
    """(KEYWORD, arguments) for each instruction, continuation lines joined, comments dropped."""
    with open(path) as f:
        lines = [line.rstrip("\n") for line in f if not line.lstrip().startswith("#")]
    text = re.sub(r"\\\n", " ", "\n".join(lines))
    return [(m.group(1).upper(), m.group(2).strip()) for m in re.finditer(r"^\s*(\w+)\s+(.*)$", text, re.M)]


def runtime_stage(path):
    """The last stage: its base image, the packages its apt-get installs, the programs it copies from the build."""
    steps = instructions(path)
    last = max(i for i, (keyword, _) in enumerate(steps) if keyword == "FROM")
    base = steps[last][1].split()[0]
    packages, programs = [], []
    for keyword, args in steps[last + 1:]:
        if keyword == "RUN":
            for command in re.split(r"&&|;", args):
                words = command.split()
                if words[:2] == ["apt-get", "install"]:
                    packages += [w for w in words[2:] if not w.startswith("-")]
        elif keyword == "COPY" and args.startswith("--from=build"):
            sources = args.split()[1:-1]
            programs += [os.path.basename(s) for s in sources if "/bin/" in s]
    return base, packages, programs


def needed(path):
    result = subprocess.run(["objdump", "-p", path], capture_output=True, text=True, check=True)
    return re.findall(r"^\s*NEEDED\s+(\S+)", result.stdout, re.M)


def resolved(path):
    """soname -> file the loader picks here (ldd)."""
    result = subprocess.run(["ldd", path], capture_output=True, text=True, check=True)
    return dict(re.findall(r"^\s*(\S+) => (/\S+)", result.stdout, re.M))


def package_of(path):
    """The Debian package that ships path. dpkg knows the path the package lists, which with the
    merged /usr may be /lib/... or /usr/lib/..., of the link or of its target: try each."""
    real = os.path.realpath(path)
    candidates = []
    for p in (path, real):
        candidates += [p, p[4:] if p.startswith("/usr/lib/") else "/usr" + p]
    for p in candidates:
        result = subprocess.run(["dpkg", "-S", p], capture_output=True, text=True)
        if result.returncode == 0:
            return result.stdout.split(":")[0].split(",")[0].strip()
    raise AssertionError(f"no Debian package ships {path} (dpkg -S {' / '.join(candidates)})")


def base_packages():
    """What every Debian image holds: the packages of Priority required or Essential (debootstrap's
    minbase, which debian:*-slim is) and what they depend on, read from this host's dpkg database."""
    fields = "${Package}\t${Priority}\t${Essential}\t${Pre-Depends}, ${Depends}\n"
    result = subprocess.run(["dpkg-query", "-W", f"--showformat={fields}"], capture_output=True, text=True, check=True)
    depends, todo = {}, []
    for line in result.stdout.splitlines():
        name, prio, essential, deps = line.split("\t")
        # "a (>= 1) | b, c:any": every alternative that is installed here counts.
        depends[name] = [re.split(r"[ :(]", alt.strip())[0] for alt in re.split(r"[,|]", deps) if alt.strip()]
        if prio == "required" or essential == "yes":
            todo.append(name)
    base = set()
    while todo:
        name = todo.pop()
        if name in depends and name not in base:
            base.add(name)
            todo += depends[name]
    return base


def known(package):
    """A package of this release (installed here, or in apt's lists)."""
    return subprocess.run(["apt-cache", "show", package], capture_output=True).returncode == 0


def main():
    base, packages, programs = runtime_stage(DOCKERFILE)
    check(programs == ["animserver", "animctl", "animdb"], f"the runtime stage copies {programs}")
    check(packages != [], f"the runtime stage installs {packages}")
    release = base.split(":")[1].split("-")[0]
    with open("/etc/os-release") as f:
        host = dict(re.findall(r'^(\w+)="?([^"\n]*)"?$', f.read(), re.M)).get("VERSION_CODENAME")
    check(host == release, f"this host is Debian {host}, the release of the runtime image ({base}): "
                           f"package names and sonames match")
    for package in packages:
        check(known(package), f"{package}: a Debian {release} package")

    base_image = base_packages()
    check("libc6" in base_image and "libuv1" not in base_image,
          f"the base image's packages: {len(base_image)}, libc6 among them, not libuv1")
    used = set()
    for program in programs:
        path = os.path.join(BUILD, program)
        where = resolved(path)
        for soname in needed(path):
            if soname.startswith(SANITIZER_RUNTIMES):
                print(f"  ({program}: {soname} is this sanitizer build's runtime, not the image's)")
                continue
            if soname not in where:
                raise AssertionError(f"{program}: NEEDED {soname} not found by ldd")
            package = package_of(where[soname])
            used.add(package)
            check(package in packages or package in base_image,
                  f"{program} needs {soname} ({package}): " +
                  ("installed by the runtime stage" if package in packages else "in every Debian image"))
    extra = [p for p in packages if p not in used]
    check(not extra, f"every package the runtime stage installs is needed by a program it copies (extra: {extra})")
    print("test_docker_runtime: ok")


if __name__ == "__main__":
    main()
