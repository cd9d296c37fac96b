// TLS and mutual TLS over a real gRPC server on 127.0.0.1, with certificates made by the openssl
// command line in each test's own folder (rpc/testing/test_pki.h).
#include "rpc/tls.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rpc/connection_options.h"
#include "rpc/testing/echo_server.h"
#include "rpc/testing/test_files.h"
#include "rpc/testing/test_pki.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto::rpc {
namespace {

namespace ts = ::sparseditto::rpc::testing_support;
using ::sparseditto::testing_support::TempFolder;
using ::testing::HasSubstr;

// Field by field (a designated initializer that leaves fields out is a -Wmissing-field-initializers warning).
ServerTls Server(const std::string& cert, const std::string& key, const std::string& client_ca = "") {
  ServerTls tls;
  tls.cert_chain_path = cert;
  tls.private_key_path = key;
  tls.client_ca_path = client_ca;
  return tls;
}

ClientTls Client(const std::string& ca, const std::string& cert = "", const std::string& key = "",
                 const std::string& server_name_override = "") {
  ClientTls tls;
  tls.ca_path = ca;
  tls.cert_chain_path = cert;
  tls.private_key_path = key;
  tls.server_name_override = server_name_override;
  return tls;
}

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(folder_.ok());
    absl::StatusOr<ts::TestPki> pki = ts::MakeTestPki(folder_.path());
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *pki;
  }
  void TearDown() override {
    if (server_.server != nullptr) server_.server->Shutdown();
  }

  void StartTlsServer(const std::string& client_ca) {
    absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = MakeServerCredentials(Server(pki_.server_cert, pki_.server_key, client_ca));
    ASSERT_TRUE(credentials.ok()) << credentials.status();
    absl::StatusOr<ts::RunningServer> server = ts::StartServer(&service_, *credentials, ConnectionOptions{});
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  // One Echo call over a channel to `target` with `tls` (nullopt: insecure).
  grpc::Status Call(const std::string& target, const std::optional<ClientTls>& tls) {
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials = MakeChannelCredentials(tls);
    if (!credentials.ok()) return grpc::Status(grpc::StatusCode::INTERNAL, std::string(credentials.status().message()));
    return ts::CallEcho(MakeChannel(target, *credentials, ConnectionOptions{}), "", "over tls", false, absl::Seconds(10));
  }

  TempFolder folder_{"rpc_tls"};
  ts::TestPki pki_;
  ts::EchoService service_{nullptr};
  ts::RunningServer server_;
};

TEST_F(TlsTest, ClientWithTheRightCaConnectsByNameAndByAddress) {
  StartTlsServer("");
  const ClientTls tls = Client(pki_.server_ca);
  for (const std::string& target : {server_.localhost(), server_.address()}) {
    SCOPED_TRACE(target);
    const grpc::Status status = Call(target, tls);
    EXPECT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
  }
}

