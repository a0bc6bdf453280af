#!/usr/bin/env bash
# The Debian package end to end (issue 7): builds it with CPack from BUILD_DIR, installs it with
# dpkg, starts the installed jitcached, uses the installed CLI, then builds and runs a project
# outside the tree with find_package(jitcache) (shared and static) and a C program built with
# `pkg-config --cflags --libs jitcache`; each loads a PTX module through the installed daemon,
# with the fake CUDA driver standing in for a GPU. Removes the package at the end.
# With PRELOAD 1 (the build has libjitcache-preload.so), the package must hold it beside libjitcache
# and the installed `jitcache run` must preload it.
# Usage: check_debian_package.sh BUILD_DIR SOURCE_DIR FAKE_DRIVER [PRELOAD]   (as root: it runs dpkg)
set -euo pipefail
build="$1"; source="$2"; fake_driver="$3"; preload="${4:-0}"
if [ "$(id -u)" -ne 0 ]; then echo "FAIL: installing a package needs root"; exit 1; fi
work="$(mktemp -d)"
daemon_pid=""
cleanup() {
  [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null && wait "$daemon_pid" 2>/dev/null || true
  dpkg --purge jitcache >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== cpack"
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/package" >/dev/null)
deb="$(ls "$work"/package/jitcache_*.deb)"
dpkg-deb --info "$deb" > "$work/info.txt"
grep -E 'Package|Version|Depends' "$work/info.txt"
dpkg-deb --contents "$deb" > "$work/contents.txt"
for path in ./usr/sbin/jitcached ./usr/bin/jitcache ./usr/libexec/jitcache/jitcache-compile \
            ./usr/include/jitcache/jitcache.h ./usr/include/jitcache/jitcache.hpp \
            ./usr/lib/systemd/system/jitcached.service ./usr/lib/systemd/system/jitcached.socket \
            ./usr/lib/sysusers.d/jitcache.conf ./usr/lib/tmpfiles.d/jitcache.conf \
            ./usr/share/doc/jitcache/examples/jitcached.toml; do
  grep -q " $path\$" "$work/contents.txt" || { echo "FAIL: the package lacks $path"; exit 1; }
done
grep -qE ' \./usr/lib/[^ ]*libjitcache\.a$' "$work/contents.txt" || { echo "FAIL: no libjitcache.a"; exit 1; }
grep -qE ' \./usr/lib/[^ ]*libjitcache\.so\.0' "$work/contents.txt" || { echo "FAIL: no libjitcache.so.0"; exit 1; }
if [ "$preload" = 1 ]; then
  preload_dir="$(sed -nE 's|.* \./(usr/lib[^ ]*)/libjitcache\.so\.0.*|\1|p' "$work/contents.txt" | head -n1)"
  grep -qE " \./$preload_dir/libjitcache-preload\.so( |\$)" "$work/contents.txt" ||
    { echo "FAIL: no libjitcache-preload.so beside libjitcache.so.0 in /$preload_dir"; exit 1; }
fi

echo "== dpkg -i"
dpkg -i "$deb" >/dev/null
getent group jitcache >/dev/null || { echo "FAIL: postinst did not create the group jitcache"; exit 1; }
getent passwd jitcache >/dev/null || { echo "FAIL: postinst did not create the user jitcache"; exit 1; }
ldconfig

echo "== the installed daemon and CLI"
socket="$work/run/jitcached.sock"
/usr/sbin/jitcached --foreground --socket "$socket" --state-dir "$work/state" > "$work/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.1; done
/usr/bin/jitcache --socket "$socket" ping
/usr/bin/jitcache --socket "$socket" stats --json | grep -q '"compile_available"\|"entries"' ||
  { echo "FAIL: jitcache stats"; cat "$work/daemon.log"; exit 1; }

if [ "$preload" = 1 ]; then
  echo "== jitcache run preloads the installed library"
  /usr/bin/jitcache run -- /usr/bin/env | grep -qE "^LD_PRELOAD=/$preload_dir/libjitcache-preload\.so$" ||
    { echo "FAIL: the installed jitcache run does not preload /$preload_dir/libjitcache-preload.so"; exit 1; }
fi

echo "== an outside CMake project: find_package(jitcache)"
cmake -S "$source/tests/packaging/outside" -B "$work/outside" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/outside" >/dev/null
ptx="$source/tests/data/small_kernel.ptx"
export JITCACHE_SOCKET="$socket" JITCACHE_CUDA_DRIVER="$fake_driver"
"$work/outside/load_shared" "$ptx"
"$work/outside/load_static" "$ptx" | tee "$work/static.txt"
grep -q 'outcome hit' "$work/static.txt" || { echo "FAIL: the second load was not a hit"; exit 1; }

echo "== a C program built with pkg-config"
# shellcheck disable=SC2046
cc -o "$work/load_pc" "$source/tests/packaging/outside/load_module.c" $(pkg-config --cflags --libs jitcache)
"$work/load_pc" "$ptx" | grep 'outcome hit'
/usr/bin/jitcache --socket "$socket" ls
echo "PASS"
