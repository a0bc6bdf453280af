// Writes the seed corpora of the fuzz targets under tests/fuzz/corpus/: frame_decoder/ (valid frames
// of every op, as a client or daemon would put them on the socket), payload_decoders/ (the same
// messages as op byte + payload), option_text/, config/ (config files and one value per key),
// fatbin/ (wrapped, truncated and concatenated forms of the nvcc-made images already there) and
// index_record/ (remote index records and image objects, whole, truncated and at their limits).
//
// The seeds are committed so a fuzz run starts from well-formed inputs without building this
// first; rebuild them after a protocol, option or config change with `cmake --build <fuzz build>
// --target jitcache_fuzz_seeds`. Usage: make_seed_corpus <corpus dir> <example config file>
#include <client/src/fatbin/fatbin_format.hpp>
#include <daemon/bundle/bundle_writer.hpp>
#include <daemon/bundle/zstd_frame.hpp>
#include <daemon/config/config.hpp>
#include <daemon/config/config_table.hpp>
#include <daemon/remote/record/image_object.hpp>
#include <daemon/remote/record/index_record.hpp>
#include <daemon/remote/record/index_record_codec.hpp>
#include <proto/bundle_messages.hpp>
#include <proto/compile_messages.hpp>
#include <proto/explain_messages.hpp>
#include <proto/jit_options.hpp>
#include <proto/messages.hpp>
#include <proto/nvrtc_compile_messages.hpp>
#include <proto/nvrtc_note_messages.hpp>
#include <proto/nvrtc_result.hpp>
#include <proto/published_image.hpp>
#include <proto/remote_check_messages.hpp>
#include <proto/signing.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace jitcache::proto;

namespace {

void write_file(const std::filesystem::path& path, const Payload& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "make_seed_corpus: cannot write %s\n", path.c_str());
    std::exit(1);
  }
}

Payload frame(Op op, const Payload& payload, std::uint32_t request_id = 1) {
  return encode_frame(op, Status::ok, request_id, payload);
}

