#!/usr/bin/env bash
# The LangGraph.js store writers' packages (storegen/js/node_modules), as `npm ci` installs them
# from storegen/js/package-lock.json, kept once per machine:
#
#   bash scripts/js-deps.sh        (make: storegen/js/node_modules/.installed)
#
# `npm ci` compiles better-sqlite3 (its own SQLite) wherever no prebuilt binary can be
# downloaded: minutes of C on a fresh clone. What it installs depends only on the lock, Node's
# version and the platform, so the first install on a machine is copied into a user cache keyed
# by them (like atheris, scripts/build-sanitized.sh), and a later clone copies it from there.
# TL_JS_CACHE= (empty) always runs `npm ci`.
set -euo pipefail
cd storegen/js

CACHE=${TL_JS_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/transcript-lens-js}
if [ -z "$CACHE" ]; then
  exec npm ci --silent --no-audit --no-fund
fi
key=$( { cat package-lock.json; node --version; uname -sm; } | sha256sum | cut -c1-32)
kept="$CACHE/$key"

if [ -d "$kept/node_modules" ]; then
  rm -rf node_modules
  cp -a "$kept/node_modules" node_modules
  echo "js-deps: node_modules for this lock copied from $kept"
  exit 0
fi
npm ci --silent --no-audit --no-fund
# Whole or not at all: a copy stopped halfway leaves no cache entry; of two at once, one stays.
mkdir -p "$CACHE"
tmp="$kept.tmp.$$"
rm -rf "$tmp"
mkdir -p "$tmp"
cp -a node_modules "$tmp/node_modules"
mv -T "$tmp" "$kept" 2>/dev/null || rm -rf "$tmp"
