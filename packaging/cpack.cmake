# `cpack -G DEB` in a build directory makes jitcache_<version>_<arch>.deb: jitcached, jitcache-compile,
# the jitcache CLI, libjitcache (shared and static) with its headers, CMake package and pkg-config
# file, the systemd units with their sysusers.d/tmpfiles.d entries, and an example configuration.
# The package's own scripts (packaging/debian) create the jitcache user and group.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "jitcache")
set(CPACK_PACKAGE_VENDOR "jitcache")
set(CPACK_PACKAGE_CONTACT "jitcache maintainers <jitcache@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "persistent, shared JIT cache for CUDA (daemon, library and CLI)")
set(CPACK_PACKAGE_DESCRIPTION
    "jitcached keeps compiled GPU images keyed on the PTX, the architecture, the driver and the JIT\n"
    "options, compiles misses once with nvJitLink, and serves them to programs that load modules with\n"
    "libjitcache instead of cuModuleLoadDataEx.")
set(CPACK_PACKAGE_INSTALL_DIRECTORY "/usr")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
# Rationale: listed by hand rather than by dpkg-shlibdeps, which stops at libnvJitLink (the CUDA
# toolkit in /usr/local/cuda is not a Debian package). Debian 12's package names.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libc6, libstdc++6, libgcc-s1, libsqlite3-0, libssl3, libxxhash0, libzstd1, liblz4-1, libsystemd0, libspdlog1.10, libfmt9")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "systemd")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${CMAKE_CURRENT_LIST_DIR}/debian/postinst;${CMAKE_CURRENT_LIST_DIR}/debian/prerm;${CMAKE_CURRENT_LIST_DIR}/debian/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
