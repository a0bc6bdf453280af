// The spellings of an include that NVRTC 13.0 follows besides the plain `#include "x"`: comments as
// blanks, the digraph `%:`, a form feed (client/src/nvrtc/include_scan.hpp). Each must be named, or
// the compile must be NVRTC's own; a name left out is a header a changed copy of which would be
// served the old answer (tests/integration/test_transparent_nvrtc_directive_forms.cpp runs NVRTC).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <client/src/nvrtc/include_scan.hpp>

using jitcache::client::nvrtc::included_names;
using jitcache::common::ErrorCode;

TEST_CASE("include forms: a comment, the digraph %: or a form feed around a directive hides no name") {
  for (const char* text :
       {"#/* c */include \"a.h\"\n", "/* c */ #include \"a.h\"\n", "/* one\n two */ #include \"a.h\"\n",
        "%:include \"a.h\"\n", "%: include \"a.h\"\n", "#\finclude \"a.h\"\n", "\v#\vinclude \"a.h\"\n",
        "#if __has_include /* c */ (\"a.h\")\n#endif\n", "// c\n#/**/include/**/\"a.h\"\n",
        "#include /* c */ \"a.h\" // d\n",
        "#define F(x) __has_include(x)\n#if F /* c */ (\"a.h\") // \"b.h\"\n#endif\n"}) {
    INFO(text);
    auto names = included_names(text);
    REQUIRE(names);
    CHECK(*names == std::vector<std::string>{"a.h"});
  }
}

TEST_CASE("include forms: comment openers inside literals hide no directive after them") {
  auto names = included_names(
      "const char* s = \"/*\";\nint n = 1'000'000;\nchar c = '\"';\n/* x */ #include \"a.h\"\n"
      "const char* r = R\"d(/*)d\";\n/* y */ #include \"b.h\"\n// */\n");
  REQUIRE(names);
  CHECK(*names == std::vector<std::string>{"a.h", "b.h"});
}

TEST_CASE("include forms: a name given through a macro behind a comment still cannot be followed") {
  for (const char* text : {"#/* c */include HEADER\n", "%:include HEADER\n", "/* c */ #include HEADER\n"}) {
    INFO(text);
    auto names = included_names(text);
    REQUIRE_FALSE(names);
    CHECK(names.error().code == ErrorCode::unsupported);
  }
}

TEST_CASE("include forms: a plain source's names are as before, each once") {
  auto names = included_names("#include \"a.h\"\n#include <b.h>\n#if __has_include(<c.h>)\n#endif\n#include \"a.h\"\n");
  REQUIRE(names);
  CHECK(*names == std::vector<std::string>{"a.h", "b.h", "c.h"});
}
