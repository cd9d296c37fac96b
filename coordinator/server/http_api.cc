#include "coordinator/server/http_api.h"

#include <atomic>
#include <charconv>
#include <memory>
#include <optional>

#include "absl/strings/str_split.h"
#include "fmt/format.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"
#include "task/task_loader.h"

namespace sparseditto {
namespace {

using nlohmann::json;

// Names the request body in task errors: "request body:3:12: tasks[0].dtype: ...".
constexpr std::string_view kBodyName = "request body";
constexpr std::string_view kBodyShape = R"(expected {"run": NAME, "task": {...a task file's fields...}})";

std::string CodeName(absl::StatusCode code) {
  std::string name = absl::StatusCodeToString(code);  // "INVALID_ARGUMENT"
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

// One place among the open event streams: taken by its maker (the caller counted it in), given back once,
// by GiveBack or at destruction, whichever comes first. Thread-safe.
class StreamPlace {
 public:
  explicit StreamPlace(std::shared_ptr<std::atomic<int>> count) : count_(std::move(count)) {}
  StreamPlace(const StreamPlace&) = delete;
  StreamPlace& operator=(const StreamPlace&) = delete;
  ~StreamPlace() { GiveBack(); }
  void GiveBack() {
    if (!given_back_.exchange(true)) count_->fetch_sub(1);
  }

 private:
  std::shared_ptr<std::atomic<int>> count_;
  std::atomic<bool> given_back_{false};
};

// The protobuf JSON mapping of `message` with the proto's field names and every field written.
std::string ProtoJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  if (!google::protobuf::util::MessageToJsonString(message, &out, options).ok()) out = "{}";
  return out + "\n";
}

HttpReply ErrorAt(const absl::Status& status, json where) {
  HttpReply reply;
  reply.status = HttpApi::HttpStatusOf(status.code());
  // Bytes that are not UTF-8 (echoed from a bad body) are replaced, not thrown about.
  reply.body = json{{"error", std::string(status.message())}, {"code", CodeName(status.code())}, {"where", where}}
                   .dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  if (reply.status == 401) reply.headers.emplace_back("WWW-Authenticate", "Bearer");
  return reply;
}

// The position and field of a task loader error, "request body:<line>:<column>: <field>: <reason>"
// (task_loader.h): the parts it has go into `where`.
void AddTaskErrorPlace(std::string_view message, json& where) {
  if (!message.starts_with(kBodyName) || message.size() <= kBodyName.size() || message[kBodyName.size()] != ':') return;
  std::string_view rest = message.substr(kBodyName.size() + 1);
  auto number = [&rest](const char* key, json& out) {
    int value = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (ec != std::errc() || end == rest.data() || end == rest.data() + rest.size() || *end != ':') return false;
    out[key] = value;
    rest.remove_prefix(static_cast<size_t>(end - rest.data()) + 1);
    return true;
  };
  if (number("line", where)) number("column", where);
  if (rest.starts_with(' ')) rest.remove_prefix(1);
  const size_t colon = rest.find(": ");
  const std::string_view field = rest.substr(0, colon);
  const bool is_path = colon != std::string_view::npos && !field.empty() &&
                       field.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.[]") ==
                           std::string_view::npos;
  if (is_path) where["field"] = std::string(field);
}

// 1-based line and column of byte `offset` of `text` (nlohmann's parse errors give a byte offset).
std::pair<int, int> LineColumnOf(std::string_view text, size_t offset) {
  int line = 1, column = 1;
  for (size_t i = 0; i + 1 < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// Nesting deeper than this is refused before the task loader sees it (a task file nests 4 levels).
constexpr int kMaxDepth = 32;

// Where `text` (valid JSON) first nests deeper than kMaxDepth; nullopt when it does not.
std::optional<size_t> TooDeep(std::string_view text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return i + 1;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

// Strict JSON first (YAML would take `{run: x}`), then the envelope's keys; the task is the task
// loader's (the same checks and messages as a task file's).
absl::StatusOr<v1::SubmitRunRequest> ParseSubmission(const std::string& body, json& where) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) {
    return absl::InvalidArgumentError(fmt::format("empty body: {}", kBodyShape));
  }
  json root;
  try {
    root = json::parse(body);
  } catch (const json::parse_error& e) {
    const auto [line, column] = LineColumnOf(body, e.byte);
    where["line"] = line;
    where["column"] = column;
    std::string_view what = e.what();  // "[json.exception.parse_error.101] parse error at line 1, ..."
    if (const size_t end = what.find("] "); end != std::string_view::npos) what.remove_prefix(end + 2);
    return absl::InvalidArgumentError(fmt::format("not JSON: {}", what));
  }
  if (!root.is_object()) return absl::InvalidArgumentError(fmt::format("the body is not an object: {}", kBodyShape));
  if (const std::optional<size_t> deep = TooDeep(body)) {
    const auto [line, column] = LineColumnOf(body, *deep);
    where["line"] = line;
    where["column"] = column;
    return absl::InvalidArgumentError(fmt::format("nested deeper than {} levels", kMaxDepth));
  }
  for (const auto& [key, value] : root.items()) {
    if (key != "run" && key != "task") {
      where["field"] = key;
      return absl::InvalidArgumentError(fmt::format("unknown field '{}': {}", key, kBodyShape));
    }
  }
  if (!root.contains("run") || !root["run"].is_string()) {
    where["field"] = "run";
    return absl::InvalidArgumentError(fmt::format("run: missing or not a string: the run's name ({})", kBodyShape));
  }
  absl::StatusOr<v1::TaskBatch> batch = ParseTaskYamlAt(body, "task", std::string(kBodyName));
  if (!batch.ok()) {
    AddTaskErrorPlace(std::string(batch.status().message()), where);
    // A matrix file the coordinator does not have is the request's fault too: 400, not 404.
    if (absl::IsNotFound(batch.status())) return absl::InvalidArgumentError(batch.status().message());
    return batch.status();
  }
  v1::SubmitRunRequest request;
  request.set_run(root["run"].get<std::string>());
  for (v1::Task& task : *batch->mutable_tasks()) *request.add_tasks() = std::move(task);
  return request;
}

HttpReply Json(int status, std::string body) {
  HttpReply reply;
  reply.status = status;
  reply.body = std::move(body);
  return reply;
}

// The parts of a path: "/v1/runs/r/events" -> {"v1", "runs", "r", "events"}.
std::vector<std::string> Segments(std::string_view path) {
  return absl::StrSplit(absl::string_view(path.data(), path.size()), '/', absl::SkipEmpty());
}

}  // namespace

int HttpApi::HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk: return 200;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange: return 400;
    case absl::StatusCode::kUnauthenticated: return 401;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kFailedPrecondition: return 409;
    case absl::StatusCode::kResourceExhausted: return 429;
    case absl::StatusCode::kUnimplemented: return 501;
    case absl::StatusCode::kUnavailable: return 503;
    case absl::StatusCode::kDeadlineExceeded: return 504;
    default: return 500;
  }
}