Payload concat(std::vector<Payload> parts) {
  Payload out;
  for (const Payload& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

KeyFields sample_key() {
  KeyFields key;
  key.content = sha256(as_bytes("seed"));
  key.arch = "sm_90a";
  key.driver_api = 13000;
  key.driver_build = "580.159.04";
  key.options = default_option_text();
  return key;
}

// Two removals and an integrity finding: the list and the str16 both have content to mutate.
VerifyReply verify_reply_with_removals() {
  VerifyReply m;
  m.integrity = "*** in database main ***\nPage 7: btreeInitPage() returns error code 11";
  m.entries_checked = 1000;
  m.entries_removed = 2;
  m.removed = {VerifiedRemoval{sha256(as_bytes("a")), 0}, VerifiedRemoval{sha256(as_bytes("b")), 1000}};
  m.duration_ms = 340;
  return m;
}

// A builder's view of two remotes, one well and one not: every field has content to mutate.
RemoteCheckReply remote_check_reply() {
  RemoteCheckReply m;
  m.signer = "0123456789abcdef";
  m.trusted = {"0123456789abcdef", "fedcba9876543210"};
  RemoteCheckRemote well;
  well.name = "redis://builder@10.0.0.5:6379/0";
  well.reachable = ProbeAnswer::yes;
  well.writable = ProbeAnswer::yes;
  well.leases = LeaseSupport::supported;
  well.latency_us = 312;
  RemoteCheckRemote sick;
  sick.name = "https://cache.internal/jc";
  sick.breaker = BreakerState::open;
  sick.reachable = ProbeAnswer::no;
  sick.leases = LeaseSupport::unsupported;
  sick.latency_us = 2'000'123;
  sick.message = "ping: connect to cache.internal:443: Connection refused";
  m.remotes = {well, sick};
  return m;
}

// An EXPLAIN miss with one finding of each shape: differences, a quarantine, an eviction.
ExplainReply explain_reply() {
  ExplainReply m;
  m.key_known = true;
  m.key = sample_key();
  m.key_id = key_id(m.key);
  ExplainFinding options;
  options.reason = ExplainReason::other_options;
  options.key_id = sha256(as_bytes("neighbour"));
  options.at_ms = 1'700'000'000'000;
  options.differences = {{"option maxrreg", "0", "64"}, {"option opt", "4", "3"}};
  ExplainFinding quarantined;
  quarantined.reason = ExplainReason::quarantined;
  quarantined.key_id = m.key_id;
  quarantined.at_ms = 1'700'000'000'500;
  quarantined.cu_result = 200;
  quarantined.stage = static_cast<std::uint8_t>(FailureStage::load);
  quarantined.uid = 1000;
  quarantined.detail = "CUDA_ERROR_INVALID_IMAGE";
  ExplainFinding evicted;
  evicted.reason = ExplainReason::evicted;
  evicted.key_id = m.key_id;
  evicted.eviction = EvictionCause::size;
  evicted.detail = "4096 bytes stored, 3 hits, compiled in 120 ms";
  m.findings = {options, quarantined, evicted};
  return m;
}

MissesReply misses_reply() {
  MissesReply m;
  MissRecord by_key;
  by_key.at_ms = 1'700'000'000'000;
  by_key.uid = 1000;
  by_key.op = Op::compile;
  by_key.key = sample_key();
  by_key.key_id = key_id(by_key.key);
  MissRecord by_fast_key = by_key;
  by_fast_key.op = Op::lookup;
  by_fast_key.key_id = {};
  by_fast_key.key.content = {};
  by_fast_key.content_fast = xxh3_128(as_bytes("ptx"));
  m.misses = {by_key, by_fast_key};
  EvictionRecord eviction;
  eviction.key_id = by_key.key_id;
  eviction.key = by_key.key;
  eviction.stored_bytes = 4096;
  eviction.hits = 3;
  eviction.compile_time_us = 120'000;
  eviction.evicted_at_ms = 1'700'000'001'000;
  eviction.cause = EvictionCause::quota;
  m.evictions = {eviction};
  return m;
}

EntryInfo sample_entry(std::uint32_t namespace_id) {
  EntryInfo e;
  e.key = sample_key();
  e.key_id = sha256(as_bytes(e.key.options + std::to_string(namespace_id)));
  e.namespace_id = namespace_id;
  e.producer = "driver 13000/580.159.04";
  e.raw_size = 4;
  e.stored_size = 4;
  e.checksum = xxh3_128(as_bytes("ELF!"));
  e.created_at_ms = 1'700'000'000'000;
  e.last_used_at_ms = 1'700'000'100'000;
  e.hits = 3;
  e.compile_time_us = 250'000;
  e.quarantined_at_ms = namespace_id == 0 ? 0 : 1'700'000'200'000;
  return e;
}

// One message as the fuzz targets see it: the op its header would carry and its payload.
struct SeedMessage {
  std::string name;
  Op op;
  Payload payload;
};

// Every request and reply of PROTOCOL.md §5, with typical values and with every str16 at its limit
// (a seed at a limit lets a single mutation cross it, and shows any encoder/decoder limit mismatch).
// An NVRTC program with a header, an option and a name expression, as a client sends it.
NvrtcCompileRequest nvrtc_compile_request() {
  NvrtcCompileRequest request;
  request.identity = {13, 0, xxh3_128(as_bytes("libnvrtc")), xxh3_128(as_bytes("libnvrtc-builtins"))};
  request.claimed_key = sample_key();
  request.program.name = "kernel.cu";
  request.program.source = "#include \"h.cuh\"\ntemplate <typename T> __global__ void k(T* p) { *p = X; }\n";
  request.program.headers = {{"h.cuh", "#define X 1\n"}};
  request.program.options = {"-arch=sm_90"};
  request.program.name_expressions = {"k<float>"};
  request.include_record = std::string("h.cuh\0absent\n", 13);
  return request;
}

std::vector<SeedMessage> seed_messages() {
  const Payload image{'E', 'L', 'F', '!'};

  LookupRequest by_key;
  by_key.key = sample_key();
  LookupRequest by_prefix;
  by_prefix.selector = LookupSelector::key_id_prefix;
  by_prefix.key_id_prefix = "0123abcd";
  LookupRequest by_fast_key;
  by_fast_key.selector = LookupSelector::fast_key;
  by_fast_key.fast_key = fast_key_of(sample_key(), xxh3_128(as_bytes("ptx")));
  PutRequest put;
  put.key = sample_key();
  put.producer = "driver 13000/580.159.04";
  put.compile_time_us = 250'000;
  put.image = image;
  PutRequest put_at_limits = put;
  put_at_limits.key.arch = std::string(k_max_arch_length, 'a');
  put_at_limits.key.driver_build = std::string(k_max_driver_build_length, 'b');
  put_at_limits.key.options = std::string(k_max_options_length, 'o');
  put_at_limits.producer = std::string(k_max_producer_length, 'p');
  PutRequest put_with_fast_key = put;
  put_with_fast_key.content_fast = xxh3_128(as_bytes("ptx"));
  ListRequest list_all;
  ListRequest list_filtered;
  list_filtered.arch = "sm_90a";
  list_filtered.driver_api = 13000;
  list_filtered.driver_build = "580.159.04";
  list_filtered.namespace_filter = true;
  list_filtered.namespace_id = 1000;
  list_filtered.key_id_prefix = "abcdef01";
  list_filtered.limit = 2;
  list_filtered.cursor = "0123456789abcdef";
  ListRequest list_at_limits;
  list_at_limits.arch = std::string(k_max_arch_length, 'a');
  list_at_limits.driver_build = std::string(k_max_driver_build_length, 'b');
  list_at_limits.key_id_prefix = std::string(64, 'f');
  list_at_limits.limit = k_max_list_limit;
  list_at_limits.cursor = std::string(k_max_cursor_length, 'c');

  ReportFailureRequest report;
  report.key = sample_key();
  report.cu_result = 218;  // CUDA_ERROR_INVALID_PTX
  report.stage = FailureStage::jit;
  report.detail = "ptxas fatal   : Unresolved extern function 'helper'";
  ReportFailureRequest report_at_limits = report;
  report_at_limits.key = put_at_limits.key;
  report_at_limits.cu_result = 0xFFFFFFFF;
  report_at_limits.stage = FailureStage::load;
  report_at_limits.detail = std::string(k_max_failure_detail_length, 'd');

  const std::string ptx = ".version 9.0\n.target sm_90\n.address_size 64\n";
  CompileRequest compile;
  compile.arch = "sm_90a";
  compile.driver_api = 13000;
  compile.driver_build = "580.159.04";
  compile.options = default_option_text();
  compile.ptx = as_bytes(ptx);
  CompileRequest compile_warm_at_limits = compile;
  compile_warm_at_limits.arch = std::string(k_max_arch_length, 'a');
  compile_warm_at_limits.driver_build = std::string(k_max_driver_build_length, 'b');
  compile_warm_at_limits.options = std::string(k_max_options_length, 'o');
  compile_warm_at_limits.priority = CompilePriority::warm;
  CompileReply compiled;
  compiled.origin = CompileOrigin::compiled;
  compiled.info = sample_entry(0);
  compiled.image = Bytes(image);
  CompileReply compile_stored = compiled;
  compile_stored.origin = CompileOrigin::stored;
  CompileErrorReply compile_error;
  compile_error.message = "the PTX failed to compile with nvJitLink 13.0: ptxas application ptx input, line 3; error";
  compile_error.log =
      "ptxas application ptx input, line 3; error   : Unknown symbol 'x'\nptxas fatal   : Ptx assembly aborted\n";

  HelloReply hello_reply;
  hello_reply.capabilities = k_capability_store | k_capability_compile | k_capability_report_failure;
  hello_reply.daemon_version = "jitcached 0.1.0";
  hello_reply.max_frame_bytes = k_default_max_frame_bytes;
  HelloReply hello_reply_at_limits = hello_reply;
  hello_reply_at_limits.daemon_version = std::string(k_max_version_string_length, 'v');
  Payload lookup_reply = encode_lookup_reply_head(sample_entry(0), static_cast<std::uint32_t>(image.size()));
  lookup_reply.insert(lookup_reply.end(), image.begin(), image.end());
  StatsReply stats;
  stats.values = {{"entries", 2},
                  {"hits", 3},
                  {"errors.bad_request", 1},
                  {std::string(k_max_stat_name_length, 's'), 4}};
  EntryInfo entry_at_limits = sample_entry(1000);
  entry_at_limits.key = put_at_limits.key;
  entry_at_limits.producer = put_at_limits.producer;
  ListReply list_reply;
  list_reply.entries = {sample_entry(0), entry_at_limits};
  list_reply.next_cursor = to_hex(list_reply.entries.back().key_id);

  return {
      {"hello_request", Op::hello, encode(HelloRequest{1, 1, "libjitcache"})},
      {"hello_request_at_limits", Op::hello, encode(HelloRequest{1, 1, std::string(k_max_client_name_length, 'n')})},
      {"ping_request", Op::ping, {}},
      {"lookup_request_by_key", Op::lookup, encode(by_key)},
      {"lookup_request_by_prefix", Op::lookup, encode(by_prefix)},
      {"lookup_request_by_fast_key", Op::lookup, encode(by_fast_key)},
      {"put_request", Op::put, encode(put)},
      {"put_request_at_limits", Op::put, encode(put_at_limits)},
      {"put_request_with_fast_key", Op::put, encode(put_with_fast_key)},
      {"stats_request", Op::stats, {}},
      {"gc_request", Op::gc, {}},
      {"gc_reply", Op::gc, encode(GcReply{3, 4096, 1, 97, 1 << 20})},
      {"verify_request", Op::verify, {}},
      {"verify_reply_clean", Op::verify, encode(VerifyReply{"ok", 97, 0, {}, 12})},
      {"verify_reply_removed", Op::verify, encode(verify_reply_with_removals())},
      {"list_request_all", Op::list, encode(list_all)},
      {"list_request_filtered", Op::list, encode(list_filtered)},
      {"list_request_at_limits", Op::list, encode(list_at_limits)},
      {"remove_request", Op::remove, encode(RemoveRequest{std::string(64, 'e')})},
      {"report_failure_request", Op::report_failure, encode(report)},
      {"report_failure_request_at_limits", Op::report_failure, encode(report_at_limits)},
      {"compile_request", Op::compile, encode(compile)},
      {"compile_request_warm_at_limits", Op::compile, encode(compile_warm_at_limits)},
      {"hit_note_request", Op::hit_note, encode(HitNoteRequest{by_fast_key.fast_key})},
      {"remote_check_request", Op::remote_check, encode(RemoteCheckRequest{false})},
      {"remote_check_request_probe", Op::remote_check, encode(RemoteCheckRequest{true})},
      {"explain_request_by_key", Op::explain, encode(ExplainRequest{ExplainSelector::key, sample_key(), {}})},
      {"explain_request_by_key_id", Op::explain,
       encode(ExplainRequest{ExplainSelector::key_id, {}, key_id(sample_key())})},
      {"misses_request", Op::misses, encode(MissesRequest{50})},
      {"export_bundle_request_all", Op::export_bundle, encode(ExportBundleRequest{})},
      {"export_bundle_request_filtered", Op::export_bundle,
       encode(ExportBundleRequest{
           "sm_90a", 13000, "580.159.04", 1'700'000'000'000, {sample_entry(0).key_id, sample_entry(1).key_id}})},
      {"import_bundle_request_shared", Op::import_bundle, encode(ImportBundleRequest{ImportTarget::shared})},
      {"import_bundle_request_own", Op::import_bundle, encode(ImportBundleRequest{ImportTarget::own})},
      {"nvrtc_note_request", Op::nvrtc_note, encode(NvrtcNoteRequest{NvrtcUncachedReason::unnamed_include})},
      {"nvrtc_compile_request", Op::nvrtc_compile, encode(nvrtc_compile_request())},
      // Not a frame's payload but a file clients read (PROTOCOL.md §8); the reply decoders see it.
      {"published_image", Op::hit_note, encode_published_image(by_fast_key.fast_key, sample_entry(0), Bytes(image))},
      // Replies with status ok pass the request header check, so their payloads reach the reply
      // decoders in fuzz_frame_decoder too.
      {"hello_reply", Op::hello, encode(hello_reply)},
      {"hello_reply_at_limits", Op::hello, encode(hello_reply_at_limits)},
      {"lookup_reply", Op::lookup, lookup_reply},
      {"lookup_reply_by_descriptor", Op::lookup,
       encode(LookupReplyByDescriptor{entry_at_limits, std::uint64_t{1} << 20})},
      {"put_reply", Op::put, encode(PutReply{sample_entry(0).key_id, 0, true})},
      {"stats_reply", Op::stats, encode(stats)},
      {"list_reply", Op::list, encode(list_reply)},
      {"remove_reply", Op::remove, encode(RemoveReply{1})},
      {"report_failure_reply", Op::report_failure,
       encode(ReportFailureReply{ReportFailureOutcome::already_quarantined, 1000})},
      {"compile_reply_compiled", Op::compile, encode(compiled)},
      {"compile_reply_stored", Op::compile, encode(compile_stored)},
      {"compile_error_reply", Op::compile, encode(compile_error)},
      {"nvrtc_compile_reply", Op::nvrtc_compile,
       encode(NvrtcCompileReply{NvrtcCompileOrigin::compiled, encode_nvrtc_result(NvrtcResult{})})},
      {"remote_check_reply", Op::remote_check, encode(remote_check_reply())},
      {"remote_check_reply_empty", Op::remote_check, encode(RemoteCheckReply{})},
      {"explain_reply", Op::explain, encode(explain_reply())},
      {"misses_reply", Op::misses, encode(misses_reply())},
      {"export_bundle_reply", Op::export_bundle,
       encode(ExportBundleReply{3, 1 << 20, "0123456789abcdef", sample_entry(0).key_id})},
      {"import_bundle_reply", Op::import_bundle,
       encode(ImportBundleReply{1000, 3, 2, 1, "0123456789abcdef", true, "builder-1", sample_entry(1).key_id})},
      {"error_reply", Op::lookup, encode_error_message("ambiguous key id prefix")},
      {"error_reply_at_limits", Op::lookup, encode_error_message(std::string(k_max_message_length, 'm'))},
  };
}

void write_frame_seeds(const std::filesystem::path& dir, const std::vector<SeedMessage>& messages) {
  for (const SeedMessage& m : messages) write_file(dir / m.name, frame(m.op, m.payload));
  // A whole conversation on one connection, so mutations can reach the second and later frames.
  LookupRequest by_key;
  by_key.key = sample_key();
  write_file(dir / "conversation",
             concat({frame(Op::hello, encode(HelloRequest{1, 1, "cli"}), 1), frame(Op::lookup, encode(by_key), 2),
                     frame(Op::ping, {}, 3), frame(Op::remove, encode(RemoveRequest{"0123abcd"}), 4)}));
}

void write_payload_seeds(const std::filesystem::path& dir, const std::vector<SeedMessage>& messages) {
  for (const SeedMessage& m : messages) {
    Payload input{static_cast<std::uint8_t>(m.op)};
    input.insert(input.end(), m.payload.begin(), m.payload.end());
    write_file(dir / m.name, input);
  }
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  write_file(path, Payload(text.begin(), text.end()));
}

void write_option_seeds(const std::filesystem::path& dir) {
  write_text(dir / "empty", "");
  write_text(dir / "default_canonical", default_option_text());
  write_text(dir / "some_options", "opt=3;maxrreg=64;dlcm=cg");
  write_text(dir / "spaced_and_trailing", " fma = 0 ; ftz=1 ;;lineinfo=1;");
  write_text(dir / "every_key",
             "split=4;override=1;maxtpb=1024;mincta=2;pic=1;fma=0;prec_sqrt=0;prec_div=0;"
             "ftz=1;lto=1;fast=1;dlcm=ca;lineinfo=1;g=1;opt=0;tpb=128;maxrreg=255");
  write_text(dir / "largest_values", "maxrreg=4294967295;tpb=4294967295;mincta=4294967295;maxtpb=2147483647");
}

Payload read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "make_seed_corpus: cannot read %s\n", path.c_str());
    std::exit(1);
  }
  return Payload((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// fuzz_config's input: a selector byte (below 0x80: a TOML file; 0x80 + i: a value for key i), then text.
constexpr std::uint8_t k_config_file_selector = 0x00;
constexpr std::uint8_t k_config_first_key_selector = 0x80;

void write_config_text(const std::filesystem::path& path, std::uint8_t selector, const std::string& text) {
  Payload input{selector};
  input.insert(input.end(), text.begin(), text.end());
  write_file(path, input);
}

std::vector<std::string> typical_values(jitcache::daemon::config::ValueKind kind) {
  using jitcache::daemon::config::ValueKind;
  switch (kind) {
    case ValueKind::size: return {"1.5GiB", "64 MB", "4096", "0"};
    case ValueKind::duration: return {"500ms", "1.5h", "7d", "90"};
    case ValueKind::count: return {"0", "4", "65536"};
    case ValueKind::boolean: return {"yes", "off"};
    case ValueKind::log_level: return {"warn"};
    case ValueKind::group: return {"video", "44"};
    case ValueKind::path: return {"/var/lib/jitcache"};
    case ValueKind::user_list: return {"alice, 1002", ""};
    case ValueKind::group_list: return {"video,44", "builders"};
    case ValueKind::address: return {"127.0.0.1:9464", "[::1]:0", ""};
    case ValueKind::url_list:
      return {"redis://builder@10.0.0.5:6379/0", "redis+cluster://a:7000,b:7000,https://c/jc", ""};
    case ValueKind::path_list: return {"/etc/jitcache/a.pub,/etc/jitcache/b.pub", ""};
    case ValueKind::fraction: return {"0", "0.01", "1"};
    case ValueKind::eviction_policy: return {"gdsf", "lru"};
  }
  return {};
}

void write_config_seeds(const std::filesystem::path& dir, const std::filesystem::path& example_file) {
  namespace config = jitcache::daemon::config;
  const Payload example = read_file(example_file);
  write_config_text(dir / "file_packaged_example", k_config_file_selector, std::string(example.begin(), example.end()));
  const config::Config defaults;
  std::string every_default = "# every key at its default, as printed\n";
  const auto keys = config::config_keys();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const config::ConfigKey& key = keys[i];
    const std::string printed = key.get(defaults);
    if (key.in_file && !printed.empty()) every_default += std::string(key.name) + " = \"" + printed + "\"\n";
    const auto selector = static_cast<std::uint8_t>(k_config_first_key_selector + i);
    if (!printed.empty()) write_config_text(dir / ("value_" + std::string(key.name) + "_default"), selector, printed);
    const std::vector<std::string> values = typical_values(key.kind);
    for (std::size_t v = 0; v < values.size(); ++v) {
      write_config_text(dir / ("value_" + std::string(key.name) + "_" + std::to_string(v)), selector, values[v]);
    }
  }
  write_config_text(dir / "file_every_default", k_config_file_selector, every_default);
  write_config_text(dir / "file_bare_scalars", k_config_file_selector,
                    "max_size = 1048576\nforeground = true\ncompile_cpu_time = 60\nmax_frame_bytes = 1.5e6\n"
                    "worker_threads = 0x10\nsocket_group = 'video'\nstate_dir = '''/tmp/x'''\n");
  write_config_text(dir / "file_refused_shapes", k_config_file_selector,
                    "log_level = [\"info\"]\n[compile]\njobs = 2\nmax_size = { a = 1 }\n");
  write_config_text(dir / "file_syntax_error", k_config_file_selector, "worker_threads = \"4\nlog_level = info\n");
}

void put_le(Payload& bytes, std::size_t offset, std::uint64_t value, std::size_t width) {
  for (std::size_t i = 0; i < width; ++i) bytes[offset + i] = static_cast<std::uint8_t>(value >> (8 * i));
}

// A 24-byte nvcc wrapper before the container. fuzz_fatbin aims a non-null data pointer at the bytes
// after the wrapper; its low three bits are kept, so 8 stays aligned.
Payload wrapped(const Payload& container, std::uint32_t version, std::uint64_t data_pointer) {
  namespace fb = jitcache::client::fatbin;
  Payload out(fb::k_wrapper_size, 0);
  put_le(out, 0, fb::k_wrapper_magic, 4);
  put_le(out, 4, version, 4);
  put_le(out, fb::k_wrapper_data_offset, data_pointer, 8);
  out.insert(out.end(), container.begin(), container.end());
  return out;
}

Payload padded_to_8(Payload bytes) {
  bytes.resize((bytes.size() + 7) / 8 * 8, 0);
  return bytes;
}

// Derived from the nvcc-made images (jitcache_fuzz_nvcc_seeds) already in `dir`.
void write_fatbin_seeds(const std::filesystem::path& dir) {
  namespace fb = jitcache::client::fatbin;
  std::vector<std::filesystem::path> images;
  for (const auto& file : std::filesystem::directory_iterator(dir)) {
    if (file.path().filename().string().starts_with("nvcc_")) images.push_back(file.path());
  }
  std::sort(images.begin(), images.end());
  if (images.empty()) {
    std::fprintf(stderr, "make_seed_corpus: no nvcc_* images in %s (build jitcache_fuzz_nvcc_seeds)\n", dir.c_str());
    std::exit(1);
  }
  std::vector<Payload> containers;
  for (const auto& path : images) {
    const Payload bytes = read_file(path);
    const std::string name = path.filename().string();
    write_file(dir / ("truncated_" + name), Payload(bytes.begin(), bytes.begin() + bytes.size() / 2));
    if (path.extension() != ".fatbin") continue;
    containers.push_back(bytes);
    write_file(dir / ("wrapper_v1_" + name), wrapped(bytes, fb::k_wrapper_version_min, 8));
  }
  write_file(dir / "wrapper_v2", wrapped(containers.front(), fb::k_wrapper_version_max, 8));
  write_file(dir / "wrapper_null_pointer", wrapped(containers.front(), fb::k_wrapper_version_min, 0));
  write_file(dir / "wrapper_misaligned_pointer", wrapped(containers.front(), fb::k_wrapper_version_min, 12));
  Payload back_to_back;
  for (const Payload& container : containers) {
    const Payload padded = padded_to_8(container);
    back_to_back.insert(back_to_back.end(), padded.begin(), padded.end());
  }
  write_file(dir / "containers_back_to_back", back_to_back);
  Payload old_style(fb::k_container_header_min, 0);
  put_le(old_style, 0, fb::k_old_style_magic, 4);
  write_file(dir / "old_style_magic", old_style);
}

}  // namespace

