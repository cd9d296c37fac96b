// Test certificates made at test time with the openssl command line (scripts/setup.sh installs it)
// into a test's own folder: a server CA with a server certificate for "localhost" and 127.0.0.1, a
// client CA with a client certificate, and another CA with its own server and client certificates
// (what a stranger holds). EC P-256 keys, valid for two days from now. Not thread-safe.
#pragma once

#include <filesystem>

#include "absl/status/statusor.h"

namespace sparseditto::rpc::testing_support {

struct TestPki {
  std::filesystem::path server_ca;           // signed server_cert
  std::filesystem::path server_cert, server_key;
  std::filesystem::path client_ca;           // signed client_cert
  std::filesystem::path client_cert, client_key;
  std::filesystem::path other_ca;            // signed other_server_cert and other_client_cert
  std::filesystem::path other_server_cert, other_server_key;
  std::filesystem::path other_client_cert, other_client_key;
};

// Writes every file of a TestPki into `folder` (which exists). Internal with openssl's stderr when a
// command fails.
absl::StatusOr<TestPki> MakeTestPki(const std::filesystem::path& folder);

}  // namespace sparseditto::rpc::testing_support
