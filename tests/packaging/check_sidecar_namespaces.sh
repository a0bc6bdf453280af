#!/usr/bin/env bash
# The container sidecar's shape (packaging/container) without a container engine: jitcached
# runs as one unprivileged uid in a mount namespace of its own, its state on a mount only that
# namespace has; each client runs as another uid in a mount namespace of its own. The two share
# nothing but one directory made like the pod example's emptyDir volume (root-owned, mode 2777, the
# pod's fsGroup as its group): an init step as the daemon's uid makes jitcache/ in it (0750), and
# that subdirectory alone is bind-mounted into both at /run/jitcache (read-only for clients), as
# the pod mounts it with subPath.
#
# Checks: the daemon refuses the shared volume's root as its socket directory and serves from the
# subdirectory (0750, socket 0660, both in the shared group); a client uid in that group that
# trusts the daemon's uid (JITCACHE_DAEMON_USER) is served, by the CLI and by libjitcache loading a
# PTX through the fake CUDA driver (compiled by the daemon, then, in a new process and namespace, a
# hit read from the published directory without a round trip); without JITCACHE_DAEMON_USER, or
# through the volume's root (writable by everyone), the client refuses the daemon; the client's
# namespace cannot reach the daemon's state nor write into the shared volume; a uid outside the
# group is refused (the CLI cannot connect, the library falls back to the driver, the published
# directory is closed to it).
#
# Usage: check_sidecar_namespaces.sh JITCACHED JITCACHE_CLI LOAD_PROGRAM LIBJITCACHE FAKE_DRIVER PTX
# Needs root (unshare --mount, mount, setpriv from util-linux); exits 77, which CTest reports as
# skipped, with the reason when it cannot make namespaces or switch uids here.
set -euo pipefail

skip() { echo "SKIP: $*"; exit 77; }
if [ "$#" -ne 6 ]; then echo "usage: $0 JITCACHED JITCACHE_CLI LOAD_PROGRAM LIBJITCACHE FAKE_DRIVER PTX"; exit 2; fi
jitcached="$1"; cli="$2"; load_program="$3"; libjitcache="$4"; fake_driver="$5"; ptx="$6"

[ "$(id -u)" -eq 0 ] || skip "needs root: it makes mount namespaces and runs the daemon and clients as other uids"
for tool in unshare setpriv mount; do
  command -v "$tool" >/dev/null || skip "$tool is missing (util-linux)"
done
unshare --mount -- sh -c 'mount -t tmpfs jitcache-probe /mnt' 2>/dev/null ||
  skip "cannot make a mount namespace with a tmpfs of its own here (no CAP_SYS_ADMIN, e.g. inside a container)"

# Numeric ids need no passwd or group entries: setpriv and the daemon's socket_group take numbers.
# Rationale: fixed ids far above Debian's dynamic ranges, like the pod example's fixed ids.
daemon_uid=61001   # jitcached (runAsUser of the sidecar)
client_uid=61002   # the application (runAsUser of the app container)
outsider_uid=61003 # a uid not in the shared group
shared_gid=61010   # the pod's fsGroup: the socket's group, supplementary for the daemon and the app

work="$(mktemp -d)"
daemon_pid=""
cleanup() {
  if [ -n "$daemon_pid" ]; then kill "$daemon_pid" 2>/dev/null || true; wait "$daemon_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  echo "--- daemon log"; cat "$work/daemon.log" 2>/dev/null || true
  exit 1
}

mkdir "$work/shared" "$work/state"
chgrp "$shared_gid" "$work/shared"
chmod 2777 "$work/shared"                   # an emptyDir with fsGroup: anyone may write its root
chown "$daemon_uid:$daemon_uid" "$work/state"
chmod 0700 "$work/state"

