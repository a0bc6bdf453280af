#!/usr/bin/env bash
# The Debian package under a real systemd: the .deb built from this tree goes into a clean
# Debian 12 root (debootstrap minbase with systemd and dbus, tests/packaging/cached_debian_root.sh)
# booted by systemd-nspawn with systemd 252 as PID 1, installed by apt so that its Depends are all
# that brings libraries in. Checks, each reported on its own and all of them run:
#   1. socket activation: after the install only jitcached.socket runs; the first connection starts
#      jitcached.service, which reaches `active` (Type=notify: READY=1) as user jitcache;
#   2. `systemd-analyze security jitcached.service` of the loaded unit: exposure at most 2.0;
#   3. a published hit under the shipped sandbox: a client uid in group jitcache loads a PTX twice
#      through libjitcache and the fake CUDA driver; the second load reads the published copy;
#   4. the watchdog: a daemon stopped with SIGSTOP is killed and restarted (WatchdogSec=5s in a
#      drop-in for this step only, instead of the unit's 30 s, to keep the test short);
#   5. a crash loop keeps the socket: a configuration that makes every start fail (a drop-in) is
#      retried past systemd's default start limit, the socket stays active, and once the drop-in
#      goes the daemon comes back by itself;
#   6. 4 clients looping `jitcache ping` through 10 restarts and a package upgrade (the same build
#      repacked with a higher version, so that dpkg runs the upgrade path) see 0 failures;
#   7. an upgrade leaves a socket the administrator disabled disabled and stopped (postinst enables
#      on the first install only, as dh_installsystemd does);
#   8. right after the install: /etc/jitcache is root's, `jitcache keygen --out /etc/jitcache/builder`
#      works, the documented preload path (/usr/lib/<triplet>/libjitcache-preload.so) is the file
#      `jitcache preload-path` prints; a user outside the group jitcache is told to join it;
#   9. under the shipped unit a TCP metrics_listen is refused, naming RestrictAddressFamilies, with
#      exit status 78 and no restart (not a crash loop), and `jitcache ping` then names systemd and
#      the journal within seconds; a remote_password_file the daemon's user cannot read is named
#      with the reason and its uid;
#  10. with the network drop-in (packaging/systemd/jitcached-network.conf) metrics answer over TCP
#      and a fleet remote on a Redis inside the container answers `jitcache remote check`;
#  11. purge removes the units, the binaries, /var/lib/jitcache, /etc/jitcache and /run/jitcache,
#      and leaves the jitcache user and group (Debian leaves system users: packaging/debian/daemon/postrm).
#
# Usage: check_package_under_systemd.sh DEB_DIR LOAD_PROGRAM FAKE_DRIVER PTX NVJITLINK_DIR
#   DEB_DIR: where cpack put jitcache_, libjitcache0_ and libjitcache-dev_<version>_<arch>.deb (the
#   CTest fixture runs it). The Redis of step 10 is the host's redis-server, copied in with the
#   libraries a minimal root lacks (skipped, saying so, where the host has none).
#   NVJITLINK_DIR: the toolkit directory holding libnvJitLink.so.<major>, bind-mounted read-only at
#   the same path (the worker's RUNPATH; it stands in for NVIDIA's package on a GPU host).
# The root is cached under $JITCACHE_CI_CACHE (default /var/cache/jitcache-ci: bookworm-base/, and
# apt-archives/ for the packages apt downloads) and each run boots an overlay of it (a copy where
# overlayfs is not available), thrown away at the end. Needs root. Exits 77, which CTest reports as
# skipped, with the reason when systemd-nspawn is missing, no root can be made, or nspawn cannot
# boot one here.
set -euo pipefail

skip() { echo "SKIP: $*"; exit 77; }
if [ "$#" -ne 5 ]; then echo "usage: $0 DEB_DIR LOAD_PROGRAM FAKE_DRIVER PTX NVJITLINK_DIR"; exit 2; fi
deb_dir="$1"; load_program="$2"; fake_driver="$3"; ptx="$4"; nvjitlink_dir="$5"
here="$(cd "$(dirname "$0")" && pwd)"

