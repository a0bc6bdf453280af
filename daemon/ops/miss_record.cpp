#include <daemon/ops/miss_record.hpp>

#include <chrono>

namespace jitcache::daemon::ops {

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

proto::MissKind miss_kind(store::MissReason reason) {
  switch (reason) {
    case store::MissReason::quarantined: return proto::MissKind::quarantined;
    case store::MissReason::corrupt: return proto::MissKind::corrupt;
    case store::MissReason::not_found: break;
  }
  return proto::MissKind::not_found;
}

proto::MissRecord miss_of_key(proto::Op op, store::MissReason reason, std::uint32_t uid, const proto::KeyFields& key) {
  proto::MissRecord record;
  record.at_ms = now_ms();
  record.uid = uid;
  record.op = op;
  record.kind = miss_kind(reason);
  record.key_id = proto::key_id(key);
  record.key = key;
  return record;
}

proto::MissRecord miss_of_fast_key(store::MissReason reason, std::uint32_t uid, const proto::FastKey& key) {
  proto::MissRecord record;
  record.at_ms = now_ms();
  record.uid = uid;
  record.op = proto::Op::lookup;
  record.kind = miss_kind(reason);
  record.key.key_schema = key.key_schema;
  record.key.arch = key.arch;
  record.key.driver_api = key.driver_api;
  record.key.driver_build = key.driver_build;
  record.key.options = key.options;
  record.content_fast = key.content_fast;
  return record;
}

}  // namespace jitcache::daemon::ops
