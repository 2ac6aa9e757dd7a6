#!/usr/bin/env bash
# Installs Debian's chromium for the browser tests. Never fails the build: where chromium cannot be
# installed (not root, no apt-get, no network), the browser tests skip and say why.
set -u
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "browser-deps: cannot install chromium here (needs root and apt-get); browser tests will skip."
  exit 0
fi
echo "browser-deps: installing Debian's chromium (once per machine)..."
export DEBIAN_FRONTEND=noninteractive
if apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1; then
  echo "browser-deps: chromium installed."
else
  echo "browser-deps: apt-get install chromium failed; browser tests will skip."
fi
exit 0