[ "$(id -u)" -eq 0 ] || skip "needs root: it boots a container with systemd-nspawn"
command -v systemd-nspawn >/dev/null || skip "systemd-nspawn is missing (package systemd-container: scripts/install-deps)"
for tool in nsenter flock pgrep dpkg-deb; do
  command -v "$tool" >/dev/null || skip "$tool is missing"
done
deb="$(find "$deb_dir" -maxdepth 1 -name 'jitcache_*.deb' 2>/dev/null | head -1)"
[ -f "$deb" ] || { echo "FAIL: no jitcache_*.deb in $deb_dir"; exit 1; }
runtime_deb="$(find "$deb_dir" -maxdepth 1 -name 'libjitcache0_*.deb' 2>/dev/null | head -1)"
[ -f "$runtime_deb" ] || { echo "FAIL: no libjitcache0_*.deb in $deb_dir"; exit 1; }
cache="${JITCACHE_CI_CACHE:-/var/cache/jitcache-ci}"
status=0
base="$("$here/cached_debian_root.sh" "$cache")" || status=$?
[ "$status" -eq 0 ] || exit "$status"

# A run killed outright (CTest's timeout) leaves its overlay mounted: undo those of dead runs.
for stale in /var/tmp/jitcache-systemd.*; do
  if [ ! -f "$stale/pid" ] || kill -0 "$(cat "$stale/pid")" 2>/dev/null; then continue; fi
  if mountpoint -q "$stale/root"; then umount "$stale/root" || continue; fi
  rm -rf "$stale"
done
start_time=$SECONDS
work="$(mktemp -d /var/tmp/jitcache-systemd.XXXXXX)"
echo $$ > "$work/pid"
root="$work/root"
nspawn_pid=""
leader=""
loop_pids=()
failures=()
cleanup() {
  set +e
  for pid in "${loop_pids[@]}"; do kill "$pid" 2>/dev/null; done
  if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
    [ -n "$leader" ] && nsenter -t "$leader" -a systemctl poweroff --no-block >/dev/null 2>&1
    for _ in $(seq 100); do kill -0 "$nspawn_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$nspawn_pid" 2>/dev/null
    wait "$nspawn_pid" 2>/dev/null
  fi
  if mountpoint -q "$root"; then umount "$root" || umount -l "$root"; fi
  mountpoint -q "$root" || rm -rf "$work"
}
trap cleanup EXIT
failed() {
  echo "FAIL: $*"
  failures+=("$*")
}
phase() { echo "== [$((SECONDS - start_time)) s] $*"; }

phase "a clean root: an overlay of $base"
mkdir -p "$work/upper" "$work/overlay-work" "$root"
if ! mount -t overlay jitcache-ci-root -o "lowerdir=$base,upperdir=$work/upper,workdir=$work/overlay-work" "$root" 2>/dev/null; then
  echo "no overlayfs here: copying the root"
  cp -a "$base/." "$root/"
fi

# What the test brings into the root besides the package: the fake driver (and the file its name
# points to: libjitcache reads the driver build from it), a program that loads a PTX, the PTX, and
# the same package repacked with a higher version for the upgrade.
version="$(dpkg-deb -f "$deb" Version)"
mkdir -p "$work/repack" "$root/opt/jitcache-test"
for package in jitcache libjitcache0; do
  source_deb="$deb"; [ "$package" = jitcache ] || source_deb="$runtime_deb"
  dpkg-deb -R "$source_deb" "$work/repack/$package"
  # The new version, and jitcache's exact dependency on libjitcache0 with it.
  sed -i -e "s/^Version: .*/Version: ${version}+ci.upgrade/" -e "s/(= ${version})/(= ${version}+ci.upgrade)/g" \
    "$work/repack/$package/DEBIAN/control"
  dpkg-deb -Znone -b "$work/repack/$package" "$root/opt/jitcache-test/${package}_upgrade.deb" >/dev/null
