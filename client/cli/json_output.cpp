#include <client/cli/json_output.hpp>

#include <string_view>

#include <client/cli/format.hpp>

namespace jitcache::client::cli {

namespace {

constexpr std::string_view k_error_counter_prefix = "errors.";

std::string_view codec_name(std::uint8_t codec) {
  switch (codec) {
    case 0: return "raw";
    case 1: return "zstd";
    default: return "unknown";
  }
}

}  // namespace

Json entry_to_json(const proto::EntryInfo& entry) {
  Json json;
  json["key_id"] = proto::to_hex(entry.key_id);
  json["content_digest"] = proto::to_hex(entry.key.content);
  json["key_schema"] = entry.key.key_schema;
  json["arch"] = entry.key.arch;
  json["driver_api"] = entry.key.driver_api;
  json["driver_build"] = entry.key.driver_build;
  json["options"] = entry.key.options;
  json["namespace"] = entry.namespace_id;
  json["producer"] = entry.producer;
  json["codec"] = entry.codec;
  json["codec_name"] = codec_name(entry.codec);
  json["raw_size"] = entry.raw_size;
  json["stored_size"] = entry.stored_size;
  json["checksum"] = proto::to_hex(entry.checksum);
  json["created_at"] = iso8601_utc(entry.created_at_ms);
  json["created_at_ms"] = entry.created_at_ms;
  json["last_used_at"] = iso8601_utc(entry.last_used_at_ms);
  json["last_used_at_ms"] = entry.last_used_at_ms;
  json["hits"] = entry.hits;
  json["compile_time_us"] = entry.compile_time_us;
  json["quarantined"] = entry.quarantined_at_ms != 0;
  json["quarantined_at_ms"] = entry.quarantined_at_ms;
  return json;
}

Json stats_to_json(const proto::StatsReply& stats) {
  Json json = Json::object();
  Json errors = Json::object();
  for (const auto& [name, value] : stats.values) {
    if (name.starts_with(k_error_counter_prefix)) {
      errors[name.substr(k_error_counter_prefix.size())] = value;
    } else {
      json[name] = value;
    }
  }
  json["errors_by_status"] = std::move(errors);
  return json;
}

void print_json(std::ostream& out, const Json& document) {
  out << document.dump(2, ' ', true, Json::error_handler_t::replace) << '\n';
}

}  // namespace jitcache::client::cli