// fuzz_index_record's input: a selector byte (bit 0 clear: an index record, bit 1 its space;
// bit 0 set: an image object after a u64 image_size), then the bytes. The records are signed by a
// key made here; the fuzzer re-signs each input with its own.
void write_index_record_seeds(const std::filesystem::path& dir) {
  namespace remote = jitcache::daemon::remote;
  const SigningKey key = SigningKey::generate();
  Payload image(3000);
  for (std::size_t i = 0; i < image.size(); ++i) image[i] = static_cast<std::uint8_t>(i % 7 == 0 ? i : 0);
  const std::string object = remote::encode_image_object(image);

  remote::IndexRecord record;
  record.key = sample_key();
  record.content_fast = xxh3_128(as_bytes("ptx"));
  record.image_digest = remote::image_digest(image);
  record.image_size = image.size();
  record.object_size = object.size();
  record.producer = "nvJitLink 13.0";
  record.compile_time_us = 25'000;
  record.created_at_ms = 1'700'000'000'000;
  record.host = "builder-1";
  remote::IndexRecord at_limits = record;
  at_limits.key.arch = std::string(k_max_arch_length, 'a');
  at_limits.key.driver_build = std::string(k_max_driver_build_length, 'b');
  at_limits.key.options = std::string(k_max_options_length, 'o');
  at_limits.producer = std::string(remote::k_max_record_text_length, 'p');
  at_limits.host = std::string(remote::k_max_record_text_length, 'h');
  remote::IndexRecord huge = record;
  huge.image_size = 4ull << 30;

  const auto seed = [](std::uint8_t selector, std::string_view bytes) {
    Payload input{selector};
    input.insert(input.end(), bytes.begin(), bytes.end());
    return input;
  };
  const std::string signed_record = remote::encode_signed_record(record, key);
  write_file(dir / "record_idx", seed(0, signed_record));
  write_file(dir / "record_fk", seed(2, signed_record));
  write_file(dir / "record_at_limits", seed(0, remote::encode_signed_record(at_limits, key)));
  write_file(dir / "record_huge_image", seed(0, remote::encode_signed_record(huge, key)));
  write_file(dir / "record_truncated", seed(0, signed_record.substr(0, signed_record.size() - 10)));

  std::string size_le;
  for (int i = 0; i < 8; ++i) size_le.push_back(static_cast<char>(image.size() >> (8 * i)));
  write_file(dir / "object", seed(1, size_le + object));
  write_file(dir / "object_truncated", seed(1, size_le + object.substr(0, object.size() / 2)));
  write_file(dir / "object_raw_image", seed(1, size_le + std::string(image.begin(), image.end())));
}

