#include "rpc/testing/test_pki.h"

#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "tests/testing/shell_command.h"

namespace sparseditto::rpc::testing_support {
namespace {

namespace fs = std::filesystem;
using ::sparseditto::testing_support::RunShell;

absl::Status Write(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return out ? absl::OkStatus() : absl::InternalError(fmt::format("cannot write {}", path.string()));
}

absl::Status Run(const std::string& command, const fs::path& folder) {
  const auto outcome = RunShell(command, folder);
  if (outcome.exit_code == 0) return absl::OkStatus();
  return absl::InternalError(fmt::format("'{}' failed ({}): {}", command, outcome.exit_code, outcome.err));
}

// A self-signed CA named `name`: name.pem and name.key.
absl::Status MakeCa(const fs::path& folder, const std::string& name) {
  const fs::path config = folder / (name + ".cnf");
  SD_RETURN_IF_ERROR(Write(config, fmt::format("[req]\ndistinguished_name = dn\nprompt = no\nx509_extensions = ext\n"
                                               "[dn]\nCN = SparseDitto test {}\n"
                                               "[ext]\nbasicConstraints = critical, CA:TRUE\n"
                                               "keyUsage = critical, keyCertSign, cRLSign\n"
                                               "subjectKeyIdentifier = hash\n",
                                               name)));
  return Run(fmt::format("openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
                         "-config '{0}' -keyout '{1}.key' -out '{1}.pem'",
                         config.string(), (folder / name).string()),
             folder);
}

// A certificate `name`.pem (key `name`.key) for common name `cn`, signed by CA `ca`, with the
// extensions of `extensions` (one per line).
absl::Status MakeLeaf(const fs::path& folder, const std::string& name, const std::string& cn, const std::string& ca,
                      const std::string& extensions, int serial) {
  const fs::path config = folder / (name + ".cnf");
  SD_RETURN_IF_ERROR(Write(config, fmt::format("[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = {}\n"
                                               "[ext]\nbasicConstraints = CA:FALSE\n{}\n",
                                               cn, extensions)));
  const std::string base = (folder / name).string();
  SD_RETURN_IF_ERROR(Run(fmt::format("openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                                     "-config '{0}' -keyout '{1}.key' -out '{1}.csr'",
                                     config.string(), base),
                         folder));
  const std::string ca_base = (folder / ca).string();
  return Run(fmt::format("openssl x509 -req -in '{0}.csr' -CA '{1}.pem' -CAkey '{1}.key' -set_serial {2} -days 2 "
                         "-extfile '{3}' -extensions ext -out '{0}.pem'",
                         base, ca_base, serial, config.string()),
             folder);
}

}  // namespace

absl::StatusOr<TestPki> MakeTestPki(const fs::path& folder) {
  const std::string server_ext =
      "keyUsage = critical, digitalSignature\nextendedKeyUsage = serverAuth\n"
      "subjectAltName = DNS:localhost, IP:127.0.0.1";
  const std::string client_ext = "keyUsage = critical, digitalSignature\nextendedKeyUsage = clientAuth";
  for (const char* ca : {"server_ca", "client_ca", "other_ca"}) SD_RETURN_IF_ERROR(MakeCa(folder, ca));
  SD_RETURN_IF_ERROR(MakeLeaf(folder, "server", "localhost", "server_ca", server_ext, 1));
  SD_RETURN_IF_ERROR(MakeLeaf(folder, "client", "test-evaluator", "client_ca", client_ext, 2));
  SD_RETURN_IF_ERROR(MakeLeaf(folder, "other_server", "localhost", "other_ca", server_ext, 3));
  SD_RETURN_IF_ERROR(MakeLeaf(folder, "other_client", "test-evaluator", "other_ca", client_ext, 4));
  const auto at = [&folder](const char* name) { return folder / name; };
  return TestPki{.server_ca = at("server_ca.pem"),
                 .server_cert = at("server.pem"),
                 .server_key = at("server.key"),
                 .client_ca = at("client_ca.pem"),
                 .client_cert = at("client.pem"),
                 .client_key = at("client.key"),
                 .other_ca = at("other_ca.pem"),
                 .other_server_cert = at("other_server.pem"),
                 .other_server_key = at("other_server.key"),
                 .other_client_cert = at("other_client.pem"),
                 .other_client_key = at("other_client.key")};
}

}  // namespace sparseditto::rpc::testing_support
