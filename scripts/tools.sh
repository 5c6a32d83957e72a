#!/usr/bin/env bash
# Installs the tools madmax builds and tests with, each only when missing (a second run is fast).
# Every tool comes from a package registry (crates.io, npm, Debian); see ../shared/toolchain.md.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'tools: %s\n' "$*"; }
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"

# Rust target for the web page.
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# Trunk 0.21 (0.22 needs a newer rustc than this machine's).
if ! trunk --version 2>/dev/null | grep -q '^trunk 0\.21\.'; then
  say "installing trunk 0.21 (several minutes)"
  cargo install trunk --version '~0.21' --locked
fi

# wasm-bindgen CLI: must equal the library version in Cargo.lock exactly.
wb=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
if [ -z "$wb" ]; then
  echo "tools: cannot find wasm-bindgen in Cargo.lock" >&2
  exit 1
fi
if ! wasm-bindgen --version 2>/dev/null | grep -q " $wb\$"; then
  say "installing wasm-bindgen-cli $wb (a few minutes)"
  # Without --locked: with it, dependency resolution fails (webpki-roots).
  cargo install wasm-bindgen-cli --version "=$wb"
fi

# wasm-opt (binaryen 132), playwright-core and axe-core, pinned in package-lock.json.
if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/axe-core ]; then
  say "installing npm tools (binaryen, playwright-core, axe-core)"
  npm ci --no-audit --no-fund
fi

# Chromium for the browser tests (Debian's package; Playwright never downloads a browser).
if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
  say "installing Chromium"
  sudo_cmd=""
  if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium chromium-driver >/dev/null
fi
say "all present"
