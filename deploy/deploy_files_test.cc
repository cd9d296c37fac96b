// The deployment files (deploy/) checked for what would break a cluster run, with no cluster: every
// Kubernetes document parses (yaml-cpp) and names itself; the coordinator's port, probes and Service
// agree, and the evaluators and mutator services point at that Service; the Secrets' keys are the ones
// referenced; each evaluator asks for one GPU and has time to drain; the mutator services' models file
// is a valid mutator file whose key variables the pods are given; every --flag in a manifest or Slurm
// script is one the sparseditto binary accepts (its --help); the Slurm scripts are valid bash and share
// the address file.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "task/mutator_file.h"
#include "yaml-cpp/yaml.h"

namespace {

namespace fs = std::filesystem;
const fs::path kDeploy = fs::path(SPARSEDITTO_SOURCE_DIR) / "deploy";

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// stdout of a shell command, and its exit status.
std::pair<std::string, int> RunShell(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {"", -1};
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) out.append(buffer, n);
  return {out, pclose(pipe)};
}

std::vector<YAML::Node> Documents(const std::string& file) { return YAML::LoadAllFromFile((kDeploy / "kubernetes" / file).string()); }

YAML::Node Find(const std::vector<YAML::Node>& docs, const std::string& kind, const std::string& name) {
  for (const YAML::Node& d : docs) {
    if (d["kind"].as<std::string>() == kind && d["metadata"]["name"].as<std::string>() == name) return d;
  }
  ADD_FAILURE() << "no " << kind << " " << name;
  return YAML::Node();
}

// "--listen=0.0.0.0:7070" -> "0.0.0.0:7070" from a container's command; "" when absent.
std::string Flag(const YAML::Node& container, const std::string& flag) {
  for (const YAML::Node& word : container["command"]) {
    const std::string w = word.as<std::string>();
    if (w.rfind(flag + "=", 0) == 0) return w.substr(flag.size() + 1);
  }
  return "";
}

// How pods reach a Service: "<name>:<port>".
std::string ServiceAddress(const YAML::Node& service) {
  return service["metadata"]["name"].as<std::string>() + ":" + service["spec"]["ports"][0]["port"].as<std::string>();
}

std::set<std::string> FlagsIn(const std::string& text) {
  std::set<std::string> flags;
  const std::regex flag(R"((^|[\s"'])(--[a-z][a-z-]*))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), flag); it != std::sregex_iterator(); ++it) {
    flags.insert((*it)[2]);
  }
  return flags;
}

TEST(DeployFilesTest, EveryKubernetesDocumentParsesAndNamesItself) {
  int documents = 0;
  for (const auto& entry : fs::directory_iterator(kDeploy / "kubernetes")) {
    SCOPED_TRACE(entry.path().string());
    for (const YAML::Node& d : YAML::LoadAllFromFile(entry.path().string())) {
      ++documents;
      EXPECT_TRUE(d["apiVersion"].IsScalar());
      EXPECT_TRUE(d["kind"].IsScalar());
      EXPECT_TRUE(d["metadata"]["name"].IsScalar());
      if (d["kind"].as<std::string>() != "Deployment") continue;
      const YAML::Node labels = d["spec"]["template"]["metadata"]["labels"];
      for (const auto& kv : d["spec"]["selector"]["matchLabels"]) {
        EXPECT_EQ(labels[kv.first.as<std::string>()].as<std::string>(), kv.second.as<std::string>())
            << "the selector must match the pods' labels";
      }
    }
  }
  EXPECT_GE(documents, 6);
}