done
cp "$deb" "$root/opt/jitcache-test/jitcache.deb"
cp "$runtime_deb" "$root/opt/jitcache-test/libjitcache0.deb"
# A Redis for the fleet step: the host's, with the libraries a minimal root lacks.
redis_binary="$(readlink -f "$(command -v redis-server || true)" 2>/dev/null || true)"
if [ -x "$redis_binary" ]; then
  mkdir -p "$root/opt/jitcache-test/redis"
  cp "$redis_binary" "$root/opt/jitcache-test/redis/redis-server"
  for library in libatomic.so.1 liblzf.so.1 libjemalloc.so.2; do
    path="$(ldd "$redis_binary" | awk -v l="$library" '$1 == l { print $3 }')"
    [ -n "$path" ] && cp -L "$path" "$root/opt/jitcache-test/redis/"
  done
fi
cp -P "$fake_driver" "$(dirname "$fake_driver")/$(readlink "$fake_driver")" "$root/opt/jitcache-test/"
cp "$load_program" "$root/opt/jitcache-test/load_module"
cp "$ptx" "$root/opt/jitcache-test/kernel.ptx"
cp "$here/ping_loop.sh" "$root/opt/jitcache-test/"
chmod -R a+rX "$root/opt/jitcache-test"
mkdir -p "$cache/apt-archives/partial"

phase "boot it: systemd-nspawn -b --register=no --keep-unit"
systemd-nspawn -D "$root" -b --register=no --keep-unit -M "jitcache-ci-$$" --resolv-conf=copy-host \
  --bind-ro="$nvjitlink_dir" --bind="$cache/apt-archives:/var/cache/apt/archives" \
  < /dev/null > "$work/console.log" 2>&1 &
nspawn_pid=$!
for _ in $(seq 300); do
  leader="$(pgrep -P "$nspawn_pid" -x systemd || true)"
  [ -n "$leader" ] && break
  kill -0 "$nspawn_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$leader" ]; then
  tail -20 "$work/console.log"
  skip "systemd-nspawn could not boot the root here (its output is above)"
fi
# Commands inside the container, as root, with a clean environment, for at most $timeout_s seconds.
inside() {
  timeout "${timeout_s:-300}" nsenter -t "$leader" -a -- env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive SYSTEMD_PAGER= SYSTEMD_COLORS=0 "$@"
}
state=""
for _ in $(seq 120); do
  state="$(timeout 60 nsenter -t "$leader" -a systemctl is-system-running --wait 2>/dev/null || true)"
  case "$state" in running | degraded) break ;; esac
  kill -0 "$nspawn_pid" 2>/dev/null || break
  sleep 0.5
done
case "$state" in
  running) ;;
  degraded) echo "the container booted degraded:"; inside systemctl --failed --no-legend ;;
  *) tail -20 "$work/console.log"; skip "systemd in the container did not finish booting (state '$state')" ;;
esac
echo "PID 1 in the container: $(inside systemctl --version | head -1)"

phase "apt-get install the package (its Depends bring every library in)"
apt_install() { flock "$cache/apt-archives.lock" timeout 600 nsenter -t "$leader" -a -- env -i \
  PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends /opt/jitcache-test/jitcache.deb /opt/jitcache-test/libjitcache0.deb \
  > "$work/apt.log" 2>&1; }
if ! apt_install; then
  # The root's package lists are from when it was made; a Debian point release since then has
  # removed the versions they name from the archive.
  echo "apt-get install failed; updating the package lists and trying again"
  tail -3 "$work/apt.log"
  inside apt-get update -q > "$work/apt-update.log" 2>&1 ||
    { tail -5 "$work/apt-update.log"; skip "apt-get update failed in the container (no network?)"; }
  apt_install || { cat "$work/apt.log"; echo "FAIL: the package does not install into a clean Debian 12"; exit 1; }
fi
grep -E '^(Setting up|Unpacking) ' "$work/apt.log" | sed 's/^/  /' | head -30
jitcache_gid="$(inside getent group jitcache | cut -d: -f3)"
[ -n "$jitcache_gid" ] || failed "the package did not create the group jitcache"

