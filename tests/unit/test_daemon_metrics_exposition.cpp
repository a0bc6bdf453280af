// The Prometheus text format as the metrics endpoint writes it (daemon/metrics/exposition.hpp):
// HELP and TYPE lines, label and help escaping, values, and histograms (cumulative buckets, +Inf,
// _sum and _count).
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include <daemon/metrics/exposition.hpp>

using namespace jitcache::daemon::metrics;

TEST_CASE("exposition: a family is a HELP line, a TYPE line, then its samples") {
  Exposition out;
  out.family("jitcache_puts_total", MetricType::counter, "Entries stored by PUT.");
  out.sample("jitcache_puts_total", {}, std::uint64_t{3});
  out.family("jitcache_connections", MetricType::gauge, "Open now.");
  out.sample("jitcache_connections", {{"a", "1"}, {"b", "2"}}, std::uint64_t{18446744073709551615ull});
  CHECK(out.text() ==
        "# HELP jitcache_puts_total Entries stored by PUT.\n"
        "# TYPE jitcache_puts_total counter\n"
        "jitcache_puts_total 3\n"
        "# HELP jitcache_connections Open now.\n"
        "# TYPE jitcache_connections gauge\n"
        "jitcache_connections{a=\"1\",b=\"2\"} 18446744073709551615\n");
}

TEST_CASE(
    "exposition: label values escape backslash, double quote and newline, and help text escapes backslash and newline") {
  CHECK(escape_label_value("plain") == "plain");
  CHECK(escape_label_value("a\\b\"c\nd") == "a\\\\b\\\"c\\nd");
  CHECK(escape_help("say \"hi\"\\\nbye") == "say \"hi\"\\\\\\nbye");

  Exposition out;
  out.family("m", MetricType::gauge, "two\nlines");
  out.sample("m", {{"path", "C:\\dir \"x\"\n"}}, std::uint64_t{1});
  CHECK(out.text() == "# HELP m two\\nlines\n# TYPE m gauge\nm{path=\"C:\\\\dir \\\"x\\\"\\n\"} 1\n");
}

TEST_CASE("exposition: doubles read back exactly, and infinities and NaN are spelt as Prometheus does") {
  CHECK(format_value(0.0) == "0");
  CHECK(format_value(1.5) == "1.5");
  CHECK(format_value(0.000123) == "0.000123");
  CHECK(std::stod(format_value(0.1 + 0.2)) == 0.1 + 0.2);
  CHECK(format_value(std::numeric_limits<double>::infinity()) == "+Inf");
  CHECK(format_value(-std::numeric_limits<double>::infinity()) == "-Inf");
  CHECK(format_value(std::numeric_limits<double>::quiet_NaN()) == "NaN");
}

TEST_CASE("exposition: histogram buckets are cumulative, end in +Inf, and _count equals the +Inf bucket") {
  constexpr std::array<std::string_view, 3> le{"0.001", "0.01", "0.1"};
  // 2 at most 1 ms, 0 in (1 ms, 10 ms], 5 in (10 ms, 100 ms], 1 above.
  constexpr std::array<std::uint64_t, 4> counts{2, 0, 5, 1};
  Exposition out;
  out.family("jitcache_request_duration_seconds", MetricType::histogram, "Latency.");
  out.histogram("jitcache_request_duration_seconds", {{"op", "LOOKUP"}}, le, counts, 0.75);
  CHECK(out.text() ==
        "# HELP jitcache_request_duration_seconds Latency.\n"
        "# TYPE jitcache_request_duration_seconds histogram\n"
        "jitcache_request_duration_seconds_bucket{op=\"LOOKUP\",le=\"0.001\"} 2\n"
        "jitcache_request_duration_seconds_bucket{op=\"LOOKUP\",le=\"0.01\"} 2\n"
        "jitcache_request_duration_seconds_bucket{op=\"LOOKUP\",le=\"0.1\"} 7\n"
        "jitcache_request_duration_seconds_bucket{op=\"LOOKUP\",le=\"+Inf\"} 8\n"
        "jitcache_request_duration_seconds_sum{op=\"LOOKUP\"} 0.75\n"
        "jitcache_request_duration_seconds_count{op=\"LOOKUP\"} 8\n");
}

TEST_CASE("exposition: a histogram without labels still labels its buckets with le") {
  constexpr std::array<std::string_view, 1> le{"1"};
  constexpr std::array<std::uint64_t, 2> counts{0, 0};
  Exposition out;
  out.histogram("h", {}, le, counts, 0.0);
  CHECK(out.text() == "h_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 0\nh_sum 0\nh_count 0\n");
}
