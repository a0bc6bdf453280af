#include <daemon/server/late_stop_signals.hpp>

#include <csignal>
#include <memory>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

namespace jitcache::daemon::server {

namespace {
struct HeldSignals {
  boost::asio::io_context io{1};  // never run: a signal that comes waits in the set, unread
  boost::asio::signal_set set{io, SIGTERM, SIGINT, SIGHUP};
};
}  // namespace

void hold_stop_signals_until_exit() {
  // Rationale: never destroyed (destroying it would restore the default action); reachable from
  // this static until exit, so leak checkers count it as in use, not lost.
  static HeldSignals* const held = new HeldSignals;
  static_cast<void>(held);
}

}  // namespace jitcache::daemon::server