# A client: a uid with no account, in group jitcache, as a user added to the group would be.
client_uid=61002
as_client() {
  inside setpriv --reuid="$client_uid" --regid="$client_uid" --groups="$jitcache_gid" --no-new-privs -- \
    env HOME=/tmp JITCACHE_SOCKET=/run/jitcache/jitcached.sock "$@"
}
unit_property() { inside systemctl show -p "$2" --value "$1"; }
journal() { inside journalctl -u jitcached.service -u jitcached.socket --no-pager -q -n "${1:-25}" | sed 's/^/  | /'; }

phase "8. right after the install: /etc/jitcache, keygen, the preload path, a user outside the group"
# Before the service ever ran: the directory is the package's, root's, not made by systemd for the
# daemon's user.
etc_owner="$(inside stat -c '%U:%G %a' /etc/jitcache 2>&1 || true)"
[ "$etc_owner" = "root:root 755" ] || failed "/etc/jitcache is '$etc_owner' right after the install, not root:root 755"
if inside jitcache keygen --out /etc/jitcache/builder > "$work/keygen.txt" 2>&1; then
  [ "$(inside stat -c '%U %a' /etc/jitcache/builder.key)" = "root 600" ] || failed "keygen's builder.key is not root's 0600"
else
  cat "$work/keygen.txt"
  failed "jitcache keygen --out /etc/jitcache/builder fails right after the install"
fi
multiarch="$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)"
documented_preload="/usr/lib/$multiarch/libjitcache-preload.so"
inside test -f "$documented_preload" || failed "the documented preload path $documented_preload does not exist"
printed_preload="$(inside jitcache preload-path 2>&1 || true)"
[ "$printed_preload" = "$documented_preload" ] ||
  failed "jitcache preload-path prints '$printed_preload', not $documented_preload"
# A user not in the group jitcache, with no JITCACHE_SOCKET: told which group to join, not that a
# socket in /tmp is missing.
outsider_out="$(inside setpriv --reuid=61003 --regid=61003 --clear-groups --no-new-privs -- env HOME=/tmp \
  jitcache ping 2>&1 || true)"
echo "  a user outside the group: $outsider_out"
for text in /run/jitcache "group jitcache" "usermod -aG jitcache"; do
  [[ "$outsider_out" == *"$text"* ]] || failed "a user outside the group is not told '$text' ($outsider_out)"
done
[[ "$outsider_out" != *"/tmp/jitcache-61003"* ]] || failed "a user outside the group is sent to /tmp/jitcache-61003"
outsider_doctor="$(inside setpriv --reuid=61003 --regid=61003 --clear-groups --no-new-privs -- env HOME=/tmp \
  jitcache doctor 2>&1 || true)"
[[ "$outsider_doctor" == *"usermod -aG jitcache"* ]] ||
  { echo "$outsider_doctor" | head -8; failed "doctor does not tell a user outside the group to join it"; }

phase "1. socket activation: the socket listens, the first connection starts the service"
[ "$(inside systemctl is-enabled jitcached.socket)" = enabled ] || failed "postinst did not enable jitcached.socket"
[ "$(inside systemctl is-active jitcached.socket)" = active ] || failed "jitcached.socket is not active after the install"
service_before="$(inside systemctl is-active jitcached.service || true)"
[ "$service_before" = inactive ] ||
  failed "jitcached.service is '$service_before' before any connection (socket activation starts it on the first)"
if timeout_s=60 as_client jitcache ping; then
  [ "$(unit_property jitcached.service ActiveState)/$(unit_property jitcached.service SubState)" = active/running ] ||
    failed "jitcached.service is not active/running after the first connection"
  [ "$(unit_property jitcached.service Type)" = notify ] || failed "jitcached.service is not Type=notify"
  main_pid="$(unit_property jitcached.service MainPID)"
  [ "$(inside stat -c %U "/proc/$main_pid")" = jitcache ] || failed "jitcached does not run as user jitcache"
  started="$(unit_property jitcached.service ExecMainStartTimestampMonotonic)"
  ready="$(unit_property jitcached.service ActiveEnterTimestampMonotonic)"
  echo "start to READY=1 on an empty store: $(((ready - started) / 1000)) ms"