# The layout of every namespace, run as root inside it before it drops to its uid. Everything a
# process there may reach of the test comes in by a bind mount under /run, which is a tmpfs of the
# namespace's own; then the test's work directory and /tmp are covered with empty tmpfs mounts.
# The binaries come in by bind mounts too, so an unprivileged uid can run them wherever the build
# tree lies (a checkout under /root is not reachable by other uids).
export work jitcached cli load_program libjitcache fake_driver ptx
# shellcheck disable=SC2016
layout='
role="$1"; shift
mount -t tmpfs -o mode=0755 jitcache-run /run
mkdir -p /run/jitcache-test
bind_dir() { mkdir -p "/run/jitcache-test/$1"; mount --bind "$2" "/run/jitcache-test/$1"; }
# The volume: its root (volume roles), or the subdirectory the daemon made (subPath: jitcache).
case "$role" in
  *-volume) volume=/run/jitcache-shared; mkdir -p "$volume"; mount --bind "$work/shared" "$volume" ;;
  *) volume=/run/jitcache; mkdir -p "$volume"; mount --bind "$work/shared/jitcache" "$volume" ;;
esac
case "$role" in
  daemon|daemon-volume)
    bind_dir daemon "$(dirname "$jitcached")"   # jitcached and jitcache-compile beside it
    mount -t tmpfs -o mode=0755 jitcache-var-lib /var/lib
    mkdir /var/lib/jitcache
    mount --bind "$work/state" /var/lib/jitcache ;;
  client|client-volume)
    # As the pod mounts it into the application: read-only (a Unix socket connects all the same).
    mount -o remount,bind,ro "$volume"
    bind_dir cli "$(dirname "$cli")"
    bind_dir program "$(dirname "$load_program")"
    bind_dir lib "$(dirname "$libjitcache")"
    bind_dir fakes "$(dirname "$fake_driver")"
    bind_dir data "$(dirname "$ptx")" ;;
esac
mount -t tmpfs -o mode=0700 jitcache-hidden "$work"
mount -t tmpfs -o mode=1777 jitcache-tmp /tmp
exec "$@"
'
# in_namespace ROLE COMMAND...: COMMAND as root in a new mount namespace laid out for ROLE.
in_namespace() {
  local role="$1"; shift
  unshare --mount --propagation private -- bash -euo pipefail -c "$layout" "namespace-$role" "$role" "$@"
}
# The same, replacing the calling (sub)shell: `exec_in_namespace … &` makes $! the process that
# becomes COMMAND, so that the test can signal it.
exec_in_namespace() {
  local role="$1"; shift
  exec unshare --mount --propagation private -- bash -euo pipefail -c "$layout" "namespace-$role" "$role" "$@"
}
socket=/run/jitcache/jitcached.sock
daemon_env=(env -i PATH=/usr/bin:/bin HOME=/var/lib/jitcache)
as_daemon=(setpriv --reuid="$daemon_uid" --regid="$daemon_uid" --groups="$shared_gid" --no-new-privs --)
# The application's environment in the pod: the socket, and the daemon's uid as the one it trusts.
untrusting_env=(env -i PATH=/usr/bin:/bin HOME=/tmp JITCACHE_SOCKET="$socket"
                JITCACHE_CUDA_DRIVER="/run/jitcache-test/fakes/$(basename "$fake_driver")"
                LD_LIBRARY_PATH=/run/jitcache-test/lib)
client_env=("${untrusting_env[@]}" JITCACHE_DAEMON_USER="$daemon_uid")
as_client=(setpriv --reuid="$client_uid" --regid="$client_uid" --groups="$shared_gid" --no-new-privs --)
as_outsider=(setpriv --reuid="$outsider_uid" --regid="$outsider_uid" --clear-groups --no-new-privs --)
jitcache_cli="/run/jitcache-test/cli/$(basename "$cli")"
load="/run/jitcache-test/program/$(basename "$load_program")"
ptx_inside="/run/jitcache-test/data/$(basename "$ptx")"

echo "== the daemon refuses the shared volume's root as its socket directory"
if in_namespace daemon-volume "${as_daemon[@]}" "${daemon_env[@]}" "/run/jitcache-test/daemon/$(basename "$jitcached")" \
     --foreground --socket /run/jitcache-shared/jitcached.sock --socket-group "$shared_gid" \
     --state-dir /tmp/state > "$work/refused.log" 2>&1; then
  cat "$work/refused.log"; fail "jitcached started with its socket in the root of a world-writable volume"
fi
grep -q 'insecure socket directory /run/jitcache-shared' "$work/refused.log" ||
  { cat "$work/refused.log"; fail "the refusal does not name the insecure socket directory"; }
sed -n '1p' "$work/refused.log"

