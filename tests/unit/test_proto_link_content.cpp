// The content field of a link session's key (proto/link_content.hpp, docs/cache-key.md "Link
// sessions"): a known answer computed independently, and one change per part of the encoding that
// must give another digest (and another fast content), so that a link differing only there misses.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <proto/content_digest.hpp>
#include <proto/link_content.hpp>

using namespace jitcache::proto;

namespace {

struct Input {
  LinkInputKind kind;
  std::string data;
  std::string options;
};

std::vector<LinkInputView> views(const std::vector<Input>& inputs) {
  std::vector<LinkInputView> out;
  for (const Input& input : inputs) out.push_back(LinkInputView{input.kind, as_bytes(input.data), input.options});
  return out;
}

Digest256 digest(const std::vector<Input>& inputs) {
  const auto v = views(inputs);
  return link_content_digest(v);
}

Checksum128 fast(const std::vector<Input>& inputs) {
  const auto v = views(inputs);
  return link_content_fast(v);
}

const std::vector<Input> k_base = {{LinkInputKind::ptx, "alpha", ""}, {LinkInputKind::cubin, "beta", "opt=3"}};

void check_differs(const std::vector<Input>& changed) {
  CHECK(digest(changed) != digest(k_base));
  CHECK(fast(changed) != fast(k_base));
}

}  // namespace

TEST_CASE("link content: the digest of a fixed session is the known answer") {
  // Python's hashlib over the encoding of docs/cache-key.md "Link sessions", content_digest
  // computed as docs/cache-key.md "The content digest" defines it.
  CHECK(to_hex(digest(k_base)) == "6d29b493d8a3ca00ece7710f4b967c25e4d45cc30bf64eaea177fea0819eca90");
  CHECK(digest(k_base) == digest(k_base));
  CHECK(fast(k_base) == fast(k_base));
}

TEST_CASE("link content: inputs in another order are another link") { check_differs({k_base[1], k_base[0]}); }

TEST_CASE("link content: another kind of one input is another link") {
  auto changed = k_base;
  changed[1].kind = LinkInputKind::object;
  check_differs(changed);
}

TEST_CASE("link content: one byte more or changed in one input is another link") {
  auto longer = k_base;
  longer[0].data += '\0';
  check_differs(longer);
  auto flipped = k_base;
  flipped[0].data[2] = 'P';
  check_differs(flipped);
}

TEST_CASE("link content: another option of one input is another link") {
  auto changed = k_base;
  changed[1].options = "opt=2";
  check_differs(changed);
}

TEST_CASE("link content: an input more or less is another link, and bytes cannot move between inputs") {
  auto more = k_base;
  more.push_back({LinkInputKind::library, "gamma", ""});
  check_differs(more);
  check_differs({k_base[0]});
  // The size and the option length prefix each part: "alpha"+"beta" is not "alph"+"abeta".
  auto moved = k_base;
  moved[0].data = "alph";
  moved[1].data = "abeta";
  check_differs(moved);
  auto options_moved = k_base;
  options_moved[0].options = "opt=3";
  options_moved[1].options = "";
  check_differs(options_moved);
}

TEST_CASE("link content: a one-input link of a PTX never has that PTX's module content digest") {
  const std::string ptx = ".version 9.0\n.target sm_90\n";
  CHECK(digest({{LinkInputKind::ptx, ptx, ""}}) != content_digest(as_bytes(ptx)));
}

TEST_CASE("link content: the kinds are numbered as docs and PROTOCOL.md say, and only they are kinds") {
  CHECK(static_cast<int>(LinkInputKind::ptx) == 1);
  CHECK(static_cast<int>(LinkInputKind::ltoir) == 6);
  CHECK(name_in(k_link_input_kinds, LinkInputKind::library) == "library");
  CHECK_FALSE(is_link_input_kind(0));
  CHECK(is_link_input_kind(6));
  CHECK_FALSE(is_link_input_kind(7));
}
