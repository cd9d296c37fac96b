#include "task/mutator_file.h"

#include "common/status_macros.h"
#include "fmt/format.h"
#include "task/task_parse.h"
#include "task/task_validation.h"
#include "task/yaml_fields.h"
#include "yaml-cpp/yaml.h"

namespace sparseditto {
namespace {

using task_internal::Field;
using task_internal::Fields;
using task_internal::FieldError;
using task_internal::ParseContext;
using task_internal::PosOf;
using task_internal::SourceMap;

constexpr std::string_view kFileKeys[] = {"mutators"};

absl::StatusOr<std::vector<v1::MutatorSpec>> ParseRoot(const YAML::Node& root, const std::string& file) {
  if (!root.IsMap()) return FieldError(file, PosOf(root.Mark()), "", "expected a mapping with `mutators:`");
  SourceMap sources;
  ParseContext ctx{file, &sources};
  Fields top(&ctx, "", {{root, ""}});
  sources.Record("", top.pos(), "");
  SD_RETURN_IF_ERROR(top.CheckKeys(kFileKeys));
  const std::optional<Field> list = top.Get("mutators");
  if (!list) return FieldError(file, top.pos(), "mutators", "required field missing (a list of mutators)");
  SD_ASSIGN_OR_RETURN(std::vector<Field> items, task_internal::ReadList(ctx, *list, /*scalar_as_list=*/false));
  google::protobuf::RepeatedPtrField<v1::MutatorSpec> specs;
  for (const Field& item : items) {
    SD_ASSIGN_OR_RETURN(Fields mutator, task_internal::ReadMap(ctx, item));
    SD_RETURN_IF_ERROR(task_internal::ParseMutator(ctx, mutator, specs.Add()));
  }
  SD_RETURN_IF_ERROR(task_internal::ValidateMutatorFields(specs, sources, file));
  return std::vector<v1::MutatorSpec>(specs.begin(), specs.end());
}

}  // namespace

absl::StatusOr<std::vector<v1::MutatorSpec>> ParseMutatorsYaml(std::string_view yaml, const std::string& file_name) {
  try {
    const std::vector<YAML::Node> docs = YAML::LoadAll(std::string(yaml));
    if (docs.empty() || (docs.size() == 1 && docs[0].IsNull())) {
      return FieldError(file_name, {}, "", "empty mutator file: expected `mutators:` with a list");
    }
    if (docs.size() > 1) return FieldError(file_name, PosOf(docs[1].Mark()), "", "several YAML documents ('---')");
    return ParseRoot(docs[0], file_name);
  } catch (const YAML::Exception& e) {
    return FieldError(file_name, PosOf(e.mark), "", fmt::format("YAML syntax error: {}", e.msg));
  } catch (const std::exception& e) {
    return absl::InternalError(fmt::format("{}: unexpected error while parsing: {}", file_name, e.what()));
  }
}

absl::StatusOr<std::vector<v1::MutatorSpec>> LoadMutatorsFile(const std::string& path) {
  SD_ASSIGN_OR_RETURN(std::string contents, task_internal::ReadYamlFile(path, "mutator file"));
  return ParseMutatorsYaml(contents, path);
}

}  // namespace sparseditto
