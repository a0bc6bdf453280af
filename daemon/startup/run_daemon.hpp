// jitcached's start-up sequence: configuration, logging, state dir and its lock, the listening
// socket, the store, then the server until it drains. Thread safety: called once from main().
#pragma once

namespace jitcache::daemon::startup {

// Exit statuses: 0 after a clean drain; 1 could not start (state dir, socket, store); 2 bad
// configuration or command line.
int run_daemon(int argc, char** argv);

}  // namespace jitcache::daemon::startup
