#include "rpc/tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/status_format.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "rpc/read_file.h"

namespace sparseditto::rpc {
namespace {

struct OpenSslFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
  void operator()(X509* cert) const { X509_free(cert); }
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
template <typename T>
using OpenSslPtr = std::unique_ptr<T, OpenSslFree>;

OpenSslPtr<BIO> MemoryBio(const std::string& pem) {
  return OpenSslPtr<BIO>(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// Refuses to prompt for a passphrase on the terminal (OpenSSL's default for an encrypted key).
int NoPassphrase(char*, int, int, void*) { return -1; }

absl::Status WithField(const absl::Status& status, std::string_view field) {
  return absl::Status(status.code(), fmt::format("{}: {}", field, status.message()));
}

// The file's PEM text and its first certificate (the leaf of a chain).
struct Certificates {
  std::string pem;
  OpenSslPtr<X509> first;
};

absl::StatusOr<Certificates> ReadCertificates(const std::string& path, std::string_view field) {
  if (path.empty()) return absl::InvalidArgumentError(fmt::format("{} is empty", field));
  absl::StatusOr<std::string> pem = ReadFileContent(path);
  if (!pem.ok()) return WithField(pem.status(), field);
  Certificates certs{.pem = *std::move(pem), .first = nullptr};
  OpenSslPtr<BIO> bio = MemoryBio(certs.pem);
  certs.first.reset(bio != nullptr ? PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr) : nullptr);
  ERR_clear_error();
  if (certs.first == nullptr) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {}: no PEM certificate ('-----BEGIN CERTIFICATE-----') OpenSSL can read", field, path));
  }
  return certs;
}

absl::StatusOr<std::string> ReadPrivateKey(const std::string& path, std::string_view field, X509* certificate,
                                           std::string_view certificate_path) {
  if (path.empty()) return absl::InvalidArgumentError(fmt::format("{} is empty", field));
  absl::StatusOr<std::string> pem = ReadFileContent(path);
  if (!pem.ok()) return WithField(pem.status(), field);
  OpenSslPtr<BIO> bio = MemoryBio(*pem);
  OpenSslPtr<EVP_PKEY> key(bio != nullptr ? PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr)
                                          : nullptr);
  ERR_clear_error();
  if (key == nullptr) {
    const bool encrypted = pem->find("ENCRYPTED") != std::string::npos;
    return absl::InvalidArgumentError(fmt::format(
        "{}: {}: {}", field, path,
        encrypted ? "an encrypted private key (give it unencrypted, readable by this user only)"
                  : "no PEM private key OpenSSL can read"));
  }
  if (X509_check_private_key(certificate, key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(fmt::format("{}: {}: not the key of the first certificate of {}", field, path,
                                                  certificate_path));
  }
  return *std::move(pem);
}

// Channel credentials that put an ssl target name override into the arguments of every channel made
// from them, so that MakeChannel need not know about TLS. gRPC's secure credentials do the rest.
class NameOverrideCredentials final : public grpc::ChannelCredentials {
 public:
  NameOverrideCredentials(std::shared_ptr<grpc::ChannelCredentials> inner, std::string name)
      : inner_(std::move(inner)), name_(std::move(name)) {}

 protected:
  // Only gRPC's call-credential composition asks for this; see MakeChannelCredentials.
  grpc::SecureChannelCredentials* AsSecureCredentials() override { return nullptr; }

 private:
  std::shared_ptr<grpc::Channel> CreateChannelImpl(const std::string& target,
                                                   const grpc::ChannelArguments& args) override {
    return grpc::CreateCustomChannel(target, inner_, WithOverride(args));
  }
  std::shared_ptr<grpc::Channel> CreateChannelWithInterceptors(
      const std::string& target, const grpc::ChannelArguments& args,
      std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors) override {
    return grpc::experimental::CreateCustomChannelWithInterceptors(target, inner_, WithOverride(args),
                                                                   std::move(interceptors));
  }
  grpc::ChannelArguments WithOverride(const grpc::ChannelArguments& args) const {
    grpc::ChannelArguments copy = args;
    copy.SetSslTargetNameOverride(name_);
    return copy;
  }

  std::shared_ptr<grpc::ChannelCredentials> inner_;
  std::string name_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const std::optional<ServerTls>& tls) {
  if (!tls.has_value()) return grpc::InsecureServerCredentials();
  SD_ASSIGN_OR_RETURN(Certificates chain, ReadCertificates(tls->cert_chain_path, "ServerTls.cert_chain_path"));
  SD_ASSIGN_OR_RETURN(std::string key, ReadPrivateKey(tls->private_key_path, "ServerTls.private_key_path",
                                                      chain.first.get(), tls->cert_chain_path));
  grpc::SslServerCredentialsOptions options(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  if (!tls->client_ca_path.empty()) {
    SD_ASSIGN_OR_RETURN(Certificates client_ca, ReadCertificates(tls->client_ca_path, "ServerTls.client_ca_path"));
    options.pem_root_certs = std::move(client_ca.pem);
    options.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  options.pem_key_cert_pairs.push_back({.private_key = std::move(key), .cert_chain = std::move(chain.pem)});
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(
    const std::optional<ClientTls>& tls) {
  if (!tls.has_value()) return grpc::InsecureChannelCredentials();
  if (tls->ca_path.empty()) {
    return absl::InvalidArgumentError("ClientTls.ca_path is empty (the CA that signed the server's certificate)");
  }
  if (tls->cert_chain_path.empty() != tls->private_key_path.empty()) {
    return absl::InvalidArgumentError(
        "ClientTls: cert_chain_path and private_key_path go together (both set for a client certificate, or "
        "neither)");
  }
  SD_ASSIGN_OR_RETURN(Certificates ca, ReadCertificates(tls->ca_path, "ClientTls.ca_path"));
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = std::move(ca.pem);
  if (!tls->cert_chain_path.empty()) {
    SD_ASSIGN_OR_RETURN(Certificates chain, ReadCertificates(tls->cert_chain_path, "ClientTls.cert_chain_path"));
    SD_ASSIGN_OR_RETURN(options.pem_private_key, ReadPrivateKey(tls->private_key_path, "ClientTls.private_key_path",
                                                                chain.first.get(), tls->cert_chain_path));
    options.pem_cert_chain = std::move(chain.pem);
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::SslCredentials(options);
  if (tls->server_name_override.empty()) return credentials;
  return std::make_shared<NameOverrideCredentials>(std::move(credentials), tls->server_name_override);
}

}  // namespace sparseditto::rpc
