# `cpack -G DEB` in a build directory makes jitcache_<version>_<arch>.deb: jitcached, jitcache-compile,
# the jitcache CLI, libjitcache (shared and static) with its headers, CMake package and pkg-config
# file, libjitcache-preload.so and its core libjitcache-preload-core.so (when built) for
# `jitcache run`, the systemd units with their sysusers.d/tmpfiles.d entries, and an example
# configuration.
# The package's own scripts (packaging/debian) create the jitcache user and group.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "jitcache")
set(CPACK_PACKAGE_VENDOR "jitcache")
set(CPACK_PACKAGE_CONTACT "jitcache maintainers <jitcache@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "persistent, shared JIT cache for CUDA (daemon, library and CLI)")
set(CPACK_PACKAGE_DESCRIPTION
    "jitcached keeps compiled GPU images keyed on the PTX, the architecture, the driver and the JIT\n"
    "options, compiles misses once with nvJitLink, and serves them to programs that load modules with\n"
    "libjitcache instead of cuModuleLoadDataEx, or, unmodified, under `jitcache run`.")
set(CPACK_PACKAGE_INSTALL_DIRECTORY "/usr")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
# Depends comes from the binaries themselves: dpkg-shlibdeps maps every shared library that
# jitcached, jitcache-compile, the CLI and libjitcache need to the Debian package that ships it
# (a list kept by hand missed libtomlplusplus3, and the daemon then could not start: issue 14).
# Rationale: nvJitLink is the exception. It comes from the CUDA toolkit (/usr/local/cuda, or NVIDIA's
# libnvjitlink-<major>-<minor> package), which is no Debian package, so no Depends can name it:
# CPack runs dpkg-shlibdeps with --ignore-missing-info, which lets it pass with a warning, and the
# toolkit's library directory is searched so that it is found at all. The package expects the
# toolkit's libnvJitLink.so.<major> at the directory it was built against (the worker's RUNPATH) or on
# the loader's path (docs/operations.md "Installing the Debian package").
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(JITCACHE_NVJITLINK_LIBRARY)
  get_filename_component(jitcache_nvjitlink_dir "${JITCACHE_NVJITLINK_LIBRARY}" DIRECTORY)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${jitcache_nvjitlink_dir}")
endif()
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "systemd")
# triggers: ldconfig after an install or removal (libjitcache.so.0), as Debian's shared libraries do;
# CPack's own ldconfig calls are only in the maintainer scripts it writes when none are given.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${CMAKE_CURRENT_LIST_DIR}/debian/postinst;${CMAKE_CURRENT_LIST_DIR}/debian/prerm;${CMAKE_CURRENT_LIST_DIR}/debian/postrm;${CMAKE_CURRENT_LIST_DIR}/debian/triggers")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