TEST(DeployFilesTest, TheCoordinatorsPortProbesServiceAndTheEvaluatorsAgree) {
  const auto coordinator_docs = Documents("coordinator.yaml");
  const YAML::Node deployment = Find(coordinator_docs, "Deployment", "sparseditto-coordinator");
  const YAML::Node container = deployment["spec"]["template"]["spec"]["containers"][0];
  const std::string listen = Flag(container, "--listen");
  ASSERT_FALSE(listen.empty());
  const int port = std::stoi(listen.substr(listen.rfind(':') + 1));
  EXPECT_EQ(container["ports"][0]["containerPort"].as<int>(), port);
  EXPECT_EQ(container["readinessProbe"]["grpc"]["port"].as<int>(), port) << "the probe asks our health service";
  EXPECT_EQ(container["livenessProbe"]["grpc"]["port"].as<int>(), port);
  EXPECT_EQ(deployment["spec"]["strategy"]["type"].as<std::string>(), "Recreate") << "one writer of the store";
  const YAML::Node service = Find(coordinator_docs, "Service", "sparseditto-coordinator");
  EXPECT_EQ(service["spec"]["ports"][0]["targetPort"].as<int>(), port);
  // The JSON/HTTP API: its --http-listen port is the container's "http" port and the service's.
  const std::string http_listen = Flag(container, "--http-listen");
  ASSERT_FALSE(http_listen.empty()) << "the coordinator serves the HTTP API too";
  const int http_port = std::stoi(http_listen.substr(http_listen.rfind(':') + 1));
  EXPECT_NE(http_port, port);
  bool container_has = false, service_has = false;
  for (const YAML::Node& p : container["ports"]) {
    container_has |= p["name"].as<std::string>() == "http" && p["containerPort"].as<int>() == http_port;
  }
  for (const YAML::Node& p : service["spec"]["ports"]) {
    service_has |= p["name"].as<std::string>() == "http" && p["targetPort"].as<int>() == http_port;
  }
  EXPECT_TRUE(container_has) << "no container port named http at " << http_port;
  EXPECT_TRUE(service_has) << "no service port named http targeting " << http_port;
  const std::string reach = ServiceAddress(service);
  const YAML::Node mutators = Find(Documents("mutators.yaml"), "Deployment", "sparseditto-mutator");
  EXPECT_EQ(Flag(mutators["spec"]["template"]["spec"]["containers"][0], "--coordinator"), reach);
  for (const YAML::Node& d : Documents("evaluators.yaml")) {
    SCOPED_TRACE(d["metadata"]["name"].as<std::string>());
    const YAML::Node pod = d["spec"]["template"]["spec"];
    EXPECT_EQ(Flag(pod["containers"][0], "--coordinator"), reach);
    EXPECT_EQ(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<int>(), 1) << "one GPU per worker";
    EXPECT_GE(pod["terminationGracePeriodSeconds"].as<int>(), 60) << "time to finish and report the job in hand";
  }
}

TEST(DeployFilesTest, TheSecretsHoldEveryKeyTheManifestsReference) {
  const std::vector<YAML::Node> secrets = Documents("secret.example.yaml");
  std::map<std::string, std::set<std::string>> keys_of;  // secret -> its keys
  for (const std::string name : {"sparseditto-tokens", "sparseditto-model-keys"}) {
    for (const auto& kv : Find(secrets, "Secret", name)["stringData"]) keys_of[name].insert(kv.first.as<std::string>());
  }
  const std::set<std::string>& keys = keys_of["sparseditto-tokens"];
  const YAML::Node coordinator = Find(Documents("coordinator.yaml"), "Deployment", "sparseditto-coordinator");
  for (const YAML::Node& volume : coordinator["spec"]["template"]["spec"]["volumes"]) {
    if (!volume["secret"]) continue;
    EXPECT_EQ(volume["secret"]["secretName"].as<std::string>(), "sparseditto-tokens");
    for (const YAML::Node& item : volume["secret"]["items"]) EXPECT_TRUE(keys.contains(item["key"].as<std::string>()));
  }
  std::vector<YAML::Node> workers = Documents("evaluators.yaml");
  workers.push_back(Find(Documents("mutators.yaml"), "Deployment", "sparseditto-mutator"));
  for (const YAML::Node& d : workers) {
    for (const YAML::Node& env : d["spec"]["template"]["spec"]["containers"][0]["env"]) {
      const YAML::Node ref = env["valueFrom"]["secretKeyRef"];
      ASSERT_TRUE(keys_of.contains(ref["name"].as<std::string>())) << ref["name"].as<std::string>();
      EXPECT_TRUE(keys_of[ref["name"].as<std::string>()].contains(ref["key"].as<std::string>())) << ref["key"].as<std::string>();
    }
  }
  // Every role the workers' tokens serve has a line in the coordinator's token file.
  const std::string tokens = Find(secrets, "Secret", "sparseditto-tokens")["stringData"]["tokens"].as<std::string>();
  for (const char* role : {"evaluator ", "mutator "}) EXPECT_THAT(tokens, ::testing::HasSubstr(role));
}

