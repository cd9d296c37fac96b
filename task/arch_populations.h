// A task's target archs and the populations they are searched as (issue 25, item 9).
//
// A task that names several archs ("arch: [sm_80, sm_90a]") is searched as one population per arch: a
// task of its own named "<task>@<arch>" (PopulationName) whose arch list is that one arch, with its own
// store records, run state, budget and best, so that no time is ever compared across archs. Each
// population is a copy of the task (same seed, budget and mutators): the budget is per population. A
// task that names one arch (or none) is one population and keeps its name, so runs made before this
// split read back unchanged. '@' is reserved for these names: a task may hold it only as its own
// population's name, "<name>@<arch>" with <arch> its one arch (task_validation.cc; such a task is what
// a client submits when it names one population), and TaskNameProblem (run_paths.h) accepts
// "<name>@<arch>" only.
//
// A target arch is served by the GPU whose device arch ("sm_XY": the compute capability, as nvidia-smi
// and the runner report it) is the target's base (DeviceArchOf): "sm_90a" (the arch-specific features of
// that chip: wgmma, setmaxnreg) and "sm_100f" (a family) run on an sm_90 / sm_100 device.
//
// In distributed mode a population's jobs carry the platform EvaluationPlatform(device arch, GPU name)
// of the worker that set it up first, and only workers of that arch and GPU model pull them
// (coordinator/server/evaluation_work.h): a population is timed on one GPU model.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "task.pb.h"

namespace sparseditto {

// Between a task's name and an arch in a population's name.
inline constexpr char kPopulationSeparator = '@';

// The device arch that runs code built for `arch`: "sm_90a" -> "sm_90", "sm_100f" -> "sm_100",
// "sm_80" -> "sm_80". A trailing 'a' or 'f' after a digit is dropped; anything else is returned as is.
std::string DeviceArchOf(std::string_view arch);

// True for what an arch of a population's name may be: "sm_" then digits, then at most one 'a' or 'f'.
bool IsArchName(std::string_view arch);

// "<task>@<arch>".
std::string PopulationName(std::string_view task_name, std::string_view arch);

// Every task of `tasks`, in order, a task with several archs replaced by one task per arch, in the
// order of its arch list, named PopulationName(name, arch) with that arch only. Idempotent.
std::vector<v1::Task> SplitByArch(const std::vector<v1::Task>& tasks);

// True when a device of `device_arch` ("sm_90") serves some arch of `task` (DeviceArchOf), or when the
// task names none.
bool DeviceServesTask(const v1::Task& task, std::string_view device_arch);

// OK when DeviceServesTask; otherwise FailedPrecondition naming the task, its archs, the device's arch
// and `gpu_name` (when not empty), and where the population can be searched instead. The search refuses
// such a task rather than time it on a GPU of another arch.
absl::Status CheckDeviceServesTask(const v1::Task& task, std::string_view device_arch, std::string_view gpu_name);

// The platform a population's evaluation jobs carry, and a worker pulls with: "<device arch>/<GPU
// name>", e.g. "sm_90/NVIDIA H200" for an sm_90 or sm_90a worker of that model. Compared whole: a job is
// pulled only by a worker of the same device arch and GPU model. An empty GPU name (a worker that could
// not read it) is a model of its own.
std::string EvaluationPlatform(std::string_view arch, std::string_view gpu_name);

// For people: "NVIDIA H200 (sm_90)" for "sm_90/NVIDIA H200"; "an unnamed GPU (sm_90)" for "sm_90/".
std::string DescribePlatform(std::string_view platform);

}  // namespace sparseditto
