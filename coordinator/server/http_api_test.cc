// The JSON/HTTP front (http_api.h, http_server.h) over real HTTP on 127.0.0.1 (cpp-httplib's client
// against the server), on a real RunQueue in the test's own folder: submit, status, the event stream
// to the run's end and to the coordinator's stop, export, HTTPS from PEM files; every bad request
// with its status and error (table-driven); a few answers without the network. The test plays the
// coordinator's search loop (Next, Publish, Finish); tests/coordinator_http_test.cc runs a real search.
#include "coordinator/server/http_api.h"

#include <future>
#include <string>
#include <thread>
#include <vector>

#include "coordinator/server/http_server.h"
#include "coordinator/server/run_queue.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "rpc/testing/test_pki.h"
#include "tests/testing/temp_folder.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

constexpr char kClientToken[] = "client-token-0123456789abcdef";
constexpr char kEvaluatorToken[] = "evaluator-token-0123456789";

HttpServerOptions Listen(const std::string& listen, std::optional<rpc::ServerTls> tls = std::nullopt) {
  HttpServerOptions options;
  options.listen = listen;
  options.tls = std::move(tls);
  return options;
}

rpc::ServerTls Pem(const std::filesystem::path& cert, const std::filesystem::path& key) {
  rpc::ServerTls tls;
  tls.cert_chain_path = cert.string();
  tls.private_key_path = key.string();
  return tls;
}

std::string TaskBody(const std::string& run, const std::string& dtype = "fp16") {
  return "{\"run\": \"" + run + "\",\n \"task\": {\"name\": \"tiny\",\n  \"dtype\": \"" + dtype +
         "\", \"pattern\": {\"family\": \"unstructured\", \"sparsity\": 0.9},\n"
         "  \"matrix\": {\"generated\": {\"rows\": 256, \"cols\": 256}}, \"n\": [16], \"budget\": "
         "{\"max_evaluations\": 12}}}";
}

class HttpApiTest : public ::testing::Test {
 protected:
  void SetUp() override { Serve(HttpApiOptions()); }
  void Serve(HttpApiOptions api_options, std::optional<rpc::ServerTls> tls = std::nullopt) {
    ASSERT_TRUE(folder_.ok());
    server_.reset();
    tokens_.Add(rpc::Role::kClient, kClientToken);
    tokens_.Add(rpc::Role::kEvaluator, kEvaluatorToken);
    RunQueueOptions queue_options;
    queue_options.dir = (folder_.path() / "queue").string();
    auto queue = RunQueue::Open(queue_options);
    ASSERT_TRUE(queue.ok()) << queue.status();
    queue_ = *std::move(queue);
    service_ = std::make_unique<ClientServiceImpl>(
        queue_.get(), &tokens_, ClientServiceOptions{.runs_dir = (folder_.path() / "runs").string(),
                                                     .watch_poll = absl::Milliseconds(50)});
    api_ = std::make_unique<HttpApi>(service_.get(), &tokens_, api_options);
    auto server = HttpServer::Start(api_.get(), Listen("127.0.0.1:0", tls));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  void TearDown() override {
    if (queue_) queue_->Close();  // ends the streams, so that the server's stop does not wait for them
    server_.reset();
  }
  httplib::Client Client() const { return httplib::Client("127.0.0.1", server_->port()); }
  static httplib::Headers Bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

  // The lines of GET /v1/runs/<run>/events<query>; `first` is set once the first chunk arrived.
  std::vector<json> Events(const std::string& run, const std::string& query = "",
                           std::promise<void>* first = nullptr) {
    std::string body;
    httplib::Client client = Client();
    client.set_read_timeout(std::chrono::seconds(60));
    auto result = client.Get(("/v1/runs/" + run + "/events" + query).c_str(), Bearer(kClientToken),
                             [&](const char* data, size_t size) {
                               if (first != nullptr && body.empty()) first->set_value();
                               body.append(data, size);
                               return true;
                             });
    EXPECT_TRUE(result) << httplib::to_string(result.error());
    std::vector<json> lines;
    std::istringstream in(body);
    for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
    return lines;
  }

  testing_support::TempFolder folder_{"http_api_test"};
  rpc::RoleTokens tokens_;
  std::unique_ptr<RunQueue> queue_;
  std::unique_ptr<ClientServiceImpl> service_;
  std::unique_ptr<HttpApi> api_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpApiTest, SubmitReadStreamToTheEndAndExportARun) {
  httplib::Client client = Client();
  auto submitted = client.Post("/v1/runs", Bearer(kClientToken), TaskBody("r1"), "application/json");
  ASSERT_TRUE(submitted);
  EXPECT_EQ(submitted->status, 201) << submitted->body;
  EXPECT_EQ(submitted->get_header_value("Location"), "/v1/runs/r1");
  EXPECT_EQ(json::parse(submitted->body)["run"], "r1");

  auto status = client.Get("/v1/runs/r1", Bearer(kClientToken));
  ASSERT_TRUE(status);
  ASSERT_EQ(status->status, 200) << status->body;
  const json queued = json::parse(status->body);
  EXPECT_EQ(queued["state"], "RUN_STATE_QUEUED");
  ASSERT_EQ(queued["tasks"].size(), 1u);
  EXPECT_EQ(queued["tasks"][0]["task_name"], "tiny");
  EXPECT_EQ(queued["tasks"][0]["max_evaluations"], "12") << "the task's budget, from the JSON task";

  auto early = client.Get("/v1/runs/r1/export", Bearer(kClientToken));
  ASSERT_TRUE(early);
  EXPECT_EQ(early->status, 409);
  EXPECT_THAT(json::parse(early->body)["error"].get<std::string>(), HasSubstr("has not started"));

  // The search loop's part: the run starts, makes progress and ends; the watcher sees all of it.
  ASSERT_TRUE(queue_->Next(/*wait=*/false).has_value());
  v1::RunEvent progress;
  progress.mutable_progress()->set_task_name("tiny");
  progress.mutable_progress()->set_evaluations(5);
  queue_->Publish("r1", progress);
  ASSERT_TRUE(queue_->Finish("r1", v1::RUN_STATE_DONE, "").ok());
  const std::vector<json> events = Events("r1");
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.front()["progress"]["task_name"], "tiny");
  EXPECT_EQ(events.back()["ended"]["state"], "RUN_STATE_DONE");
  // A watcher coming back after the first event gets the rest only.
  const std::string after = events.front()["sequence"].get<std::string>();
  const std::vector<json> rest = Events("r1", "?after=" + after);
  ASSERT_EQ(rest.size(), events.size() - 1);
  EXPECT_EQ(rest.back()["ended"]["state"], "RUN_STATE_DONE");

