// Keeps SIGTERM, SIGINT and SIGHUP from killing the daemon after its drain: called before the Server is
// made, it registers the three with a signal set of its own that lives until the process ends
// and is never waited on, so a signal that comes after the server's set is gone only waits there.
//
// Rationale: Asio gives a signal back its default action when the last signal_set that holds it is
// destroyed. With the server's set the last one, a SIGTERM sent again while the server was being
// destroyed (a second `kill`, an impatient supervisor) killed the daemon with 128+15 before it had
// closed its store; the drain it asks for is over by then. Restoring SIG_IGN after the server's set
// had gone still left a window between the two (test_daemon_restarts.cpp, "stop signals sent again
// and again"). Asio delivers a signal to every set that holds it, so the server's drain still
// hears the first one.
// Thread safety: call once, from the thread that makes the Server, before any other thread starts
// waiting on signals.
#pragma once

namespace jitcache::daemon::server {

void hold_stop_signals_until_exit();

}  // namespace jitcache::daemon::server