echo "== an init step as uid $daemon_uid makes the socket's directory in the volume (the pod's make-socket-dir)"
in_namespace daemon-volume "${as_daemon[@]}" mkdir -p -m 0750 /run/jitcache-shared/jitcache ||
  fail "uid $daemon_uid cannot make its directory in the volume"

echo "== the daemon: uid $daemon_uid, its own mount namespace, socket in the volume's subdirectory mounted at /run/jitcache"
exec_in_namespace daemon "${as_daemon[@]}" "${daemon_env[@]}" "/run/jitcache-test/daemon/$(basename "$jitcached")" \
  --foreground --socket "$socket" --socket-group "$shared_gid" --state-dir /var/lib/jitcache \
  > "$work/daemon.log" 2>&1 &
daemon_pid=$!
host_socket="$work/shared/jitcache/jitcached.sock"
for _ in $(seq 200); do
  [ -S "$host_socket" ] && grep -q 'ready on' "$work/daemon.log" && break
  kill -0 "$daemon_pid" 2>/dev/null || fail "jitcached exited"
  sleep 0.1
done
[ -S "$host_socket" ] || fail "no socket at $host_socket after 20 s"
[ "$(stat -c '%u %g %a' "$host_socket")" = "$daemon_uid $shared_gid 660" ] ||
  fail "the socket is $(stat -c '%u %g %a' "$host_socket"), not uid $daemon_uid, group $shared_gid, mode 660"
# The directory inherits the volume's setgid bit (2750); its permissions are what count.
if [ "$(stat -c '%u %g' "$work/shared/jitcache")" != "$daemon_uid $shared_gid" ] ||
   [ "$(( 0$(stat -c '%a' "$work/shared/jitcache") & 0777 ))" -ne "$(( 0750 ))" ]; then
  fail "the socket directory is $(stat -c '%u %g %a' "$work/shared/jitcache"), not uid $daemon_uid, group $shared_gid, mode 750"
fi
[ -f "$work/state/jitcache.db" ] || fail "the daemon's store is not on its state mount"

echo "== a client (uid $client_uid, in group $shared_gid) in another mount namespace"
in_namespace client "${as_client[@]}" "${client_env[@]}" "$jitcache_cli" ping ||
  fail "jitcache ping from the client's namespace"

echo "== the same client without JITCACHE_DAEMON_USER, or through the volume's root, refuses the daemon"
set +e
in_namespace client "${as_client[@]}" "${untrusting_env[@]}" "$jitcache_cli" ping > "$work/untrusting_ping.txt" 2>&1
status=$?
in_namespace client-volume "${as_client[@]}" "${client_env[@]}" JITCACHE_SOCKET=/run/jitcache-shared/jitcache/jitcached.sock \
  "$jitcache_cli" ping > "$work/volume_ping.txt" 2>&1
volume_status=$?
set -e
cat "$work/untrusting_ping.txt" "$work/volume_ping.txt"
[ "$status" -eq 3 ] && grep -q "is not trusted: .*uid $daemon_uid" "$work/untrusting_ping.txt" ||
  fail "without JITCACHE_DAEMON_USER the client did not refuse a daemon of uid $daemon_uid (exit $status)"
[ "$volume_status" -eq 3 ] && grep -q 'is not trusted: /run/jitcache-shared may be written by everyone' "$work/volume_ping.txt" ||
  fail "the client did not refuse a socket below the world-writable volume root (exit $volume_status)"

if in_namespace client "${as_client[@]}" touch /run/jitcache/planted 2>/dev/null; then
  fail "the client can write into the shared volume mounted read-only"
fi

echo "== the client's namespace cannot reach the daemon's state"
db_inode="$(stat -c '%d:%i' "$work/state/jitcache.db")"
# As root inside the client's namespace: what a process there could reach at most.
# shellcheck disable=SC2016
in_namespace client bash -c '
  for path in "$work/state/jitcache.db" /var/lib/jitcache/jitcache.db; do
    if [ -e "$path" ] && [ "$(stat -c %d:%i "$path")" = "$1" ]; then echo "$path is the daemon'\''s store"; exit 1; fi
  done
  [ ! -e "$work/daemon.log" ] || { echo "the test directory is visible"; exit 1; }
  cd /run/jitcache && find . | sort' sh "$db_inode" > "$work/client_view.txt" ||
  { cat "$work/client_view.txt"; fail "the client's namespace reaches the daemon's state"; }
