// The measured figures of one cell of the LOOKUP-vs-GET grid (one image size, one client count),
// shared by the table, the target checks and the JSON record. Thread safety: plain values.
#pragma once

#include <cstddef>
#include <optional>

#include <tests/bench/load_runner.hpp>

namespace jitcache::bench {

struct ServerFigures {
  LoadResult load;
  // Per request in the measurement window: the server process's CPU time and voluntary context
  // switches (its threads going to sleep), and this process's CPU time (the clients); nullopt when
  // they could not be read.
  std::optional<double> server_cpu_us_per_request;
  std::optional<double> server_switches_per_request;
  std::optional<double> client_cpu_us_per_request;
};

struct CellFigures {
  std::size_t image_size = 0;
  unsigned clients = 0;
  ServerFigures jitcache;
  std::optional<ServerFigures> redis;  // nullopt with --no-redis

  // jitcache / redis; nullopt without Redis figures or with a zero denominator.
  std::optional<double> throughput_ratio() const;
  std::optional<double> p99_ratio() const;
};

}  // namespace jitcache::bench
