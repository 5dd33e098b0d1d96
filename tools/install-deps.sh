#!/bin/sh
# Installs the Debian packages a make target needs, from tools/debian-packages.txt.
# Usage: tools/install-deps.sh build|test|bench
# Installs nothing when everything is present; otherwise says what it installs,
# then runs apt-get (through sudo when not root).
set -eu
group=${1:-build}
list="$(dirname "$0")/debian-packages.txt"
case "$group" in
  build) groups="build" ;;
  test) groups="build test" ;;
  bench) groups="build test bench" ;;
  *) echo "install-deps: unknown group '$group' (build, test, bench)" >&2; exit 2 ;;
esac

wanted=""
for g in $groups; do
  wanted="$wanted $(awk -v g="$g" '$1 == g { print $2 }' "$list")"
done

missing=""
for pkg in $wanted; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  case "$status" in
    *"install ok installed"*) ;;
    *) missing="$missing $pkg" ;;
  esac
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-deps: missing packages:$missing (no apt-get here: install them by hand)" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "install-deps: missing packages:$missing and not root (no sudo)" >&2; exit 1
  fi
fi
echo "install-deps: installing missing Debian packages:$missing"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing
