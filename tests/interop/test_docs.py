#!/usr/bin/env python3
"""The documentation checked against the tree, so a documented example or
link cannot go stale silently:

1. every block of README.md and docs/*.md marked
       <!-- example: PATH -->
       ```lang
       ...
       ```
       <!-- /example -->
   equals the file PATH (from the repository root) byte for byte. The files
   themselves are compiled and run by their own tests, so a marked block is an
   example that works. A PATH that does not exist yet is skipped with a
   message (under CI=true it fails);
2. every relative link in README.md and docs/*.md names an existing file, and
   a link to a Markdown file's #anchor names one of its headings;
3. README.md is at most MAX_README_LINES lines;
4. every flag `animserver --help` prints appears in docs/operations.md.

`/usr/bin/python3 tests/interop/test_docs.py --update` rewrites each marked
block from its file instead (then run the checks). Run by tests/run.sh with
ANIM_BUILD_DIR set."""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("ANIM_BUILD_DIR", "build")
CI = os.environ.get("CI") == "true"
MAX_README_LINES = 320  # the "under about 300 lines", with a little room

OPEN = re.compile(r"<!-- example: (\S+) -->\n")
BLOCK = re.compile(r"<!-- example: (\S+) -->\n```[A-Za-z0-9_+-]*\n(.*?)```\n<!-- /example -->", re.S)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^```.*?^```[ \t]*$", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)


def check(condition, what):
    """Fails with ``what`` or prints it as verified."""
    if not condition:
        raise AssertionError(what)
    print(f"  ok: {what}")


def docs():
    """README.md and docs/*.md, as paths relative to the root."""
    return ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))


def read(rel):
    with open(os.path.join(ROOT, rel), "rb") as f:
        return f.read().decode("utf-8")


def slug(heading):
    """The anchor GitHub gives a heading: lower case, punctuation dropped,
    spaces to hyphens (inline code and links reduced to their text)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(rel):
    text = FENCE.sub("", read(rel))
    seen, out = {}, set()
    for h in HEADING.findall(text):
        s = slug(h)
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    return out


def update_examples():
    for rel in docs():
        text = read(rel)

        def fill(m):
            path = os.path.join(ROOT, m.group(1))
            if not os.path.isfile(path):
                return m.group(0)
            with open(path, "rb") as f:
                body = f.read().decode("utf-8")
            fence = m.group(0)[len(f"<!-- example: {m.group(1)} -->\n"):].split("\n", 1)[0]
            return f"<!-- example: {m.group(1)} -->\n{fence}\n{body}```\n<!-- /example -->"

        new = BLOCK.sub(fill, text)
        if new != text:
            with open(os.path.join(ROOT, rel), "w", encoding="utf-8") as f:
                f.write(new)
            print(f"  updated: {rel}")


def check_examples():
    for rel in docs():
        text = read(rel)
        opened = OPEN.findall(text)
        blocks = BLOCK.findall(text)
        if not opened:
            continue
        check(len(opened) == len(blocks),
              f"{rel}: each <!-- example: PATH --> is followed by one fenced block and <!-- /example --> "
              f"({len(opened)} opened, {len(blocks)} well formed)")
        for path, body in blocks:
            full = os.path.join(ROOT, path)
            if not os.path.isfile(full):
                if CI:
                    raise AssertionError(f"{rel}: the example {path} does not exist")
                print(f"skipped: {rel}: the example {path} does not exist yet")
                continue
            with open(full, "rb") as f:
                want = f.read().decode("utf-8")
            if body != want:
                a, b = body.splitlines(), want.splitlines()
                line = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
                raise AssertionError(f"{rel}: the block marked {path} differs from the file at its line {line + 1} "
                                     f"(docs: {a[line] if line < len(a) else 'end'!r}, "
                                     f"file: {b[line] if line < len(b) else 'end'!r}); "
                                     f"run tests/interop/test_docs.py --update")
            check(True, f"{rel}: the block marked {path} equals the file ({len(want.splitlines())} lines)")


def check_links():
    for rel in docs():
        text = CODE_SPAN.sub("", FENCE.sub("", read(rel)))
        base = os.path.dirname(os.path.join(ROOT, rel))
        n = 0
        for target in LINK.findall(text):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(base, path)) if path else os.path.join(ROOT, rel)
            check_target = os.path.relpath(full, ROOT)
            if not os.path.exists(full):
                raise AssertionError(f"{rel}: the link ({target}) names {check_target}, which does not exist")
            if anchor and full.endswith(".md"):
                if anchor not in anchors(os.path.relpath(full, ROOT)):
                    raise AssertionError(f"{rel}: the link ({target}): {check_target} has no heading #{anchor}")
            n += 1
        check(True, f"{rel}: {n} relative links name existing files and headings")


def check_readme_length():
    lines = read("README.md").count("\n")
    check(lines <= MAX_README_LINES, f"README.md is {lines} lines: at most {MAX_README_LINES}")


def check_flags():
    server = os.path.join(BUILD, "animserver")
    if not os.path.isfile(server):
        raise AssertionError(f"{server} not found: build it (make all) or set ANIM_BUILD_DIR")
    out = subprocess.run([server, "--help"], capture_output=True, text=True, timeout=10)
    flags = re.findall(r"^\s+(--[a-z][a-z0-9-]*)", out.stdout + out.stderr, re.M)
    check(len(flags) >= 10, f"animserver --help lists {len(flags)} flags")
    operations = read(os.path.join("docs", "operations.md"))
    missing = [f for f in flags if not re.search(re.escape(f) + r"(?![a-z0-9-])", operations)]
    check(not missing, "every flag of animserver --help appears in docs/operations.md"
          + (f": missing {', '.join(missing)}" if missing else ""))


def main():
    if "--update" in sys.argv[1:]:
        update_examples()
    check_examples()
    check_links()
    check_readme_length()
    check_flags()
    print("docs: passed")


if __name__ == "__main__":
    main()