  status = client.Get("/v1/runs/r1", Bearer(kClientToken));
  ASSERT_TRUE(status);
  EXPECT_EQ(json::parse(status->body)["state"], "RUN_STATE_DONE");
  // The alias of the seed documents queues a run too.
  auto alias = client.Post("/generate_kernel", Bearer(kClientToken), TaskBody("r2"), "application/json");
  ASSERT_TRUE(alias);
  EXPECT_EQ(alias->status, 201) << alias->body;
  EXPECT_EQ(json::parse(alias->body)["runs_ahead"], 0);
}

struct BadRequest {
  std::string name;
  std::string method;
  std::string path;
  std::string body;
  std::string token;  // empty: no Authorization header
  int status;
  std::string error;  // a part of the error message
  json where;         // members the error's "where" must have
  std::string content_type = "application/json";
};

TEST_F(HttpApiTest, EveryBadRequestIsRefusedWithItsStatusAndWhatWasWrong) {
  httplib::Client client = Client();
  ASSERT_EQ(client.Post("/v1/runs", Bearer(kClientToken), TaskBody("taken"), "application/json")->status, 201);
  const std::string c = kClientToken;
  const std::vector<BadRequest> cases = {
      {"malformed JSON", "POST", "/v1/runs", "{\"run\": \"a\",\n \"task\": {\"name\": }}", c, 400,
       "not JSON: parse error at line 2", {{"line", 2}, {"column", 19}}},
      {"not an object", "POST", "/v1/runs", "[1, 2]", c, 400, "the body is not an object", {}},
      {"empty body", "POST", "/v1/runs", "", c, 400, "empty body", {}},
      {"unknown envelope field", "POST", "/v1/runs", R"({"run": "a", "tsk": {}})", c, 400, "unknown field 'tsk'",
       {{"field", "tsk"}}},
      {"no run name", "POST", "/v1/runs", R"({"task": {"name": "t"}})", c, 400, "run: missing",
       {{"field", "run"}}},
      {"no task", "POST", "/v1/runs", R"({"run": "a"})", c, 400, "task: missing", {{"field", "task"}}},
      {"bad dtype", "POST", "/v1/runs", TaskBody("a", "fp17"), c, 400, "did you mean 'fp16'",
       {{"line", 3}, {"field", "dtype"}}},
      {"unknown task field", "POST", "/v1/runs", R"({"run": "a", "task": {"name": "t", "dtyp": "fp16"}})", c, 400,
       "unknown field", {{"line", 1}, {"field", "dtyp"}}},
      {"no such matrix file", "POST", "/v1/runs",
       R"({"run": "a", "task": {"name": "t", "dtype": "fp16", "matrix": {"file": {"path": "/no/such.smtx"}}, "n": 16}})",
       c, 400, "no such file", {{"field", "matrix.file.path"}}},
      {"not UTF-8", "POST", "/v1/runs", "{\"run\": \"a\", \"task\": {\"name\": \"\xff\"}}", c, 400, "not JSON", {}},
      {"nested too deep", "POST", "/v1/runs",
       "{\"run\": \"a\", \"task\": " + std::string(5000, '[') + std::string(5000, ']') + "}", c, 400,
       "nested deeper than 32 levels", {{"line", 1}, {"column", 53}}},
      {"form-encoded", "POST", "/v1/runs", TaskBody("a") + std::string(9000, ' '), c, 413, "application/json", {},
       "application/x-www-form-urlencoded"},
      {"bad run name", "POST", "/v1/runs", TaskBody("../up"), c, 400, "run", {}},
      {"run exists", "POST", "/v1/runs", TaskBody("taken"), c, 409, "taken", {}},
      {"no token", "POST", "/v1/runs", TaskBody("a"), "", 401, "no authorization header", {}},
      {"wrong token", "GET", "/v1/runs/taken", "", "not-a-token-of-this-server", 401, "", {}},
      {"evaluator token", "GET", "/v1/runs/taken", "", kEvaluatorToken, 403, "evaluator token cannot call", {}},
      {"huge body", "POST", "/v1/runs", std::string(3 << 20, ' '), c, 413, "over the 1048576 bytes", {}},
      {"unknown run", "GET", "/v1/runs/nosuch", "", c, 404, "nosuch", {{"request", "GET /v1/runs/nosuch"}}},
      {"unknown run's events", "GET", "/v1/runs/nosuch/events", "", c, 404, "nosuch", {}},
      {"unknown run's export", "GET", "/v1/runs/nosuch/export", "", c, 404, "nosuch", {}},
      {"unknown endpoint", "GET", "/v2/runs", "", c, 404, "no such endpoint", {}},
      {"wrong method", "DELETE", "/v1/runs/taken", "", c, 405, "takes GET", {}},
      {"bad sequence", "GET", "/v1/runs/taken/events?after=-3", "", c, 400, "after", {{"field", "after"}}},
  };
  for (const BadRequest& bad : cases) {
    SCOPED_TRACE(bad.name);
    httplib::Headers headers = bad.token.empty() ? httplib::Headers{} : Bearer(bad.token);
    httplib::Request request;
    request.method = bad.method;
    request.path = bad.path;
    request.headers = headers;
    request.body = bad.body;
    if (!bad.body.empty()) request.set_header("Content-Type", bad.content_type);
    auto result = client.send(request);
    ASSERT_TRUE(result) << httplib::to_string(result.error());
    EXPECT_EQ(result->status, bad.status) << result->body;
    EXPECT_EQ(result->get_header_value("Content-Type"), "application/json");
    const json error = json::parse(result->body, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(error.is_object()) << result->body;
    EXPECT_THAT(error.value("error", ""), HasSubstr(bad.error));
    EXPECT_THAT(error.value("error", ""), ::testing::Not(HasSubstr("not-a-token"))) << "no token is echoed";
    EXPECT_TRUE(error["where"].is_object()) << result->body;
    for (const auto& [key, value] : bad.where.items()) EXPECT_EQ(error["where"][key], value) << key;
    if (bad.status == 401) {
      EXPECT_EQ(result->get_header_value("WWW-Authenticate"), "Bearer");
    }
    if (bad.status == 405) {
      EXPECT_EQ(result->get_header_value("Allow"), "GET, HEAD");
    }
  }
  // Nothing refused was queued: the one run there is is the first.
  EXPECT_EQ(client.Get("/v1/runs/a", Bearer(kClientToken))->status, 404);
}

TEST_F(HttpApiTest, StreamsEndWhenTheCoordinatorStopsAndSubmissionsAreRefusedThen) {
  httplib::Client client = Client();
  ASSERT_EQ(client.Post("/v1/runs", Bearer(kClientToken), TaskBody("r1"), "application/json")->status, 201);
  std::promise<void> first;
  queue_->Publish("r1", [] { v1::RunEvent e; e.set_line("started"); return e; }());
  std::future<std::vector<json>> events = std::async(std::launch::async, [&] { return Events("r1", "", &first); });
  first.get_future().wait();  // the stream is open
  queue_->Close();
  const std::vector<json> lines = events.get();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["line"], "started");
  EXPECT_EQ(lines[1]["code"], "UNAVAILABLE");
  EXPECT_THAT(lines[1]["error"].get<std::string>(), HasSubstr("stopping"));
  auto refused = client.Post("/v1/runs", Bearer(kClientToken), TaskBody("r2"), "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503) << refused->body;
}

TEST_F(HttpApiTest, EventStreamsBeyondTheLimitAreRefusedUntilOneEnds) {
  HttpApiOptions one_stream;
  one_stream.max_streams = 1;
  Serve(one_stream);
  httplib::Client client = Client();
  ASSERT_EQ(client.Post("/v1/runs", Bearer(kClientToken), TaskBody("r1"), "application/json")->status, 201);
  queue_->Publish("r1", [] { v1::RunEvent e; e.set_line("started"); return e; }());
  std::promise<void> first;
  std::future<std::vector<json>> open = std::async(std::launch::async, [&] { return Events("r1", "", &first); });
  first.get_future().wait();
  auto second = client.Get("/v1/runs/r1/events", Bearer(kClientToken));
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 429);
  EXPECT_THAT(second->body, HasSubstr("1 event streams are open"));
  ASSERT_TRUE(queue_->Next(false).has_value());
  ASSERT_TRUE(queue_->Finish("r1", v1::RUN_STATE_FAILED, "no evaluator").ok());
  EXPECT_EQ(open.get().back()["ended"]["detail"], "no evaluator");
  EXPECT_EQ(Events("r1").back()["ended"]["state"], "RUN_STATE_FAILED") << "its place was given back";
}