else
  failed "the first connection got no answer: jitcached.service is $(inside systemctl is-active jitcached.service || true)"
  journal
fi

phase "2. systemd-analyze security of the loaded unit"
inside systemd-analyze security --no-pager jitcached.service > "$work/security.txt" 2>&1 || true
exposure="$(sed -n 's/.*Overall exposure level for jitcached.service: \([0-9.]*\).*/\1/p' "$work/security.txt")"
echo "exposure: ${exposure:-none}"
if [ -z "$exposure" ] || ! awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }'; then
  tail -5 "$work/security.txt"
  failed "the exposure of jitcached.service is '${exposure}', not at most 2.0"
fi

phase "3. a published hit under the shipped sandbox"
client_load=(as_client env JITCACHE_CUDA_DRIVER="/opt/jitcache-test/$(basename "$fake_driver")"
             /opt/jitcache-test/load_module /opt/jitcache-test/kernel.ptx)
if "${client_load[@]}" > "$work/load1.txt"; then
  cat "$work/load1.txt"
  published=/run/jitcache/jitcached.sock.published
  for _ in $(seq 50); do
    [ -n "$(inside find "$published" -maxdepth 1 -type f ! -name '.*' 2>/dev/null)" ] && break
    sleep 0.1
  done
  "${client_load[@]}" > "$work/load2.txt" || true
  cat "$work/load2.txt"
  if ! grep -q 'outcome hit published_hits 1 ' "$work/load2.txt"; then
    failed "the second load was not a hit from the published directory"
    echo "  published directory: $(inside ls -la "$published" 2>&1 | tr '\n' ' ')"
    journal 15
  fi
else
  cat "$work/load1.txt"
  failed "the first load through libjitcache failed"
fi

phase "4. the watchdog restarts a stopped daemon (WatchdogSec=5s in a drop-in for this step)"
inside mkdir -p /etc/systemd/system/jitcached.service.d
printf '[Service]\nWatchdogSec=5s\n' > "$root/etc/systemd/system/jitcached.service.d/ci-watchdog.conf"
inside systemctl daemon-reload
inside systemctl restart jitcached.service || failed "systemctl restart jitcached.service failed"
stopped_pid="$(unit_property jitcached.service MainPID)"
restarts_before="$(unit_property jitcached.service NRestarts)"
if [ "$stopped_pid" -le 1 ]; then
  failed "no daemon runs to stop (MainPID $stopped_pid)"
else
  # shellcheck disable=SC2016
  inside sh -c 'kill -STOP "$1"' sh "$stopped_pid"
  restarted=""
  for _ in $(seq 300); do
    pid="$(unit_property jitcached.service MainPID)"
    if [ "$pid" != 0 ] && [ "$pid" != "$stopped_pid" ] && [ "$(unit_property jitcached.service ActiveState)" = active ]; then
      restarted=yes; break
    fi
    sleep 0.1
  done
  inside journalctl -u jitcached.service --no-pager -q > "$work/journal.txt" || true
  if [ -n "$restarted" ] && [ "$(unit_property jitcached.service NRestarts)" -gt "$restarts_before" ] &&
     grep -q 'Watchdog timeout' "$work/journal.txt"; then
    echo "the stopped daemon ($stopped_pid) was killed on its watchdog and restarted as $pid"
  else
    failed "the watchdog did not restart a daemon stopped with SIGSTOP within 30 s"
    journal
    # shellcheck disable=SC2016
    inside sh -c 'kill -CONT "$1"' sh "$stopped_pid" 2>/dev/null || true
  fi
fi
rm "$root/etc/systemd/system/jitcached.service.d/ci-watchdog.conf"
inside systemctl daemon-reload
inside systemctl restart jitcached.service || failed "systemctl restart jitcached.service failed"

