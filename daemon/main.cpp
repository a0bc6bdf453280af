#include <daemon/startup/run_daemon.hpp>

int main(int argc, char** argv) { return jitcache::daemon::startup::run_daemon(argc, argv); }
