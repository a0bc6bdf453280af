#!/usr/bin/env bash
# Checks packaging/systemd without a running systemd: `systemd-analyze verify` (syntax, references,
# the executable) and the exposure score of `systemd-analyze security --offline=yes`, which must be
# at most 2.0 (docs/operations.md "Running as a service (systemd)"). Usage: check_systemd_units.sh UNIT_DIR JITCACHED_PATH
set -euo pipefail
units="$1"
jitcached="$2"
for tool in systemd-analyze; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (scripts/install-deps installs systemd)"; exit 1; }
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The units name the installed path; verify needs an executable that exists here.
sed "s#/usr/sbin/jitcached#$jitcached#" "$units/jitcached.service" > "$work/jitcached.service"
cp "$units/jitcached.socket" "$work/"
cd "$work"
systemd-analyze verify ./jitcached.socket ./jitcached.service
# --threshold is in tenths: 20 means an overall exposure of 2.0.
if ! systemd-analyze security --offline=yes --threshold=20 ./jitcached.service > security.txt 2>&1; then
  cat security.txt
  echo "FAIL: the exposure of jitcached.service is above 2.0"
  exit 1
fi
tail -1 security.txt