phase "5. a crash loop keeps the socket (every start fails, past the default start limit of 5 in 10 s)"
printf '[Service]\nEnvironment=JITCACHE_LOG_LEVEL=no-such-level\n' > "$root/etc/systemd/system/jitcached.service.d/ci-crash-loop.conf"
inside systemctl daemon-reload
# A start asked for by hand sets NRestarts (the restarts made by Restart=) back to 0.
inside systemctl restart --no-block jitcached.service
for _ in $(seq 300); do
  [ "$(unit_property jitcached.service NRestarts)" -ge 7 ] && break
  [ "$(unit_property jitcached.socket ActiveState)" = active ] || break
  sleep 0.1
done
echo "restarts: $(unit_property jitcached.service NRestarts); service $(unit_property jitcached.service ActiveState) ($(unit_property jitcached.service Result)), socket $(unit_property jitcached.socket ActiveState) ($(unit_property jitcached.socket Result))"
rm "$root/etc/systemd/system/jitcached.service.d/ci-crash-loop.conf"
inside systemctl daemon-reload
if [ "$(unit_property jitcached.socket ActiveState)" != active ]; then
  failed "the crash loop took jitcached.socket down ($(unit_property jitcached.socket Result))"
  journal 10
  inside systemctl reset-failed jitcached.service jitcached.socket || true
  inside systemctl start jitcached.socket || true
else
  # The next restart picks the fixed configuration up, with nobody resetting anything.
  for _ in $(seq 100); do
    [ "$(unit_property jitcached.service ActiveState)" = active ] && break
    sleep 0.1
  done
  timeout_s=30 as_client jitcache ping > /dev/null || failed "the daemon did not come back by itself after the crash loop"
fi

phase "6. 4 clients looping jitcache ping through 10 restarts and a package upgrade"
inside install -d -o "$client_uid" -m 0700 /tmp/jitcache-ci
for i in 1 2 3 4; do
  as_client sh /opt/jitcache-test/ping_loop.sh "$i" &
  loop_pids+=($!)
done
sleep 1
for i in $(seq 10); do
  inside systemctl restart jitcached.service || failed "systemctl restart $i failed"
  sleep 0.3
done
pid_before="$(unit_property jitcached.service MainPID)"
inside dpkg -i /opt/jitcache-test/jitcache_upgrade.deb /opt/jitcache-test/libjitcache0_upgrade.deb > "$work/upgrade.log" 2>&1 ||
  { cat "$work/upgrade.log"; failed "dpkg -i of the upgrade failed"; }
sleep 1
inside touch /tmp/jitcache-ci/stop
for pid in "${loop_pids[@]}"; do wait "$pid" || true; done
loop_pids=()
# shellcheck disable=SC2016
[ "$(inside dpkg-query -W -f '${Version}' jitcache)" = "${version}+ci.upgrade" ] || failed "the upgrade did not install"
[ "$(unit_property jitcached.service MainPID)" != "$pid_before" ] || failed "the upgrade did not restart the daemon"
[ "$(unit_property jitcached.service ActiveState)" = active ] || failed "jitcached.service is not active after the upgrade"
ok=0; lost=0
for i in 1 2 3 4; do
  read -r client_ok client_lost <<< "$(inside cat "/tmp/jitcache-ci/ping.$i.result" || echo 0 0)"
  ok=$((ok + client_ok)); lost=$((lost + client_lost))
done
echo "pings answered: $ok, failed: $lost"
if [ "$lost" -ne 0 ]; then
  inside sh -c 'cat /tmp/jitcache-ci/ping.*.err' | sort | uniq -c | head -5
  failed "$lost of $((ok + lost)) pings failed across 10 restarts and an upgrade"
fi
[ "$ok" -ge 40 ] || failed "only $ok pings were answered: the clients did not run through the restarts"

phase "7. an upgrade leaves a socket the administrator disabled disabled"
inside systemctl disable --now jitcached.socket jitcached.service > /dev/null 2>&1 || failed "systemctl disable --now failed"
inside dpkg -i /opt/jitcache-test/jitcache_upgrade.deb /opt/jitcache-test/libjitcache0_upgrade.deb > "$work/upgrade2.log" 2>&1 ||
  { cat "$work/upgrade2.log"; failed "dpkg -i of the upgrade over a disabled socket failed"; }
