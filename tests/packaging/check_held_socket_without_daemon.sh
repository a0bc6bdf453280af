#!/usr/bin/env bash
# A socket that systemd holds while no daemon serves it (a service failing at every start): `jitcache
# ping` and `jitcache doctor` must say so within seconds, naming `systemctl status jitcached` and
# `journalctl -u jitcached`, instead of waiting a minute in the backlog and advising a restart.
# The holder is tests/packaging/systemd_stand_ins/listen_then_run.c as PID 1 of a new PID namespace, as
# systemd is PID 1 for its clients. Needs root for the namespace; exits 77 (skipped) where unshare
# cannot make one. Usage: check_held_socket_without_daemon.sh JITCACHE_CLI LISTEN_THEN_RUN
set -euo pipefail
cli="$1"; holder="$2"
[ "$(id -u)" -eq 0 ] || { echo "SKIP: a PID namespace needs root"; exit 77; }
unshare --pid --fork true 2>/dev/null || { echo "SKIP: unshare --pid does not work here"; exit 77; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
socket="$work/jitcached.sock"

for command in ping doctor; do
  started=$SECONDS
  status=0
  unshare --pid --fork "$holder" "$socket" env JITCACHE_SOCKET="$socket" "$cli" "$command" > "$work/$command.out" 2>&1 ||
    status=$?
  elapsed=$((SECONDS - started))
  sed 's/^/  | /' "$work/$command.out"
  rm -f "$socket"
  [ "$status" -ne 0 ] || { echo "FAIL: jitcache $command succeeded with no daemon"; exit 1; }
  [ "$elapsed" -le 15 ] || { echo "FAIL: jitcache $command took $elapsed s (at most 15)"; exit 1; }
  for text in "systemd holds the socket" "systemctl status jitcached" "journalctl -u jitcached"; do
    grep -qF "$text" "$work/$command.out" || { echo "FAIL: jitcache $command does not say '$text'"; exit 1; }
  done
  echo "jitcache $command: exit $status after $elapsed s"
done
if grep -q "should be restarted" "$work/doctor.out"; then
  echo "FAIL: doctor advises a restart, which cannot help a service that fails at every start"
  exit 1
fi
echo "PASS"
