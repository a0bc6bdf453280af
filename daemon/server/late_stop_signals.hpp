// Keeps SIGTERM and SIGINT from killing the daemon after its drain: made before the Server and
// destroyed after it, it holds both signals registered with Asio while the server winds down, then
// ignores them for the rest of the process's life.
//
// Rationale: Asio gives a signal back its default action when the last signal_set that holds it is
// destroyed. With the server's set the last one, a SIGTERM sent again while the server was being
// destroyed (a second `kill`, an impatient supervisor) killed the daemon with 128+15 before it had
// closed its store; the drain it asks for is over by then. Holding a set of our own until the
// server is gone leaves only the two calls of this destructor between the default and SIG_IGN.
// Thread safety: construct and destroy on one thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <optional>

namespace jitcache::daemon::server {

class LateStopSignals {
 public:
  LateStopSignals();
  ~LateStopSignals();
  LateStopSignals(const LateStopSignals&) = delete;
  LateStopSignals& operator=(const LateStopSignals&) = delete;

 private:
  boost::asio::io_context m_io{1};  // never run: a signal that comes waits in the set, unread
  std::optional<boost::asio::signal_set> m_held;
};

}  // namespace jitcache::daemon::server