// fuzz_bundle_reader's input: a selector byte (bit 0 set: the fuzzer re-signs the bundle with its
// own key), then a bundle (docs/bundle-format.md): signed, unsigned, with a zstd image and a
// source, truncated.
void write_bundle_seeds(const std::filesystem::path& dir) {
  namespace bundle = jitcache::daemon::bundle;
  const SigningKey key = SigningKey::generate();
  const auto write = [](const std::vector<bundle::BundleEntry>& entries, const SigningKey* signer) {
    Payload out;
    bundle::ByteSink sink = [&out](Bytes bytes) -> jitcache::common::Result<void> {
      out.insert(out.end(), bytes.begin(), bytes.end());
      return {};
    };
    bundle::BundleHeader header;
    header.host = "builder-1";
    header.created_at_ms = 1'700'000'000'000;
    header.entry_count = entries.size();
    header.producer = "jitcached seed";
    auto writer = bundle::BundleWriter::start(sink, header, signer);
    for (const auto& e : entries) (void)writer->add(e);
    (void)writer->finish();
    return out;
  };
  Payload image(2000);
  for (std::size_t i = 0; i < image.size(); ++i) image[i] = static_cast<std::uint8_t>(i % 5 == 0 ? i : 0);
  bundle::BundleEntry raw;
  raw.key = sample_key();
  raw.content_fast = xxh3_128(as_bytes("ptx"));
  raw.producer = "nvJitLink 13.0";
  raw.compile_time_us = 25'000;
  raw.created_at_ms = 1'700'000'000'000;
  raw.raw_size = image.size();
  raw.checksum = xxh3_128(Bytes(image));
  raw.image = image;
  bundle::BundleEntry zstd = raw;
  zstd.codec = bundle::k_codec_zstd;
  zstd.image = bundle::encode_zstd_frame(Bytes(image), 3);
  const std::string ptx = ".version 8.0\n.target sm_90\n";
  zstd.source_raw_size = ptx.size();
  zstd.source = bundle::encode_zstd_frame(as_bytes(ptx), 3);
  const auto seed = [](std::uint8_t selector, const Payload& bytes) {
    Payload input{selector};
    input.insert(input.end(), bytes.begin(), bytes.end());
    return input;
  };
  const Payload signed_bundle = write({raw, zstd}, &key);
  write_file(dir / "signed", seed(0, signed_bundle));
  write_file(dir / "resigned", seed(1, signed_bundle));
  write_file(dir / "unsigned", seed(0, write({zstd}, nullptr)));
  write_file(dir / "empty", seed(1, write({}, &key)));
  write_file(dir / "truncated", seed(1, Payload(signed_bundle.begin(), signed_bundle.begin() + 200)));
}

