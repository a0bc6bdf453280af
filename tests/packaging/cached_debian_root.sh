#!/usr/bin/env bash
# A clean Debian 12 root with systemd and dbus for check_package_under_systemd.sh, made once with
# debootstrap from Debian's archive and kept in a cache directory between runs (the test never
# writes into it: every run boots an overlay or a copy of it). Prints the root's path.
#
# Usage: cached_debian_root.sh CACHE_DIR
#   CACHE_DIR/bookworm-base   the root: debootstrap --variant=minbase --include=systemd,dbus bookworm
# Made under a lock, into a temporary directory renamed when debootstrap succeeded, so a run never
# sees half a root. Delete the directory to make it again (e.g. to pick up a Debian point release).
# Exits 77 (skipped, with the reason) when there is no root and debootstrap is missing or fails (no
# network: the log's tail says).
set -euo pipefail
cache="$1"
base="$cache/bookworm-base"
mirror="${JITCACHE_CI_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

usable() { [ -x "$1/usr/lib/systemd/systemd" ] && [ -e "$1/usr/bin/dbus-daemon" ] && [ -s "$1/var/lib/dpkg/status" ]; }

if usable "$base"; then echo "$base"; exit 0; fi
mkdir -p "$cache"
exec 9> "$cache/bookworm-base.lock"
flock 9
if usable "$base"; then echo "$base"; exit 0; fi
command -v debootstrap >/dev/null || { echo "SKIP: no cached root at $base and debootstrap is missing (scripts/install-deps)" >&2; exit 77; }
partial="$cache/bookworm-base.partial"
rm -rf "$partial"
echo "making $base with debootstrap from $mirror (once; about a minute)" >&2
if ! debootstrap --variant=minbase --include=systemd,dbus bookworm "$partial" "$mirror" > "$cache/debootstrap.log" 2>&1; then
  tail -5 "$cache/debootstrap.log" >&2
  rm -rf "$partial"
  echo "SKIP: debootstrap could not make a Debian 12 root from $mirror (log: $cache/debootstrap.log)" >&2
  exit 77
fi
rm -rf "$base"
mv "$partial" "$base"
echo "$base"
