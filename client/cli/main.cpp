// jitcache: the command-line tool for jitcached (docs/cli.md). Everything lives in app.cpp.
#include <client/cli/app.hpp>

int main(int argc, char** argv) { return jitcache::client::cli::run_cli(argc, argv); }
