// The parts of the report page (html_report.h), one function per section of a task. Internal to
// report/. Each returns HTML with every text from the store escaped. Thread-safety: pure functions.
#pragma once

#include <string>

#include "report/html_report.h"
#include "report/run_facts.h"

namespace sparseditto::report {

// A double as data-* attributes and the JSON carry it: the shortest text that reads back the same.
std::string DataNumber(double v);

std::string SummarySection(const TaskFacts& t);
std::string FitnessSection(const TaskFacts& t);
std::string LineageSection(const TaskFacts& t, const ReportOptions& options);
std::string PerNSection(const TaskFacts& t);
std::string FailuresSection(const TaskFacts& t, const ReportOptions& options);
std::string DiffsSection(const TaskFacts& t, const ReportOptions& options);

}  // namespace sparseditto::report
