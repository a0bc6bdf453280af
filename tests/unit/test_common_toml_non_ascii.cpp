// Where a config file may hold non-ASCII text before toml++ reads it (common/toml_non_ascii): comments
// and single-line quoted values only, because toml++ 3.3.0 has undefined behaviour on some non-ASCII
// code points elsewhere (fuzz_config's finding).
#include <common/toml_non_ascii.hpp>

#include <catch2/catch.hpp>

using jitcache::common::find_misplaced_non_ascii;

TEST_CASE("toml non-ASCII: comments, quoted values and a leading byte order mark may hold it") {
  CHECK_FALSE(find_misplaced_non_ascii("").has_value());
  CHECK_FALSE(find_misplaced_non_ascii("\xEF\xBB\xBFsocket = \"/run/\xC3\xA9.sock\" # \xC3\xBC\n").has_value());
  CHECK_FALSE(find_misplaced_non_ascii("socket_group =\t'\xC3\xA9quipe'\n# \xE2\x80\x83\n").has_value());
  CHECK_FALSE(find_misplaced_non_ascii("a = \"\\\"\xC3\xA9\"\nb = 'x'\n").has_value());
}

TEST_CASE("toml non-ASCII: bare text, keys, multi-line strings and text after a value are refused at the byte") {
  CHECK(find_misplaced_non_ascii(" \xEF\xBB\xBB B") == 1u);               // the fuzzer's input
  CHECK(find_misplaced_non_ascii("\"cl\xC3\xA9\" = 1") == 3u);            // a quoted key
  CHECK(find_misplaced_non_ascii("[\"\xC3\xA9\"]") == 2u);                // a quoted table name
  CHECK(find_misplaced_non_ascii("s = \"\"\"\\\n\xC2\xA7\"\"\"") == 9u);  // after a line-ending backslash
  CHECK(find_misplaced_non_ascii("s = '''\xC3\xA9'''") == 7u);
  CHECK(find_misplaced_non_ascii("a = \"x\" \"\xC3\xA9\"") == 9u);  // a second string is no value
  CHECK(find_misplaced_non_ascii("a = b\"\xC3\xA9\"") == 6u);       // nor one after bare text
  CHECK(find_misplaced_non_ascii("a = 2\xCC\xAA") == 5u);
  CHECK(find_misplaced_non_ascii("a = [\"\xC3\xA9\"]") == 6u);
}

TEST_CASE("toml non-ASCII: an equals sign or a quote inside bare value text starts no value") {
  // fuzz_config's second finding: toml++ reads `-212='...` as one bare value up to its terminator
  // and asks whether U+0401 is whitespace (undefined behaviour in 3.3.0).
  CHECK(find_misplaced_non_ascii("eue12=-212='-2O\\\xD0\x81'") == 16u);
  CHECK(find_misplaced_non_ascii("a = 1'\xC3\xA9'") == 6u);
  CHECK(find_misplaced_non_ascii("a = x=\"\xC3\xA9\"") == 7u);
  // What ends bare text ends it: a value after it is a value again.
  CHECK_FALSE(find_misplaced_non_ascii("a = 1\nb = '\xC3\xA9'").has_value());
  CHECK_FALSE(find_misplaced_non_ascii("t = {a = 1, b = '\xC3\xA9'}").has_value());
  CHECK_FALSE(find_misplaced_non_ascii("a=1 # =\xC3\xA9\nb='\xC3\xA9'").has_value());
}
