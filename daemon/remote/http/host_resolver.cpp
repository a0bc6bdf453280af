#include <daemon/remote/http/host_resolver.hpp>

#include <netdb.h>
#include <sys/socket.h>

#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

namespace jitcache::daemon::remote::http {

namespace {

using boost::asio::ip::tcp;

struct Lookup {
  std::mutex mutex;
  std::condition_variable done_signal;
  bool done = false;
  int status = 0;
  std::vector<tcp::endpoint> endpoints;
};

void run_lookup(const std::string& host, std::uint16_t port, Lookup& lookup) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int status = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
  std::vector<tcp::endpoint> endpoints;
  for (const addrinfo* entry = found; status == 0 && entry != nullptr; entry = entry->ai_next) {
    tcp::endpoint endpoint;
    if (entry->ai_addrlen > endpoint.capacity()) continue;
    std::memcpy(endpoint.data(), entry->ai_addr, entry->ai_addrlen);
    endpoint.resize(entry->ai_addrlen);
    endpoint.port(port);
    endpoints.push_back(endpoint);
  }
  if (found != nullptr) ::freeaddrinfo(found);
  const std::lock_guard lock(lookup.mutex);
  lookup.status = status;
  lookup.endpoints = std::move(endpoints);
  lookup.done = true;
  lookup.done_signal.notify_all();
}

}  // namespace

common::Result<std::vector<tcp::endpoint>> resolve_host(const std::string& host, std::uint16_t port,
                                                        Deadline deadline) {
  boost::system::error_code not_an_address;
  const auto address = boost::asio::ip::make_address(host, not_an_address);
  if (!not_an_address) return std::vector<tcp::endpoint>{tcp::endpoint(address, port)};

  auto lookup = std::make_shared<Lookup>();
  try {
    std::thread([host, port, lookup] { run_lookup(host, port, *lookup); }).detach();
  } catch (const std::system_error& error) {
    return common::make_error(common::ErrorCode::unavailable,
                              "cannot look up " + host + ": no thread for the lookup (" + error.what() + ")");
  }
  std::unique_lock lock(lookup->mutex);
  if (!lookup->done_signal.wait_until(lock, deadline, [&] { return lookup->done; })) {
    return common::make_error(common::ErrorCode::timeout, "looking up " + host + " outlasted the deadline");
  }
  if (lookup->status != 0) {
    return common::make_error(common::ErrorCode::unavailable,
                              "cannot look up " + host + ": " + ::gai_strerror(lookup->status));
  }
  if (lookup->endpoints.empty()) {
    return common::make_error(common::ErrorCode::unavailable, "cannot look up " + host + ": no address");
  }
  return std::move(lookup->endpoints);
}

}  // namespace jitcache::daemon::remote::http
