// TLS from files (DESIGN.md §3.7), with gRPC's own TLS stack: the credentials a server listens with
// and a client connects with. Certificates and keys are PEM files; they are read and checked once,
// here, so a wrong path or a key of another certificate is an error naming the file now instead of a
// server that does not start or a handshake that fails later with no name in it.
// A server certificate needs a subjectAltName for the name clients dial (DNS:coordinator.example,
// IP:10.0.0.5); gRPC checks it. Thread-safe (no shared state).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"

namespace sparseditto::rpc {

// PEM file paths of a server.
struct ServerTls {
  std::string cert_chain_path;   // the server's certificate, then any intermediates
  std::string private_key_path;  // its key (unencrypted PEM)
  // Non-empty: mutual TLS. Every client must present a certificate signed by this CA (or a chain to
  // it), else the handshake fails. Empty: no client certificate is asked for (tokens still apply).
  std::string client_ca_path;
};

// PEM file paths of a client.
struct ClientTls {
  std::string ca_path;  // required: the CA that signed the server's certificate (the only one trusted)
  // Both set: present this client certificate (for a server with client_ca_path). Both empty: none.
  std::string cert_chain_path;
  std::string private_key_path;
  // Non-empty: check the server's certificate against this name instead of the host of the target
  // (e.g. a certificate for "localhost" dialled as 127.0.0.1). Empty: the target's host name.
  std::string server_name_override;
};

// The credentials for grpc::ServerBuilder::AddListeningPort. nullopt: insecure (plaintext; for loopback
// and tests). Errors name the file (and the ServerTls field):
//   InvalidArgument   cert_chain_path or private_key_path empty; a file that holds no PEM certificate
//                     (or private key) OpenSSL can read; an encrypted key; a key that does not match
//                     the first certificate of the chain
//   NotFound / PermissionDenied   a file missing / unreadable (read_file.h)
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const std::optional<ServerTls>& tls);

// The credentials for MakeChannel (connection_options.h). nullopt: insecure (plaintext). Errors as
// MakeServerCredentials, and InvalidArgument for an empty ca_path or only one of cert_chain_path and
// private_key_path. With server_name_override set, the credentials carry it into every channel made
// from them (gRPC's ssl target name override); such credentials cannot be combined with gRPC call
// credentials (grpc::CompositeChannelCredentials returns nullptr), which we do not use: tokens travel
// as call metadata (role_tokens.h).
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeChannelCredentials(const std::optional<ClientTls>& tls);

}  // namespace sparseditto::rpc