[ "$(inside systemctl is-enabled jitcached.socket || true)" = disabled ] ||
  failed "the upgrade enabled jitcached.socket again ($(inside systemctl is-enabled jitcached.socket || true))"
[ "$(unit_property jitcached.socket ActiveState)" = inactive ] || failed "the upgrade started the disabled jitcached.socket"
[ "$(unit_property jitcached.service ActiveState)" = inactive ] || failed "the upgrade started jitcached.service"
inside systemctl enable --now jitcached.socket > /dev/null 2>&1 || failed "systemctl enable --now jitcached.socket failed"

phase "9. under the shipped unit a TCP metrics_listen is refused (exit 78), not restarted"
metrics_port=$((20000 + $$ % 20000))
inside systemctl stop jitcached.service
printf 'metrics_listen = "127.0.0.1:%s"\n' "$metrics_port" > "$root/etc/jitcache/jitcached.toml"
inside systemctl start --no-block jitcached.service
for _ in $(seq 100); do
  [ "$(unit_property jitcached.service ActiveState)" = failed ] && break
  sleep 0.1
done
sleep 2  # a restart would come after RestartSec=1s
echo "service: $(unit_property jitcached.service ActiveState), status $(unit_property jitcached.service ExecMainStatus), restarts $(unit_property jitcached.service NRestarts)"
[ "$(unit_property jitcached.service ActiveState)" = failed ] || failed "a metrics_listen the sandbox forbids did not stop the service"
[ "$(unit_property jitcached.service ExecMainStatus)" = 78 ] || failed "the refusal's exit status is not 78"
[ "$(unit_property jitcached.service NRestarts)" = 0 ] || failed "systemd restarted a service that refused a forbidden setting"
inside journalctl -u jitcached.service --no-pager -q -n 20 > "$work/refusal.txt" || true
grep -q 'RestrictAddressFamilies' "$work/refusal.txt" || { sed 's/^/  | /' "$work/refusal.txt"; failed "the refusal does not name RestrictAddressFamilies"; }
grep -m1 'metrics_listen' "$work/refusal.txt" | cut -c1-300 | sed 's/^/  | /'
# A client now: the socket starts one more attempt, which refuses again and closes the waiting
# connection: ping fails at once naming systemd and the journal; the socket keeps listening.
ping_started=$SECONDS
ping_out="$(timeout_s=60 as_client jitcache ping 2>&1 || true)"
echo "  ping: $ping_out ($((SECONDS - ping_started)) s)"
[ $((SECONDS - ping_started)) -le 15 ] || failed "ping took $((SECONDS - ping_started)) s while the service refuses"
[[ "$ping_out" == *"systemd holds the socket"* && "$ping_out" == *"journalctl -u jitcached"* ]] ||
  failed "ping while the service refuses does not point to systemd and the journal"
sleep 1
[ "$(unit_property jitcached.socket ActiveState)" = active ] ||
  failed "jitcached.socket is $(unit_property jitcached.socket ActiveState) ($(unit_property jitcached.socket Result)) after a refusal"
# A password file made as root, 0600: the daemon's user cannot read it, and is told why.
printf 'remote = "redis://127.0.0.1:1/0"\nremote_password_file = "/etc/jitcache/remote-password"\nremote_trusted_keys = ["/etc/jitcache/builder.pub"]\n' \
  > "$root/etc/jitcache/jitcached.toml"
mkdir -p "$root/etc/systemd/system/jitcached.service.d"
cp "$here/../../packaging/systemd/jitcached-network.conf" "$root/etc/systemd/system/jitcached.service.d/network.conf"
inside sh -c 'umask 077; echo secret > /etc/jitcache/remote-password'
inside systemctl daemon-reload
inside systemctl reset-failed jitcached.service
inside systemctl start --no-block jitcached.service
for _ in $(seq 50); do
  inside journalctl -u jitcached.service --no-pager -q -n 30 | grep -q 'remote_password_file' && break
  sleep 0.1
