#!/bin/sh
# Installs the previewer's npm packages (three, protobufjs, long; puppeteer-core
# for the browser test) exactly as web/package-lock.json pins them, with
# `npm ci`, into DIR/node_modules (under build/, never beside the sources),
# and stamps DIR/node_modules/.installed. npm comes with Node.js (nodejs in
# tools/debian-packages.txt); Debian's own nodejs lacks it, so this installs
# Debian's npm package when `npm` is missing, saying so.
# Usage: web/npm-ci.sh DIR
set -eu
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v npm >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo=sudo
  echo "npm-ci: npm missing: installing Debian's npm"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends npm
fi
mkdir -p "$dir"
cp "$here/package.json" "$here/package-lock.json" "$dir/"
echo "npm-ci: npm ci in $dir (three, protobufjs, long, puppeteer-core)"
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
touch "$dir/node_modules/.installed"
