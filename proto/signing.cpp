#include <proto/signing.hpp>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include <proto/digest.hpp>
#include <proto/signing_key_file.hpp>

namespace jitcache::proto {

namespace {

struct PkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct MdContextFree {
  void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using Bio = std::unique_ptr<BIO, BioFree>;
using MdContext = std::unique_ptr<EVP_MD_CTX, MdContextFree>;

// The reason of OpenSSL's first queued error, and the queue emptied: errors are thread-local and
// would otherwise be reported by the next unrelated OpenSSL call on this thread.
std::string take_openssl_error() {
  const unsigned long code = ERR_get_error();
  std::string text = "no detail from OpenSSL";
  if (code != 0) {
    const char* reason = ERR_reason_error_string(code);
    text = reason != nullptr ? reason : "OpenSSL error " + std::to_string(code);
  }
  ERR_clear_error();
  return text;
}

[[noreturn]] void fatal(const std::string& what) {
  std::fprintf(stderr, "jitcache: %s: %s\n", what.c_str(), take_openssl_error().c_str());
  std::abort();
}

// Rationale: without a callback OpenSSL would prompt on the terminal for the passphrase of an
// encrypted key, which a daemon has none of; refusing makes such a key an ordinary load error.
int refuse_passphrase(char* /*buffer*/, int /*size*/, int /*writing*/, void* /*data*/) { return -1; }

bool sign_with(EVP_PKEY* key, std::string_view message, Signature& out) {
  MdContext context(EVP_MD_CTX_new());
  std::size_t length = out.size();
  // ed25519 hashes the message itself (PureEdDSA): no digest is named, and the message goes in
  // whole, in one call.
  const bool ok = context && EVP_DigestSignInit(context.get(), nullptr, nullptr, nullptr, key) == 1 &&
                  EVP_DigestSign(context.get(), out.data(), &length,
                                 reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1 &&
                  length == out.size();
  if (!ok) ERR_clear_error();
  return ok;
}

common::Result<PublicKey> raw_public_key(EVP_PKEY* key) {
  PublicKey out;
  std::size_t length = out.raw.size();
  if (EVP_PKEY_get_raw_public_key(key, out.raw.data(), &length) != 1 || length != out.raw.size()) {
    return common::make_error(common::ErrorCode::internal, "cannot read the raw public key: " + take_openssl_error());
  }
  return out;
}

std::string key_type_name(EVP_PKEY* key) {
  const char* name = EVP_PKEY_get0_type_name(key);
  return name != nullptr ? name : "unknown";
}

common::Result<std::string> pem_of(EVP_PKEY* key, bool private_part) {
  // A secure-memory BIO is cleansed when freed, so the private key's PEM leaves no copy behind.
  Bio bio(BIO_new(private_part ? BIO_s_secmem() : BIO_s_mem()));
  const bool written =
      bio && (private_part ? PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr)
                           : PEM_write_bio_PUBKEY(bio.get(), key)) == 1;
  if (!written) {
    return common::make_error(common::ErrorCode::internal, "cannot write the key as PEM: " + take_openssl_error());
  }
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(length));
}

Bio memory_bio(const std::string& bytes) { return Bio(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size()))); }

}  // namespace

std::string signer_hex(const SignerId& id) { return to_hex(Bytes(id)); }

SignerId PublicKey::id() const {
  const Digest256 digest = sha256(Bytes(raw));
  SignerId out;
  std::copy_n(digest.bytes.begin(), out.size(), out.begin());
  return out;
}

bool PublicKey::verifies(std::string_view message, const Signature& signature) const {
  Pkey key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, raw.data(), raw.size()));
  MdContext context(EVP_MD_CTX_new());
  const bool ok = key && context && EVP_DigestVerifyInit(context.get(), nullptr, nullptr, nullptr, key.get()) == 1 &&
                  EVP_DigestVerify(context.get(), signature.data(), signature.size(),
                                   reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  ERR_clear_error();
  return ok;
}