// NVRTC results (fuzz_nvrtc_result): one with every output and two lowered names, one of a failed
// compile, one truncated, one whose log had the program's directory cut out (JCNVRTC2).
void write_nvrtc_result_seeds(const std::filesystem::path& dir) {
  NvrtcResult compiled;
  compiled.output(NvrtcOutput::log) = {true, 0, 0, {'\0'}};
  compiled.output(NvrtcOutput::ptx) = {true, 0, 0, {'.', 'v', 'e', 'r', 's', 'i', 'o', 'n', '\0'}};
  compiled.output(NvrtcOutput::cubin) = {true, 0, 0, {0x7f, 'E', 'L', 'F'}};
  compiled.output(NvrtcOutput::ltoir) = {true, 0, 0, {}};
  compiled.lowered_names = {{"scale<float>", 0, "_Z5scaleIfEvPT_"}, {"scale<double>", 0, "_Z5scaleIdEvPT_"}};
  compiled.unknown_name_result = 10;
  const Payload blob = encode_nvrtc_result(compiled);
  write_file(dir / "compiled", blob);
  write_file(dir / "truncated", Payload(blob.begin(), blob.begin() + static_cast<std::ptrdiff_t>(blob.size() / 2)));
  NvrtcResult failed;
  failed.compile_result = 6;
  failed.output(NvrtcOutput::log) = {true, 0, 0, {'e', 'r', 'r', 'o', 'r', '\0'}};
  failed.lowered_names = {{"k", 9, ""}};
  failed.unknown_name_result = 9;
  write_file(dir / "compile_error", encode_nvrtc_result(failed));
  NvrtcResult cut = compiled;
  const std::string log =
      "/0f3c.cubin.cu(3): warning #177-D\n detected during instantiation at line 4 of /0f3c.cubin.cu";
  cut.output(NvrtcOutput::log).bytes.assign(log.begin(), log.end());
  cut.output(NvrtcOutput::log).bytes.push_back('\0');
  cut.log_directory_at = {0, static_cast<std::uint32_t>(log.rfind('/'))};
  write_file(dir / "log_directory_cut", encode_nvrtc_result(cut));
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr,
                 "usage: make_seed_corpus <corpus dir, e.g. tests/fuzz/corpus> "
                 "<example config, e.g. packaging/jitcached.toml>\n");
    return 2;
  }
  const std::filesystem::path root = argv[1];
  for (const char* target : {"frame_decoder", "payload_decoders", "option_text", "config", "fatbin", "index_record",
                             "bundle_reader", "nvrtc_result"}) {
    std::filesystem::create_directories(root / target);
  }
  const std::vector<SeedMessage> messages = seed_messages();
  write_frame_seeds(root / "frame_decoder", messages);
  write_payload_seeds(root / "payload_decoders", messages);
  write_option_seeds(root / "option_text");
  write_config_seeds(root / "config", argv[2]);
  write_fatbin_seeds(root / "fatbin");
  write_index_record_seeds(root / "index_record");
  write_bundle_seeds(root / "bundle_reader");
  write_nvrtc_result_seeds(root / "nvrtc_result");
  return 0;
}
