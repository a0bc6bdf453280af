#!/usr/bin/env bash
# jitcached under a sandbox that forbids Internet sockets (RestrictAddressFamilies=AF_UNIX, here a
# seccomp filter: tests/packaging/systemd_stand_ins/without_inet.c) refuses a TCP metrics_listen and a
# remote at start with exit status 78, naming the unit setting and the network drop-in, instead of
# failing as any error (status 1) that systemd would restart every second; without the filter the
# same configuration starts. Usage: check_sandbox_refusal.sh JITCACHED WITHOUT_INET
set -euo pipefail
jitcached="$1"; without_inet="$2"
work="$(mktemp -d)"
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
status=0
refused() {  # NAME=VALUE: the setting, as the daemon's environment gives it
  local rc=0
  timeout 20 env "$1" "$without_inet" "$jitcached" --foreground --socket "$work/s/jitcached.sock" --state-dir "$work/state" \
    > "$work/out" 2>&1 || rc=$?
  sed 's/^/  | /' "$work/out" | cut -c1-240
  [ "$rc" -eq 78 ] || { echo "FAIL: $1 under the filter: exit $rc, not 78"; status=1; }
  for text in RestrictAddressFamilies jitcached-network.conf "Address family not supported"; do
    grep -qF "$text" "$work/out" || { echo "FAIL: $1 under the filter: the refusal does not say '$text'"; status=1; }
  done
}
refused JITCACHE_METRICS_LISTEN=127.0.0.1:0
refused JITCACHE_REMOTE=redis://127.0.0.1:1/0
# The control: the same metrics setting without the filter starts and serves.
JITCACHE_METRICS_LISTEN=127.0.0.1:0 "$jitcached" --foreground --socket "$work/s/jitcached.sock" \
  --state-dir "$work/state" > "$work/control" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q 'metrics on http' "$work/control" && break; sleep 0.1; done
grep -q 'metrics on http' "$work/control" || { tail -5 "$work/control"; echo "FAIL: without the filter the daemon did not serve metrics"; status=1; }
[ "$status" -eq 0 ] && echo "PASS"
exit "$status"