TEST_F(TlsTest, ServerNameOverrideIsWhatTheCertificateIsCheckedAgainst) {
  StartTlsServer("");
  ClientTls tls = Client(pki_.server_ca, "", "", "localhost");
  EXPECT_TRUE(Call(server_.address(), tls).ok());
  tls.server_name_override = "coordinator.example";  // not in the certificate
  EXPECT_EQ(Call(server_.address(), tls).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, ClientTrustingAnotherCaIsRefused) {
  StartTlsServer("");
  EXPECT_EQ(Call(server_.localhost(), Client(pki_.other_ca)).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, PlaintextAndTlsDoNotMix) {
  StartTlsServer("");
  EXPECT_EQ(Call(server_.address(), std::nullopt).error_code(), grpc::StatusCode::UNAVAILABLE)
      << "an insecure client reached a TLS server";
  ts::EchoService plain_service(nullptr);
  absl::StatusOr<ts::RunningServer> plain = ts::StartServer(&plain_service, grpc::InsecureServerCredentials(), std::nullopt);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(Call(plain->localhost(), Client(pki_.server_ca)).error_code(), grpc::StatusCode::UNAVAILABLE)
      << "a TLS client reached a plaintext server";
  plain->server->Shutdown();
}

TEST_F(TlsTest, MutualTlsRequiresAClientCertificateOfTheClientCa) {
  StartTlsServer(pki_.client_ca);
  const ClientTls no_certificate = Client(pki_.server_ca);
  EXPECT_EQ(Call(server_.localhost(), no_certificate).error_code(), grpc::StatusCode::UNAVAILABLE);
  const ClientTls stranger = Client(pki_.server_ca, pki_.other_client_cert, pki_.other_client_key);
  EXPECT_EQ(Call(server_.localhost(), stranger).error_code(), grpc::StatusCode::UNAVAILABLE);
  const ClientTls member = Client(pki_.server_ca, pki_.client_cert, pki_.client_key);
  const grpc::Status status = Call(server_.localhost(), member);
  EXPECT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
}

struct CredentialErrorCase {
  std::string name;
  std::optional<ServerTls> server;  // one of the two
  std::optional<ClientTls> client;
  absl::StatusCode code;
  std::vector<std::string> message_parts;
};

TEST_F(TlsTest, CredentialFileErrorsNameTheFile) {
  const std::string missing = (folder_ / "missing.pem").string();
  const std::string text = (folder_ / "notes.txt").string();
  ASSERT_TRUE(ts::WriteFileWithMode(text, "not a certificate\n", 0644));
  const std::vector<CredentialErrorCase> cases = {
      {"missing certificate",
       Server(missing, pki_.server_key),
       std::nullopt,
       absl::StatusCode::kNotFound,
       {"ServerTls.cert_chain_path", missing}},
      {"certificate file that is not PEM",
       Server(text, pki_.server_key),
       std::nullopt,
       absl::StatusCode::kInvalidArgument,
       {"ServerTls.cert_chain_path", text, "no PEM certificate"}},
      {"key file holding a certificate",
       Server(pki_.server_cert, pki_.server_cert),
       std::nullopt,
       absl::StatusCode::kInvalidArgument,
       {"ServerTls.private_key_path", pki_.server_cert.string(), "no PEM private key"}},
      {"key of another certificate",
       Server(pki_.server_cert, pki_.other_server_key),
       std::nullopt,
       absl::StatusCode::kInvalidArgument,
       {pki_.other_server_key.string(), "not the key of the first certificate of", pki_.server_cert.string()}},
      {"client CA missing",
       Server(pki_.server_cert, pki_.server_key, missing),
       std::nullopt,
       absl::StatusCode::kNotFound,
       {"ServerTls.client_ca_path", missing}},
      {"empty key path",
       Server(pki_.server_cert, ""),
       std::nullopt,
       absl::StatusCode::kInvalidArgument,
       {"ServerTls.private_key_path is empty"}},
      {"client without a CA", std::nullopt, Client(""), absl::StatusCode::kInvalidArgument, {"ClientTls.ca_path is empty"}},
      {"client CA not PEM",
       std::nullopt,
       Client(text),
       absl::StatusCode::kInvalidArgument,
       {"ClientTls.ca_path", text}},
      {"client certificate without its key",
       std::nullopt,
       Client(pki_.server_ca, pki_.client_cert),
       absl::StatusCode::kInvalidArgument,
       {"go together"}},
      {"client key missing",
       std::nullopt,
       Client(pki_.server_ca, pki_.client_cert, missing),
       absl::StatusCode::kNotFound,
       {"ClientTls.private_key_path", missing}},
  };
  for (const CredentialErrorCase& c : cases) {
    SCOPED_TRACE(c.name);
    const absl::Status status =
        c.server.has_value() ? MakeServerCredentials(c.server).status() : MakeChannelCredentials(c.client).status();
    EXPECT_EQ(status.code(), c.code) << status;
    for (const std::string& part : c.message_parts) EXPECT_THAT(std::string(status.message()), HasSubstr(part));
  }
}

}  // namespace
}  // namespace sparseditto::rpc