HttpReply HttpApi::Error(const absl::Status& status, std::string_view where) {
  return ErrorAt(status, json{{"request", std::string(where)}});
}

HttpReply HttpApi::Handle(const HttpRequest& request) {
  try {
    return Route(request);
  } catch (const std::exception& e) {  // a bug's, not the caller's: said as such, and the server goes on
    return Error(absl::InternalError(fmt::format("unexpected error: {}", e.what())),
                 fmt::format("{} {}", request.method, request.path));
  }
}

HttpReply HttpApi::Route(const HttpRequest& request) {
  const std::string where = fmt::format("{} {}", request.method, request.path);
  const std::vector<std::string> parts = Segments(request.path);
  // Which endpoint, and the methods it takes (405 names them).
  enum class Endpoint { kNone, kSubmit, kStatus, kEvents, kExport } endpoint = Endpoint::kNone;
  const bool under_runs = parts.size() >= 2 && parts[0] == "v1" && parts[1] == "runs";
  if ((under_runs && parts.size() == 2) || (parts.size() == 1 && parts[0] == "generate_kernel")) {
    endpoint = Endpoint::kSubmit;
  } else if (under_runs && parts.size() == 3) {
    endpoint = Endpoint::kStatus;
  } else if (under_runs && parts.size() == 4 && parts[3] == "events") {
    endpoint = Endpoint::kEvents;
  } else if (under_runs && parts.size() == 4 && parts[3] == "export") {
    endpoint = Endpoint::kExport;
  }
  if (endpoint == Endpoint::kNone) {
    return Error(absl::NotFoundError(fmt::format("no such endpoint: {} (the API: POST /v1/runs, GET /v1/runs/RUN, "
                                                 "GET /v1/runs/RUN/events, GET /v1/runs/RUN/export)",
                                                 request.path)),
                 where);
  }
  const bool submit = endpoint == Endpoint::kSubmit;
  const std::string allowed = submit ? "POST" : "GET, HEAD";
  if (submit ? request.method != "POST" : request.method != "GET" && request.method != "HEAD") {
    HttpReply reply = Error(absl::InvalidArgumentError(fmt::format("{} takes {}, not {}", request.path, allowed,
                                                                   request.method)),
                            where);
    reply.status = 405;
    reply.headers.emplace_back("Allow", allowed);
    return reply;
  }
  // The token before anything else: an unauthenticated caller learns nothing of runs or of its body.
  std::multimap<grpc::string_ref, grpc::string_ref> metadata;
  for (const std::string& value : request.authorization) metadata.emplace("authorization", value);
  const std::string method = endpoint == Endpoint::kSubmit   ? "SubmitRun"
                             : endpoint == Endpoint::kStatus ? "GetRunStatus"
                             : endpoint == Endpoint::kEvents ? "WatchRun"
                                                             : "ExportRun";
  if (absl::StatusOr<rpc::Role> role = tokens_->Authorize(metadata, kClientRoles, method); !role.ok()) {
    return Error(role.status(), where);
  }
  if (request.body.size() > options_.max_body_bytes) {  // the glue refuses these before reading them
    HttpReply reply = Error(absl::ResourceExhaustedError(fmt::format(
                                "request body of {} bytes, over the {} bytes allowed", request.body.size(),
                                options_.max_body_bytes)),
                            where);
    reply.status = 413;
    return reply;
  }
  if (endpoint == Endpoint::kSubmit) return Submit(request, where);
  const std::string& run = parts[2];
  if (endpoint == Endpoint::kEvents) return Events(request, run, where);
  if (endpoint == Endpoint::kStatus) {
    absl::StatusOr<v1::RunStatusResponse> status = runs_->Status(run);
    if (!status.ok()) return Error(status.status(), where);
    return Json(200, ProtoJson(*status));
  }
  absl::StatusOr<v1::ExportRunResponse> exported = runs_->Export(run);
  if (!exported.ok()) return Error(exported.status(), where);
  return Json(200, ProtoJson(*exported));
}

