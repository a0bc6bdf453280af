#include <daemon/remote/http/tls_client_context.hpp>

#include <openssl/err.h>
#include <openssl/x509_vfy.h>

#include <boost/asio/ip/address.hpp>

namespace jitcache::daemon::remote::http {

namespace ssl = boost::asio::ssl;

common::Result<std::shared_ptr<ssl::context>> make_tls_client_context(const std::string& ca_file) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
  boost::system::error_code error;
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                           ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                       error);
  if (!error) context->set_verify_mode(ssl::verify_peer, error);
  if (error) {
    return common::make_error(common::ErrorCode::internal, "cannot set up a TLS client context: " + error.message());
  }
  if (ca_file.empty()) {
    context->set_default_verify_paths(error);
    if (error) {
      return common::make_error(common::ErrorCode::invalid_argument,
                                "cannot read the system's certificate authorities: " + error.message());
    }
  } else {
    context->load_verify_file(ca_file, error);
    if (error) {
      return common::make_error(common::ErrorCode::invalid_argument,
                                "cannot read the CA file " + ca_file + " (PEM certificates): " + error.message());
    }
  }
  return context;
}

common::Result<void> prepare_tls_session(SSL* session, const std::string& host) {
  boost::system::error_code not_an_address;
  boost::asio::ip::make_address(host, not_an_address);
  X509_VERIFY_PARAM* parameters = SSL_get0_param(session);
  bool accepted = false;
  if (!not_an_address) {
    accepted = X509_VERIFY_PARAM_set1_ip_asc(parameters, host.c_str()) == 1;
  } else {
    X509_VERIFY_PARAM_set_hostflags(parameters, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    accepted = X509_VERIFY_PARAM_set1_host(parameters, host.c_str(), host.size()) == 1 &&
               SSL_set_tlsext_host_name(session, host.c_str()) == 1;
  }
  if (!accepted) {
    ERR_clear_error();
    return common::make_error(common::ErrorCode::invalid_argument,
                              "OpenSSL does not take \"" + host + "\" as the name to verify");
  }
  return {};
}

std::string tls_verification_failure(SSL* session) {
  const long result = SSL_get_verify_result(session);
  if (result == X509_V_OK) return "";
  return std::string("certificate verify failed: ") + X509_verify_cert_error_string(result);
}

}  // namespace jitcache::daemon::remote::http
