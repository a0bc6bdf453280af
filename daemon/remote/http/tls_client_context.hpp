// The TLS side of an https remote: one OpenSSL client context per backend (the certificate
// authorities to trust, TLS 1.2 at least, peer verification on) and what each connection adds to
// its own session (SNI and the name the certificate must carry).
//
// Verification is never skipped: there is no setting for it. A server with a private CA is
// trusted by naming that CA's certificate in ca_file (docs/remote-layout.md "TLS").
//
// Thread safety: make_tls_client_context's result is read-only once made and shared by every
// connection (OpenSSL's SSL_CTX is safe to create sessions from concurrently); prepare_tls_session
// touches only the one session it is given.
#pragma once

#include <memory>
#include <string>

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>

#include <common/result.hpp>

namespace jitcache::daemon::remote::http {

// A client context trusting the PEM certificates of `ca_file`, or the system's store when it is
// empty. invalid_argument when ca_file cannot be read or holds no certificate.
common::Result<std::shared_ptr<boost::asio::ssl::context>> make_tls_client_context(const std::string& ca_file);

// Sets the session's SNI (for a DNS name; RFC 6066 has none for an address) and the name, or IP
// address, that the server's certificate must match. invalid_argument when OpenSSL refuses them.
common::Result<void> prepare_tls_session(SSL* session, const std::string& host);

// Why the handshake of `session` failed, in words: the certificate verification's reason when it
// was that ("certificate verify failed: self-signed certificate"), else empty.
std::string tls_verification_failure(SSL* session);

}  // namespace jitcache::daemon::remote::http
