// Error propagation for absl::Status / absl::StatusOr, the one error type of the project.
// Errors are returned, never thrown across modules.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define SD_CONCAT_INNER_(a, b) a##b
#define SD_CONCAT_(a, b) SD_CONCAT_INNER_(a, b)

// Returns the status from the enclosing function if `expr` is not OK.
#define SD_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    ::absl::Status sd_status_ = (expr);           \
    if (!sd_status_.ok()) return sd_status_;      \
  } while (0)

// `lhs = value of expr`, or returns its status from the enclosing function.
#define SD_ASSIGN_OR_RETURN(lhs, expr) \
  SD_ASSIGN_OR_RETURN_IMPL_(SD_CONCAT_(sd_statusor_, __LINE__), lhs, expr)
#define SD_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return std::move(tmp).status();  \
  lhs = std::move(tmp).value()