// The mutator services' models file is one `sparseditto mutator --models` takes, and every key variable
// it names is set in the pod from the model-keys Secret (a model whose key is missing is disabled).
TEST(DeployFilesTest, TheMutatorServicesModelsFileIsValidAndItsKeysAreGiven) {
  const std::vector<YAML::Node> docs = Documents("mutators.yaml");
  const YAML::Node config = Find(docs, "ConfigMap", "sparseditto-models");
  const YAML::Node deployment = Find(docs, "Deployment", "sparseditto-mutator");
  const YAML::Node container = deployment["spec"]["template"]["spec"]["containers"][0];
  EXPECT_EQ(Flag(container, "--models"), "/config/models.yaml");
  absl::StatusOr<std::vector<sparseditto::v1::MutatorSpec>> models =
      sparseditto::ParseMutatorsYaml(config["data"]["models.yaml"].as<std::string>(), "mutators.yaml");
  ASSERT_TRUE(models.ok()) << models.status();
  std::set<std::string> variables;
  for (const YAML::Node& env : container["env"]) variables.insert(env["name"].as<std::string>());
  for (const sparseditto::v1::MutatorSpec& m : *models) {
    if (!m.api_key_env().empty()) EXPECT_TRUE(variables.contains(m.api_key_env())) << m.name() << ": " << m.api_key_env();
  }
  EXPECT_FALSE(container["resources"]["limits"]) << "a mutator service needs no GPU";
}

TEST(DeployFilesTest, EveryFlagInTheDeploymentFilesIsOneTheBinaryAccepts) {
  const std::map<std::string, std::vector<fs::path>> by_command = {
      {"coordinator", {kDeploy / "kubernetes" / "coordinator.yaml", kDeploy / "slurm" / "coordinator.sbatch"}},
      {"evaluator", {kDeploy / "kubernetes" / "evaluators.yaml", kDeploy / "slurm" / "evaluators.sbatch"}},
      {"mutator", {kDeploy / "kubernetes" / "mutators.yaml", kDeploy / "slurm" / "mutators.sbatch"}},
  };
  for (const auto& [command, files] : by_command) {
    const auto [help, status] = RunShell(std::string(SPARSEDITTO_BINARY) + " " + command + " --help");
    ASSERT_EQ(status, 0) << command;
    for (const fs::path& file : files) {
      std::string text = Read(file);
      // Only the lines that run sparseditto (and their continuations) carry its flags.
      const size_t start = text.find("\"$SPARSEDITTO\" " + command) != std::string::npos
                               ? text.find("\"$SPARSEDITTO\" " + command)
                               : text.find("- " + command);
      ASSERT_NE(start, std::string::npos) << file;
      for (const std::string& flag : FlagsIn(text.substr(start))) {
        EXPECT_THAT(help, ::testing::HasSubstr(flag)) << file << " uses " << flag << ", which `" << command
                                                      << "` does not take";
      }
    }
  }
}

TEST(DeployFilesTest, TheSlurmScriptsAreBashAndShareTheAddressFile) {
  for (const char* script : {"coordinator.sbatch", "evaluators.sbatch", "mutators.sbatch"}) {
    EXPECT_EQ(RunShell("bash -n " + (kDeploy / "slurm" / script).string() + " 2>&1").second, 0) << script;
  }
  const std::regex address(R"(ADDRESS_FILE="([^"]+)\")");
  std::smatch a, b;
  const std::string coordinator = Read(kDeploy / "slurm" / "coordinator.sbatch");
  const std::string evaluators = Read(kDeploy / "slurm" / "evaluators.sbatch");
  ASSERT_TRUE(std::regex_search(coordinator, a, address));
  ASSERT_TRUE(std::regex_search(evaluators, b, address));
  EXPECT_EQ(a[1], b[1]);
  const std::string mutators = Read(kDeploy / "slurm" / "mutators.sbatch");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(mutators, m, address));
  EXPECT_EQ(a[1], m[1]);
  EXPECT_THAT(mutators, ::testing::HasSubstr("--coordinator \"$(cat \"$ADDRESS_FILE\")\""));
  EXPECT_THAT(coordinator, ::testing::HasSubstr("mutator.token")) << "the coordinator job makes the services' token";
  EXPECT_THAT(coordinator, ::testing::HasSubstr("--address-file \"$ADDRESS_FILE\""));
  EXPECT_THAT(evaluators, ::testing::HasSubstr("--coordinator \"$(cat \"$ADDRESS_FILE\")\""));
}

}  // namespace
