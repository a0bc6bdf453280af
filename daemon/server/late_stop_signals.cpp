#include <daemon/server/late_stop_signals.hpp>

#include <csignal>

namespace jitcache::daemon::server {

LateStopSignals::LateStopSignals() { m_held.emplace(m_io, SIGTERM, SIGINT); }

LateStopSignals::~LateStopSignals() {
  m_held.reset();  // the last set holding them: Asio restores the default action here
  std::signal(SIGTERM, SIG_IGN);
  std::signal(SIGINT, SIG_IGN);
}

}  // namespace jitcache::daemon::server