common::Result<PublicKey> load_public_key(const std::string& path) {
  JITCACHE_TRY_ASSIGN(const std::string pem, read_key_file(path, KeyFileKind::public_key));
  const Bio bio = memory_bio(pem);
  const Pkey key(bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, refuse_passphrase, nullptr) : nullptr);
  if (!key) {
    const std::string detail = take_openssl_error();
    if (pem.find("PRIVATE KEY-----") != std::string::npos) {
      return common::make_error(common::ErrorCode::invalid_argument,
                                "the public key " + path +
                                    " holds a private key; name the public key (PREFIX.pub of jitcache keygen, or "
                                    "openssl pkey -pubout), and keep the private key on the builders");
    }
    return common::make_error(common::ErrorCode::invalid_argument,
                              "the public key " + path + " holds no PEM public key (\"BEGIN PUBLIC KEY\"): " + detail);
  }
  if (EVP_PKEY_is_a(key.get(), "ED25519") != 1) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              "the public key " + path + " holds a key of type " + key_type_name(key.get()) +
                                  "; the remote tier's keys are ed25519 (jitcache keygen makes a pair)");
  }
  return raw_public_key(key.get());
}

struct SigningKey::Impl {
  Pkey key;
};

SigningKey::SigningKey(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
SigningKey::SigningKey(SigningKey&&) noexcept = default;
SigningKey& SigningKey::operator=(SigningKey&&) noexcept = default;
SigningKey::~SigningKey() = default;

common::Result<SigningKey> SigningKey::load(const std::string& path) {
  JITCACHE_TRY_ASSIGN(std::string pem, read_key_file(path, KeyFileKind::private_key));
  const Bio bio = memory_bio(pem);
  Pkey key(bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, refuse_passphrase, nullptr) : nullptr);
  const bool encrypted = pem.find("ENCRYPTED") != std::string::npos;
  const bool public_only = pem.find("PUBLIC KEY-----") != std::string::npos;
  OPENSSL_cleanse(pem.data(), pem.size());
  if (!key) {
    const std::string detail = take_openssl_error();
    std::string why = "holds no PEM private key (\"BEGIN PRIVATE KEY\"): " + detail;
    if (encrypted) why = "is encrypted; jitcached reads an unencrypted key, protected by its file mode (0600)";
    if (public_only)
      why = "holds a public key; remote_signing_key names the private key (PREFIX.key of jitcache keygen)";
    return common::make_error(common::ErrorCode::invalid_argument, "the signing key " + path + " " + why);
  }
  if (EVP_PKEY_is_a(key.get(), "ED25519") != 1) {
    return common::make_error(common::ErrorCode::invalid_argument,
                              "the signing key " + path + " holds a key of type " + key_type_name(key.get()) +
                                  "; the remote tier signs with ed25519 keys (jitcache keygen makes a pair)");
  }
  JITCACHE_TRY_ASSIGN(const PublicKey public_key, raw_public_key(key.get()));
  // Rationale: an OpenSSL that loads the key but cannot sign with it (a FIPS-only configuration
  // without EdDSA) would otherwise fail at the first upload; here it fails at start-up, named.
  Signature probe;
  if (!sign_with(key.get(), "jitcache signing probe", probe) || !public_key.verifies("jitcache signing probe", probe)) {
    return common::make_error(common::ErrorCode::unsupported, "this OpenSSL cannot sign with the ed25519 key " + path);
  }
  SigningKey out(std::make_unique<Impl>(Impl{std::move(key)}));
  out.m_public = public_key;
  return out;
}

SigningKey SigningKey::generate() {
  Pkey key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  if (!key) fatal("cannot generate an ed25519 key");
  auto public_key = raw_public_key(key.get());
  if (!public_key) fatal("cannot read a generated ed25519 key");
  SigningKey out(std::make_unique<Impl>(Impl{std::move(key)}));
  out.m_public = *public_key;
  return out;
}

Signature SigningKey::sign(std::string_view message) const {
  Signature out;
  // Signing with a key that load() or generate() proved can sign fails only when memory runs out.
  if (!sign_with(m_impl->key.get(), message, out)) fatal("cannot sign with ed25519");
  return out;
}

common::Result<void> SigningKey::write_pair(const std::string& prefix) const {
  JITCACHE_TRY_ASSIGN(std::string private_pem, pem_of(m_impl->key.get(), true));
  JITCACHE_TRY_ASSIGN(const std::string public_pem, pem_of(m_impl->key.get(), false));
  auto written = write_key_pair_files(prefix, private_pem, public_pem);
  OPENSSL_cleanse(private_pem.data(), private_pem.size());
  return written;
}

}  // namespace jitcache::proto
