#!/usr/bin/env bash
# The sidecar image of packaging/container, built and run with podman, its inputs offline: the base
# image imported from the cached Debian 12 root of check_package_under_systemd.sh (BASE_IMAGE),
# nvJitLink copied from the build's toolkit into the context's nvjitlink/, the packages cpack made
# (Debian's libraries still come from the root's apt sources). Then packaging/container/README.md's
# "Without Kubernetes": the daemon's container reaches healthy (its HEALTHCHECK, `jitcache ping`),
# and a container as uid 10002 in group 10010 with the socket's volume read-only and
# JITCACHE_DAEMON_USER=10001 gets an answer to `jitcache ping`.
# Usage: check_sidecar_image.sh DEB_DIR CONTAINERFILE NVJITLINK_DIR
# Exits 77 (skipped, with the reason) without root, without podman (Debian: apt-get install podman),
# where podman cannot run a container here, or without the cached root and debootstrap.
set -euo pipefail
skip() { echo "SKIP: $*"; exit 77; }
deb_dir="$1"; containerfile="$2"; nvjitlink_dir="$3"
here="$(cd "$(dirname "$0")" && pwd)"
[ "$(id -u)" -eq 0 ] || skip "needs root (podman's rootful storage, as CI runs)"
command -v podman >/dev/null || skip "podman is not installed (Debian 12: apt-get install podman)"
cache="${JITCACHE_CI_CACHE:-/var/cache/jitcache-ci}"
status=0
base="$("$here/cached_debian_root.sh" "$cache")" || status=$?
[ "$status" -eq 0 ] || exit "$status"

id=$$
base_tag=localhost/jitcache-ci-debian:12
tag="localhost/jitcache-ci-sidecar:$id"
daemon="jitcache-ci-daemon-$id"
work="$(mktemp -d /var/tmp/jitcache-image.XXXXXX)"
cleanup() {
  set +e
  podman rm -f "$daemon" >/dev/null 2>&1
  podman volume rm -f "jitcache-ci-socket-$id" "jitcache-ci-state-$id" >/dev/null 2>&1
  podman rmi -f "$tag" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

echo "== the base image, offline: imported from $base"
if ! podman image exists "$base_tag"; then
  tar -C "$base" -c . | podman import - "$base_tag" > /dev/null
fi
# Whether podman can run a container here at all (nested containers may lack what it needs).
if ! podman run --rm --network=none "$base_tag" true > "$work/probe.log" 2>&1; then
  tail -3 "$work/probe.log"
  skip "podman cannot run a container on this host (its error is above)"
fi

echo "== podman build: BASE_IMAGE=$base_tag, nvJitLink from $nvjitlink_dir"
mkdir -p "$work/context/nvjitlink"
cp "$deb_dir"/jitcache_*.deb "$deb_dir"/libjitcache0_*.deb "$work/context/"
cp -a "$nvjitlink_dir"/libnvJitLink.so.[0-9]* "$work/context/nvjitlink/"
if ! podman build --format docker --build-arg BASE_IMAGE="$base_tag" -f "$containerfile" -t "$tag" \
     "$work/context" > "$work/build.log" 2>&1; then
  tail -30 "$work/build.log"
  if grep -q 'Temporary failure resolving\|Could not resolve\|Failed to fetch' "$work/build.log"; then
    skip "the build could not reach Debian's archive for the packages' dependencies (no DEBIAN_MIRROR)"
  fi
  echo "FAIL: podman build"
  exit 1
fi
if grep -q 'cuda-keyring\|developer.download.nvidia.com' "$work/build.log"; then
  echo "FAIL: the build downloaded nvJitLink although nvjitlink/ held it"
  exit 1
fi

echo "== README \"Without Kubernetes\": the daemon, then a client container"
podman volume create "jitcache-ci-socket-$id" > /dev/null
podman volume create "jitcache-ci-state-$id" > /dev/null
podman run -d --name "$daemon" --group-add 10010 -e JITCACHE_SOCKET_GROUP=10010 \
  -v "jitcache-ci-socket-$id:/run/jitcache-shared" -v "jitcache-ci-state-$id:/var/lib/jitcache" "$tag" > /dev/null
healthy=""
for _ in $(seq 60); do
  if podman healthcheck run "$daemon" > /dev/null 2>&1; then healthy=yes; break; fi
  sleep 0.5
done
if [ -z "$healthy" ]; then
  podman logs "$daemon" 2>&1 | tail -10
  echo "FAIL: the daemon's container did not become healthy"
  exit 1
fi
echo "the daemon's container is healthy"
if ! podman run --rm --user 10002:10002 --group-add 10010 \
     -e JITCACHE_SOCKET=/run/jitcache-shared/jitcache/jitcached.sock -e JITCACHE_DAEMON_USER=10001 \
     -v "jitcache-ci-socket-$id:/run/jitcache-shared:ro" --entrypoint jitcache "$tag" ping; then
  podman logs "$daemon" 2>&1 | tail -10
  echo "FAIL: the application's container gets no answer from the sidecar"
  exit 1
fi
echo "PASS"
