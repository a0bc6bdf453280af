# `cpack -G DEB` in a build directory makes three Debian packages, the way Debian splits a daemon
# with a library (docs/operations.md "Installing the Debian packages"):
#   jitcache_<version>_<arch>.deb         jitcached, jitcache-compile, the jitcache CLI (the front
#                                         /usr/bin/jitcache, the full CLI jitcache-cli in
#                                         /usr/libexec/jitcache: client/front/main.c), the systemd
#                                         units with their sysusers.d/tmpfiles.d entries, /etc/jitcache,
#                                         the example configuration and network drop-in, man pages;
#   libjitcache0_<version>_<arch>.deb     libjitcache.so.0, libjitcache-preload.so and its core
#                                         libjitcache-preload-core.so (what programs load;
#                                         every shared library installed into the lib directory);
#   libjitcache-dev_<version>_<arch>.deb  headers, libjitcache.so, libjitcache.a, the CMake package
#                                         and jitcache.pc.
# The components are the install rules' (CMakeLists.txt: an install rule naming none is `client`).
# The jitcache package's own scripts (packaging/debian/daemon) create the jitcache user and group
# and handle the units as dh_installsystemd(1) does.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "jitcache")
set(CPACK_PACKAGE_VENDOR "jitcache")
set(CPACK_PACKAGE_HOMEPAGE_URL "https://github.com/jitcache/jitcache")
set(CPACK_PACKAGE_INSTALL_DIRECTORY "/usr")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
# Rationale: stripped, whatever the build type: a RelWithDebInfo build's libjitcache.a is 71 MB with
# its debug information, and Debian ships debug information in separate -dbgsym packages.
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
# Rationale: no CPACK_COMPONENTS_ALL: an install rule with a component of its own becomes a package
# of its own, which tests/packaging/check_lintian.sh (three packages) then shows, instead of its file
# being left out of every package without a word.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_DAEMON_PACKAGE_NAME "jitcache")
set(CPACK_DEBIAN_CLIENT_PACKAGE_NAME "libjitcache0")
set(CPACK_DEBIAN_DEV_PACKAGE_NAME "libjitcache-dev")
set(CPACK_DEBIAN_DAEMON_PACKAGE_SECTION "devel")
set(CPACK_DEBIAN_CLIENT_PACKAGE_SECTION "libs")
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION "libdevel")
# Versioned dependencies between the three, from the components' DEPENDS.
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)
include(CPackComponent)
cpack_add_component(client DISPLAY_NAME "libjitcache0")
cpack_add_component(daemon DISPLAY_NAME "jitcache" DEPENDS client)
cpack_add_component(dev DISPLAY_NAME "libjitcache-dev" DEPENDS client)
# Descriptions: the synopsis, then the long description (CPack indents it); after
# cpack_add_component(), which sets them empty. Rationale: one string
# each (string(CONCAT)): set() with several strings makes a CMake list, whose `;` separators showed
# in the package's description.
string(CONCAT CPACK_COMPONENT_DAEMON_DESCRIPTION
    "persistent, shared JIT cache for CUDA: daemon and command-line tool\n"
    "jitcached keeps compiled GPU images keyed on the PTX, the architecture,\n"
    "the driver and the JIT options, compiles misses once with nvJitLink, and\n"
    "serves them to programs that load modules through libjitcache or,\n"
    "unmodified, under jitcache run.\n"
    ".\n"
    "This package holds the daemon with its systemd units (started by socket\n"
    "activation) and the jitcache command: status, warming, bundles, the\n"
    "fleet's remote checks and a doctor that checks a set-up end to end.")
string(CONCAT CPACK_COMPONENT_CLIENT_DESCRIPTION
    "persistent, shared JIT cache for CUDA: client libraries\n"
    "libjitcache loads CUDA modules through jitcached, the cache daemon, in\n"
    "place of cuModuleLoadDataEx, and falls back to the driver's own JIT when\n"
    "the daemon is absent.\n"
    ".\n"
    "This package holds libjitcache.so.0 and libjitcache-preload.so, which\n"
    "jitcache run preloads so that unmodified programs use the cache.")
string(CONCAT CPACK_COMPONENT_DEV_DESCRIPTION
    "persistent, shared JIT cache for CUDA: development files\n"
    "The headers jitcache.h and jitcache.hpp, the static library, the CMake\n"
    "package (find_package(jitcache)) and the pkg-config file of libjitcache,\n"
    "the client of the jitcached CUDA JIT cache daemon.")
# Depends comes from the binaries themselves: dpkg-shlibdeps maps every shared library that
# jitcached, jitcache-compile, the CLI and libjitcache need to the Debian package that ships it
# (a list kept by hand missed libtomlplusplus3, and the daemon then could not start).
# Rationale: nvJitLink is the exception. It comes from the CUDA toolkit (/usr/local/cuda, or NVIDIA's
# libnvjitlink-<major>-<minor> package), which is no Debian package, so no Depends can name it:
# CPack runs dpkg-shlibdeps with --ignore-missing-info, which lets it pass with a warning, and the
# toolkit's library directory is searched so that it is found at all. The package expects the
# toolkit's libnvJitLink.so.<major> at the directory it was built against (the worker's RUNPATH) or on
# the loader's path (docs/operations.md "Installing the Debian packages").
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(JITCACHE_NVJITLINK_LIBRARY)
  get_filename_component(jitcache_nvjitlink_dir "${JITCACHE_NVJITLINK_LIBRARY}" DIRECTORY)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "${jitcache_nvjitlink_dir}")
endif()
# libjitcache0's shlibs file, so that packages built against it depend on it (Debian policy §8.6).
# (CPack's setting is for every package; only libjitcache0 has a versioned library.)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_DAEMON_PACKAGE_RECOMMENDS "systemd")
# adduser: postinst's way to the user and group where systemd-sysusers is not installed.
set(CPACK_DEBIAN_DAEMON_PACKAGE_DEPENDS "adduser")
# Maintainer scripts: the daemon's (user, group, units); the libraries' ldconfig trigger, as Debian's
# shared libraries have (CPack's own ldconfig calls are only in scripts it writes when none are given).
set(jitcache_debian_dir "${CMAKE_CURRENT_LIST_DIR}/debian")
# The lintian overrides ship in the package (packaging/debian/daemon/lintian-overrides, installed
# by packaging/CMakeLists.txt); docs/operations.md "What lintian says" gives each one's reason.
set(CPACK_DEBIAN_DAEMON_PACKAGE_CONTROL_EXTRA
    "${jitcache_debian_dir}/daemon/postinst;${jitcache_debian_dir}/daemon/prerm;${jitcache_debian_dir}/daemon/postrm")
set(CPACK_DEBIAN_CLIENT_PACKAGE_CONTROL_EXTRA "${jitcache_debian_dir}/client/triggers")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