done
inside journalctl -u jitcached.service --no-pager -q -n 30 > "$work/password.txt" || true
jitcache_uid="$(inside id -u jitcache)"
grep -q "cannot open it: Permission denied (jitcached runs as uid $jitcache_uid (jitcache))" "$work/password.txt" ||
  { grep remote_password "$work/password.txt" | head -2; failed "a password file the daemon cannot read is not named with the reason and its uid"; }
inside systemctl stop jitcached.service

phase "10. with the network drop-in: metrics over TCP and a fleet remote on a Redis in the container"
redis_port=$((40000 + $$ % 20000))
if ! inside test -x /opt/jitcache-test/redis/redis-server; then
  echo "SKIP (this step): the host has no redis-server to copy in (scripts/install-deps installs it)"
else
  inside chown jitcache:jitcache /etc/jitcache/remote-password /etc/jitcache/builder.key
  inside env LD_LIBRARY_PATH=/opt/jitcache-test/redis /opt/jitcache-test/redis/redis-server --port "$redis_port" \
    --bind 127.0.0.1 --requirepass secret --save '' --appendonly no --daemonize yes --dir /tmp \
    --pidfile /tmp/jitcache-ci-redis.pid > /dev/null
  cat > "$root/etc/jitcache/jitcached.toml" <<TOML
metrics_listen = "127.0.0.1:$metrics_port"
remote = "redis://127.0.0.1:$redis_port/0"
remote_password_file = "/etc/jitcache/remote-password"
remote_trusted_keys = ["/etc/jitcache/builder.pub"]
remote_signing_key = "/etc/jitcache/builder.key"
TOML
  inside systemctl restart jitcached.service || { journal 15; failed "jitcached does not start with the network drop-in"; }
  # shellcheck disable=SC2016
  metrics="$(timeout_s=20 inside bash -c 'exec 3<>/dev/tcp/127.0.0.1/$1 && printf "GET /metrics HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n\r\n" >&3 && cat <&3' \
    bash "$metrics_port" 2>&1 || true)"
  if [[ "$metrics" == *"jitcache_"* ]]; then
    echo "metrics over TCP: $(grep -c '^jitcache_' <<< "$metrics") figures"
  else
    echo "$metrics" | head -5
    failed "the metrics do not answer on 127.0.0.1:$metrics_port with the network drop-in"
  fi
  if inside jitcache --socket /run/jitcache/jitcached.sock remote check > "$work/remote.txt" 2>&1; then
    sed 's/^/  | /' "$work/remote.txt"
  else
    sed 's/^/  | /' "$work/remote.txt"
    journal 10
    failed "jitcache remote check fails against the Redis in the container with the network drop-in"
  fi
  # shellcheck disable=SC2016
  inside sh -c 'kill "$(cat /tmp/jitcache-ci-redis.pid)"' || true
fi
rm -f "$root/etc/systemd/system/jitcached.service.d/network.conf" "$root/etc/jitcache/jitcached.toml"
inside systemctl daemon-reload
inside systemctl restart jitcached.service || failed "jitcached does not start again on the shipped unit"

phase "11. purge"
inside apt-get purge -y -q jitcache > "$work/purge.log" 2>&1 || { cat "$work/purge.log"; failed "apt-get purge failed"; }
for path in /usr/lib/systemd/system/jitcached.service /usr/lib/systemd/system/jitcached.socket /usr/sbin/jitcached \
            /usr/bin/jitcache /usr/libexec/jitcache/jitcache-cli /var/lib/jitcache /etc/jitcache /run/jitcache; do
  ! inside test -e "$path" || failed "$path is still there after purge"
done
for unit in jitcached.service jitcached.socket; do
  [ "$(unit_property "$unit" LoadState)" = not-found ] || failed "$unit is still loaded after purge"
  [ "$(unit_property "$unit" ActiveState)" = inactive ] || failed "$unit is still $(unit_property "$unit" ActiveState) after purge"
done
inside getent passwd jitcache > /dev/null || failed "purge removed the jitcache user (Debian leaves system users)"

phase "done"
if [ "${#failures[@]}" -ne 0 ]; then
  echo "FAILED ${#failures[@]} check(s):"
  printf '  - %s\n' "${failures[@]}"
  exit 1
fi
echo "PASS"