echo "the client sees of the daemon: $(tr '\n' ' ' < "$work/client_view.txt")"
grep -qx './jitcached.sock' "$work/client_view.txt" || fail "the client does not see the socket"
if grep -vxE '\.|\./jitcached\.sock(\.lock|\.published)?' "$work/client_view.txt"; then
  fail "the shared directory holds more than the socket, its lock and the published directory"
fi

echo "== libjitcache in the client's namespace: a miss compiled by the daemon"
in_namespace client "${as_client[@]}" "${client_env[@]}" "$load" "$ptx_inside" | tee "$work/load1.txt" ||
  fail "the first load failed"
grep -q 'outcome compiled_by_daemon published_hits 0 published_rejects 0 ' "$work/load1.txt" ||
  fail "the first load was not compiled by the daemon"

published="$work/shared/jitcache/jitcached.sock.published"
for _ in $(seq 100); do
  [ -n "$(find "$published" -maxdepth 1 -type f ! -name '.*' 2>/dev/null)" ] && break
  sleep 0.1
done
[ -n "$(find "$published" -maxdepth 1 -type f ! -name '.*')" ] || fail "nothing was published in $published"
[ "$(stat -c '%u %g %a' "$published")" = "$daemon_uid $shared_gid 750" ] ||
  fail "the published directory is $(stat -c '%u %g %a' "$published"), not uid $daemon_uid, group $shared_gid, mode 750"
# The files too carry the shared group, which is not the daemon's own gid: else the client cannot read them.
for file in "$published"/*; do
  [ "$(stat -c '%u %g %a' "$file")" = "$daemon_uid $shared_gid 640" ] ||
    fail "the published file $file is $(stat -c '%u %g %a' "$file"), not uid $daemon_uid, group $shared_gid, mode 640"
done

echo "== a new process in a new namespace: a hit from the published directory"
in_namespace client "${as_client[@]}" "${client_env[@]}" "$load" "$ptx_inside" | tee "$work/load2.txt" ||
  fail "the second load failed"
grep -q 'outcome hit published_hits 1 published_rejects 0 .*published copy' "$work/load2.txt" ||
  fail "the second load was not a hit from the published copy"
for _ in $(seq 50); do  # the hit is noted to the daemon (HIT_NOTE) as the process exits
  in_namespace client "${as_client[@]}" "${client_env[@]}" "$jitcache_cli" stats --json > "$work/stats.json"
  grep -qE '"published_hits": *[1-9]' "$work/stats.json" && break
  sleep 0.1
done
grep -qE '"published_hits": *[1-9]' "$work/stats.json" || { cat "$work/stats.json"; fail "the daemon counted no published hit"; }
grep -qE '"compiles": *1,' "$work/stats.json" || { cat "$work/stats.json"; fail "the daemon did not count one compile"; }
grep -E '"(compiles|hits|published_hits)":' "$work/stats.json" | tr -d ' \n'; echo

echo "== a uid outside the group ($outsider_uid) is refused"
set +e
in_namespace client "${as_outsider[@]}" "${client_env[@]}" "$jitcache_cli" ping > "$work/outsider_ping.txt" 2>&1
status=$?
set -e
cat "$work/outsider_ping.txt"
[ "$status" -eq 3 ] || fail "jitcache ping as uid $outsider_uid exited $status, not 3 (daemon unreachable)"
grep -q 'Permission denied' "$work/outsider_ping.txt" || fail "the refusal is not a permission error"
in_namespace client "${as_outsider[@]}" "${client_env[@]}" JITCACHE_QUIET=1 "$load" "$ptx_inside" | tee "$work/load3.txt" ||
  fail "the outsider's load failed: the library must fall back to the driver"
grep -q 'outcome uncached_fallback published_hits 0 .*cannot be used.*Permission denied' "$work/load3.txt" ||
  fail "the outsider's load was not an uncached fallback for want of the daemon"
if in_namespace client "${as_outsider[@]}" ls "/run/jitcache/jitcached.sock.published" >/dev/null 2>&1; then
  fail "uid $outsider_uid can list the published directory"
fi

kill "$daemon_pid"
wait "$daemon_pid" || fail "jitcached did not exit 0 on SIGTERM"
daemon_pid=""
echo "PASS"