HttpReply HttpApi::Submit(const HttpRequest& request, const std::string& where) {
  json place{{"request", where}};
  absl::StatusOr<v1::SubmitRunRequest> submission = ParseSubmission(request.body, place);
  if (!submission.ok()) return ErrorAt(submission.status(), place);
  absl::StatusOr<v1::SubmitRunResponse> queued = runs_->Submit(*submission);
  if (!queued.ok()) {
    AddTaskErrorPlace(std::string(queued.status().message()), place);
    return ErrorAt(queued.status(), place);
  }
  HttpReply reply = Json(201, ProtoJson(*queued));
  reply.headers.emplace_back("Location", fmt::format("/v1/runs/{}", queued->run()));
  return reply;
}

HttpReply HttpApi::Events(const HttpRequest& request, const std::string& run, const std::string& where) {
  int64_t after = 0;
  if (auto it = request.query.find("after"); it != request.query.end()) {
    const std::string& text = it->second;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), after);
    if (ec != std::errc() || end != text.data() + text.size() || after < 0) {
      return ErrorAt(absl::InvalidArgumentError(fmt::format("after: '{}' is not a sequence number (0 or more)", text)),
                     json{{"request", where}, {"field", "after"}});
    }
  }
  if (absl::Status s = runs_->CheckRun(run); !s.ok()) return Error(s, where);
  // A place among the open streams, given back when the stream (held by the server's reply) goes.
  if (open_streams_->fetch_add(1) >= options_.max_streams) {
    open_streams_->fetch_sub(1);
    return Error(absl::ResourceExhaustedError(fmt::format("{} event streams are open, the most this coordinator "
                                                          "serves at once; try again later",
                                                          options_.max_streams)),
                 where);
  }
  // Given back when the stream's last line is written (before the server ends the reply, so a client that has
  // read the end may open another stream at once), or when the reply is dropped unstreamed.
  auto place = std::make_shared<StreamPlace>(open_streams_);
  HttpReply reply;
  reply.content_type = "application/x-ndjson";
  reply.stream = [this, run, after, where, place](const HttpWrite& write, const std::function<bool()>& gone) {
    const absl::Status ended = runs_->Watch(
        run, after, [&write](const v1::RunEvent& event) { return write(ProtoJson(event)); }, gone);
    if (!ended.ok() && !absl::IsCancelled(ended)) (void)write(Error(ended, where).body);
    place->GiveBack();
  };
  return reply;
}

}  // namespace sparseditto
