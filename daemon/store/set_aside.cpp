#include <daemon/store/set_aside.hpp>

#include <ctime>
#include <string>
#include <system_error>

namespace jitcache::daemon::store {

namespace {

std::filesystem::path with_suffix(const std::filesystem::path& path, const std::string& suffix) {
  return std::filesystem::path(path.string() + suffix);
}

}  // namespace

std::string utc_time_stamp(std::chrono::system_clock::time_point when) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

common::Result<std::filesystem::path> set_aside_database(const std::filesystem::path& database,
                                                         std::chrono::system_clock::time_point when) {
  const std::string base = database.string() + ".corrupt-" + utc_time_stamp(when);
  std::filesystem::path target(base);
  std::error_code ec;
  for (int n = 2; std::filesystem::exists(target, ec) || std::filesystem::exists(with_suffix(target, "-wal"), ec);
       ++n) {
    target = std::filesystem::path(base + "-" + std::to_string(n));
  }
  std::filesystem::rename(database, target, ec);
  if (ec) {
    return common::make_error(common::ErrorCode::io, "cannot move " + database.string() + " aside to " +
                                                         target.string() + ": " + ec.message());
  }
  for (const char* suffix : {"-wal", "-shm"}) {
    const auto from = with_suffix(database, suffix);
    if (!std::filesystem::exists(from, ec)) continue;
    std::filesystem::rename(from, with_suffix(target, suffix), ec);
    if (ec) std::filesystem::remove(from, ec);
  }
  return target;
}

}  // namespace jitcache::daemon::store
