// The op table (daemon/ops/op_table.hpp) against proto's op enum (proto/wire.hpp k_ops) and
// PROTOCOL.md's op list (§5 "Operations"): every op has one row and every row one line of the
// document, with the same capability bit, callers and limits; and HELLO's capability bits are the
// rows' (RequestHandler::capabilities), so neither the document nor the announced bits can drift
// from what the daemon dispatches.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <daemon/ops/op_table.hpp>
#include <daemon/ops/request_handler.hpp>
#include <daemon/stats/counters.hpp>
#include <daemon/store/sqlite_store.hpp>
#include <proto/wire.hpp>
#include <tests/support/store_dir.hpp>

namespace {

using namespace jitcache;
using daemon::ops::Caller;
using daemon::ops::OpRow;

struct DocumentedOp {
  std::string name;
  std::string capability;  // "—" or the bit's number
  std::string callers;
  std::string limits;
};

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(' ');
  const auto end = text.find_last_not_of(' ');
  return begin == std::string::npos ? std::string() : text.substr(begin, end - begin + 1);
}

// The rows of PROTOCOL.md §5's op table, by op code.
std::map<unsigned, DocumentedOp> documented_ops() {
  std::ifstream file(std::string(JITCACHE_SOURCE_DIR) + "/proto/PROTOCOL.md");
  REQUIRE(file);
  std::map<unsigned, DocumentedOp> ops;
  std::string line;
  bool in_section = false;
  const std::regex row(R"(^\| (\d+) \|(.*)$)");
  while (std::getline(file, line)) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## 5. Operations";
    if (line.rfind("### ", 0) == 0 && in_section) break;
    std::smatch match;
    if (!in_section || !std::regex_match(line, match, row)) continue;
    std::vector<std::string> cells;
    std::stringstream rest(match[2].str());
    for (std::string cell; std::getline(rest, cell, '|');) cells.push_back(trim(cell));
    REQUIRE(cells.size() >= 4);
    const unsigned code = static_cast<unsigned>(std::stoul(match[1].str()));
    INFO("PROTOCOL.md §5 lists op " << code << " twice");
    REQUIRE(ops.count(code) == 0);
    ops[code] = DocumentedOp{cells[0], cells[1], cells[2], cells[3]};
  }
  return ops;
}

std::string documented_limits(const OpRow& row) {
  if (row.limits.per_uid == 0 && row.limits.total == 0) return "—";
  std::string text = std::to_string(row.limits.per_uid) + " per uid, " + std::to_string(row.limits.total) + " in all";
  std::string others;
  for (const OpRow& other : daemon::ops::op_table()) {
    if (other.op == row.op || other.lane != row.lane) continue;
    others += others.empty() ? std::string(proto::op_name(other.op)) : " and " + std::string(proto::op_name(other.op));
  }
  return others.empty() ? text : text + ", with " + others;
}

std::string documented_capability(const OpRow& row) {
  if (row.capability == 0) return "—";
  for (unsigned bit = 0; bit < 64; ++bit) {
    if (row.capability == (1ull << bit)) return std::to_string(bit);
  }
  return "more than one bit";
}

}  // namespace

TEST_CASE("op table: every op of proto's enum but NONE has one row, in op-code order, with one handler") {
  const auto table = daemon::ops::op_table();
  REQUIRE(table.size() + 1 == proto::k_ops.size());
  for (const auto& named : proto::k_ops) {
    INFO(named.name);
    const OpRow* row = daemon::ops::find_op(named.value);
    if (named.value == proto::Op::none) {
      CHECK(row == nullptr);
      continue;
    }
    REQUIRE(row != nullptr);
    CHECK(row->op == named.value);
    CHECK((row->handler == nullptr) != (row->async_handler == nullptr));
    // An awaited handler starts on the worker; a descriptor belongs to ops whose lane has limits.
    if (row->async_handler != nullptr) CHECK(row->lane == daemon::ops::Lane::worker);
    if (row->asks_remotes) CHECK(row->lane == daemon::ops::Lane::worker);
  }
  CHECK(daemon::ops::find_op(static_cast<proto::Op>(table.size() + 1)) == nullptr);
}

TEST_CASE("op table: the rows of one lane state the same limits, which the lane shares") {
  for (const OpRow& row : daemon::ops::op_table()) {
    for (const OpRow& other : daemon::ops::op_table()) {
      if (row.lane != other.lane) continue;
      INFO(proto::op_name(row.op) << " and " << proto::op_name(other.op));
      CHECK(row.limits.per_uid == other.limits.per_uid);
      CHECK(row.limits.total == other.limits.total);
    }
  }
}

TEST_CASE("op table: PROTOCOL.md lists every row, and only them, with its capability bit, callers and limits") {
  const auto documented = documented_ops();
  std::set<unsigned> rows;
  for (const OpRow& row : daemon::ops::op_table()) {
    const auto code = static_cast<unsigned>(row.op);
    rows.insert(code);
    INFO("op " << code << " (" << proto::op_name(row.op) << ")");
    REQUIRE(documented.count(code) == 1);
    const DocumentedOp& line = documented.at(code);
    CHECK(line.name == proto::op_name(row.op));
    CHECK(line.capability == documented_capability(row));
    CHECK(line.callers == (row.caller == Caller::trusted ? "trusted" : "anyone"));
    CHECK(line.limits == documented_limits(row));
  }
  for (const auto& [code, line] : documented) {
    INFO("PROTOCOL.md §5 lists op " << code << " (" << line.name << ")");
    CHECK((code == 0 || rows.count(code) == 1));
  }
  CHECK(documented.count(0) == 1);
}

TEST_CASE("op table: HELLO announces the capability bits of the rows this daemon serves") {
  testing::StoreDir dir{"jitcache-op-table-test"};
  daemon::store::SqliteStoreOptions options;
  options.path = dir.db();
  options.reader_count = 1;
  auto store = daemon::store::SqliteStore::open(options);
  REQUIRE(store.ok());
  daemon::stats::Counters counters;
  daemon::ops::RequestHandler handler{**store, counters, proto::k_default_max_frame_bytes};

  // Without a compile service or bundles: every row that needs nothing, with its features.
  std::uint64_t expected = 0;
  for (const OpRow& row : daemon::ops::op_table()) {
    if (row.needs != daemon::ops::Needs::nothing) continue;
    expected |= row.capability;
    for (const auto& feature : row.features) {
      if (feature.needs == daemon::ops::Needs::nothing) expected |= feature.bit;
    }
  }
  CHECK(handler.capabilities() == expected);
  CHECK(expected == (proto::k_capability_store | proto::k_capability_report_failure | proto::k_capability_fast_key |
                     proto::k_capability_image_fd | proto::k_capability_gc | proto::k_capability_verify |
                     proto::k_capability_hit_note | proto::k_capability_remote_check | proto::k_capability_explain |
                     proto::k_capability_nvrtc_note));

  proto::HelloRequest hello;
  const proto::Payload payload = proto::encode(hello);
  const daemon::policy::PeerCredentials peer{::geteuid(), ::getegid(), ::getpid()};
  const daemon::ops::Reply reply = handler.handle(proto::Op::hello, proto::Bytes(payload), peer);
  REQUIRE(reply.status == proto::Status::ok);
  auto decoded = proto::decode_hello_reply(proto::Bytes(reply.payload));
  REQUIRE(decoded.ok());
  CHECK(decoded->capabilities == expected);
  // An op the daemon does not serve is refused as not implemented, by its row's needs.
  const daemon::ops::Reply compile = handler.handle(proto::Op::compile, {}, peer);
  CHECK(compile.status == proto::Status::bad_request);
}