TEST_F(HttpApiTest, HttpsWithTheCoordinatorsPemFiles) {
  auto pki = rpc::testing_support::MakeTestPki(folder_.path());
  ASSERT_TRUE(pki.ok()) << pki.status();
  Serve(HttpApiOptions(), Pem(pki->server_cert, pki->server_key));
  httplib::SSLClient tls("127.0.0.1", server_->port());
  tls.set_ca_cert_path(pki->server_ca.c_str());
  tls.enable_server_certificate_verification(true);
  auto answer = tls.Get("/v1/runs/nosuch", Bearer(kClientToken));
  ASSERT_TRUE(answer) << httplib::to_string(answer.error());
  EXPECT_EQ(answer->status, 404);
  httplib::SSLClient stranger("127.0.0.1", server_->port());
  stranger.set_ca_cert_path(pki->other_ca.c_str());
  stranger.enable_server_certificate_verification(true);
  EXPECT_FALSE(stranger.Get("/v1/runs/nosuch", Bearer(kClientToken))) << "a server its CA did not sign";
  EXPECT_FALSE(Client().Get("/v1/runs/nosuch", Bearer(kClientToken))) << "no plain HTTP on the HTTPS port";
  auto bad = HttpServer::Start(api_.get(), Listen("127.0.0.1:0", Pem(pki->server_cert, pki->other_server_key)));
  EXPECT_FALSE(bad.ok()) << "a key of another certificate";
}

TEST_F(HttpApiTest, AnswersWithoutTheNetworkAndAPortInUse) {
  HttpRequest head;
  head.method = "HEAD";
  head.path = "/v1/runs/nosuch";
  head.authorization = {"Bearer " + std::string(kClientToken)};
  EXPECT_EQ(api_->Handle(head).status, 404);
  HttpRequest twice = head;
  twice.authorization.push_back(twice.authorization.front());
  EXPECT_THAT(api_->Handle(twice).body, HasSubstr("more than one authorization header"));
  HttpRequest post_status = head;
  post_status.method = "POST";
  post_status.path = "/v1/runs/r1";
  EXPECT_EQ(api_->Handle(post_status).status, 405);
  auto taken = HttpServer::Start(api_.get(), Listen("127.0.0.1:" + std::to_string(server_->port())));
  EXPECT_TRUE(absl::IsUnavailable(taken.status())) << taken.status();
  for (const char* listen : {"127.0.0.1", "127.0.0.1:http", "127.0.0.1:70000"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(HttpServer::Start(api_.get(), Listen(listen)).status())) << listen;
  }
}

}  // namespace
}  // namespace sparseditto
