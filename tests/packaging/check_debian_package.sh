#!/usr/bin/env bash
# The Debian packages end to end: builds them with CPack from BUILD_DIR (jitcache, libjitcache0,
# libjitcache-dev: packaging/cpack.cmake), checks what each holds (Debian's multiarch layout, the
# runtime libraries apart from the development files, stripped, copyright files, man pages, a
# root-owned /etc/jitcache), installs them with dpkg, starts the installed jitcached, uses the installed CLI, then builds and runs a project
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
  dpkg --purge jitcache libjitcache-dev libjitcache0 >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== cpack"
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/package" >/dev/null)
multiarch="$(gcc -print-multiarch)"
libdir="usr/lib/$multiarch"
for package in jitcache libjitcache0 libjitcache-dev; do
  deb="$(ls "$work"/package/"${package}"_*.deb)"
  dpkg-deb --info "$deb" > "$work/$package.info"
  dpkg-deb --contents "$deb" > "$work/$package.contents"
  grep -E '^ (Package|Version|Depends):' "$work/$package.info"
  # A description that is one CMake list shows its separators: none may be left.
  if sed -n '/^ Description:/,$p' "$work/$package.info" | grep -q ';'; then
    echo "FAIL: $package's description holds a literal ';'"; exit 1
  fi
  grep -qE " \./usr/share/doc/$package/copyright\$" "$work/$package.contents" ||
    { echo "FAIL: $package has no /usr/share/doc/$package/copyright"; exit 1; }
done
# has PACKAGE PATH_REGEX: the package holds a file whose path (after ./) matches.
has() { grep -qE " \./$2( -> .*)?\$" "$work/$1.contents" || { echo "FAIL: $1 lacks /$2"; exit 1; }; }
lacks() { if grep -qE " \./$2( -> .*)?\$" "$work/$1.contents"; then echo "FAIL: $1 holds /$2"; exit 1; fi; }
for path in usr/sbin/jitcached usr/bin/jitcache usr/libexec/jitcache/jitcache-cli usr/libexec/jitcache/jitcache-compile \
            usr/lib/systemd/system/jitcached.service usr/lib/systemd/system/jitcached.socket \
            usr/lib/sysusers.d/jitcache.conf usr/lib/tmpfiles.d/jitcache.conf \
            usr/share/doc/jitcache/examples/jitcached.toml usr/share/doc/jitcache/examples/jitcached-network.conf \
            usr/share/man/man8/jitcached.8.gz usr/share/man/man1/jitcache.1.gz; do
  has jitcache "$path"
done
# /etc/jitcache is the package's, root's and 0755: it exists right after the install, for keygen.
grep -qE '^drwxr-xr-x root/root .* \./etc/jitcache/$' "$work/jitcache.contents" ||
  { echo "FAIL: jitcache does not ship /etc/jitcache as root's, 0755"; grep etc/ "$work/jitcache.contents"; exit 1; }
# Debian's multiarch layout: the libraries in /usr/lib/<triplet>, the runtime ones in libjitcache0.
has libjitcache0 "$libdir/libjitcache\.so\.0"
lacks libjitcache0 "$libdir/libjitcache\.a"
lacks libjitcache0 "usr/include/jitcache/jitcache\.h"
for path in usr/include/jitcache/jitcache.h usr/include/jitcache/jitcache.hpp "$libdir/libjitcache\.a" \
            "$libdir/libjitcache\.so" "$libdir/cmake/jitcache/jitcacheConfig\.cmake" "$libdir/pkgconfig/jitcache\.pc"; do
  has libjitcache-dev "$path"
done
if [ "$preload" = 1 ]; then has libjitcache0 "$libdir/libjitcache-preload\.so"; fi
# Every library the build installs into the library directory is a runtime one, in libjitcache0,
# except what a build links against (the static library and the unversioned link).
if grep -E " \./$libdir/[^/]+\.so[.0-9]*( -> .*)?\$" "$work/jitcache.contents"; then
  echo "FAIL: the jitcache package holds a shared library; it belongs in libjitcache0"; exit 1
fi
# Stripped, whatever the build type: no debug sections in the static library or the shared ones.
dpkg-deb -x "$work/package/$(cd "$work/package" && ls libjitcache-dev_*.deb)" "$work/dev-tree"
dpkg-deb -x "$work/package/$(cd "$work/package" && ls libjitcache0_*.deb)" "$work/runtime-tree"
for library in "$work/dev-tree/$libdir/libjitcache.a" "$work/runtime-tree/$libdir"/*.so*; do
  [ -L "$library" ] && continue
  if readelf -S "$library" 2>/dev/null | grep -q '\.debug_info'; then
    echo "FAIL: $(basename "$library") in the package has debug information ($(du -h "$library" | cut -f1))"; exit 1
  fi
done
echo "libjitcache.a in the package: $(du -h "$work/dev-tree/$libdir/libjitcache.a" | cut -f1)"

echo "== dpkg -i"
dpkg -i "$work"/package/*.deb >/dev/null
getent group jitcache >/dev/null || { echo "FAIL: postinst did not create the group jitcache"; exit 1; }
getent passwd jitcache >/dev/null || { echo "FAIL: postinst did not create the user jitcache"; exit 1; }
ldconfig
preload_dir="$libdir"

echo "== the installed daemon and CLI"
socket="$work/run/jitcached.sock"
/usr/sbin/jitcached --foreground --socket "$socket" --state-dir "$work/state" > "$work/daemon.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.1; done
/usr/bin/jitcache --socket "$socket" ping
# The front stands in front of every process `jitcache run` starts: libc alone (client/front/main.c).
[ "$(readelf -d /usr/bin/jitcache | grep -c '(NEEDED)')" = 1 ] && readelf -d /usr/bin/jitcache | grep -q 'NEEDED.*\[libc\.so\.6\]' ||
  { echo "FAIL: /usr/bin/jitcache needs more than libc:"; readelf -d /usr/bin/jitcache | grep NEEDED; exit 1; }
/usr/bin/jitcache --socket "$socket" stats --json | grep -q '"compile_available"\|"entries"' ||
  { echo "FAIL: jitcache stats"; cat "$work/daemon.log"; exit 1; }

if [ "$preload" = 1 ]; then
  echo "== jitcache run preloads the installed library"
  /usr/bin/jitcache run -- /usr/bin/env | grep -qE "^LD_PRELOAD=/$preload_dir/libjitcache-preload\.so$" ||
    { echo "FAIL: the installed jitcache run does not preload /$preload_dir/libjitcache-preload.so"; exit 1; }
  # The path the docs tell recipes to ask for (docs/transparent.md) is that same file.
  [ "$(/usr/bin/jitcache preload-path)" = "/$preload_dir/libjitcache-preload.so" ] ||
    { echo "FAIL: jitcache preload-path does not print /$preload_dir/libjitcache-preload.so"; exit 1; }
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
