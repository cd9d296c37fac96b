#include "evaluator/compile/ptxas_report.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <regex>

#include "fmt/format.h"

namespace sparseditto {
namespace {

// "void ns::Kernel<float>(long, const int*)" -> "ns::Kernel<float>".
std::string ReadableKernelName(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !demangled) return mangled;  // extern "C" kernels are not mangled
  std::string name = demangled.get();
  if (!name.empty() && name.back() == ')') {
    int depth = 0;
    for (size_t i = name.size(); i-- > 0;) {
      if (name[i] == ')') ++depth;
      if (name[i] == '(' && --depth == 0) {
        name.resize(i);
        break;
      }
    }
  }
  if (name.rfind("void ", 0) == 0) name.erase(0, 5);
  return name;
}

int32_t ToInt(const std::string& digits) { return static_cast<int32_t>(std::strtol(digits.c_str(), nullptr, 10)); }

}  // namespace

std::vector<v1::KernelResources> ParsePtxasResources(std::string_view log) {
  static const std::regex kEntry(R"(Compiling entry function '([^']+)' for '([^']+)')");
  static const std::regex kProperties(R"(Function properties for (\S+))");
  static const std::regex kFrame(R"((\d+) bytes stack frame, (\d+) bytes spill stores)");
  static const std::regex kRegisters(R"(Used (\d+) registers)");
  static const std::regex kShared(R"((\d+) bytes smem)");

  std::vector<v1::KernelResources> records;
  std::string current_mangled;  // the entry the next lines describe; empty: none
  bool properties_are_current = false;
  size_t start = 0;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    const std::string_view view = log.substr(start, end - start);
    start = end + 1;
    if (view.find("ptxas") == std::string_view::npos && view.find("stack frame") == std::string_view::npos) {
      continue;  // std::regex is slow; most of a long log is not ptxas's
    }
    const std::string line(view);
    std::smatch m;
    if (std::regex_search(line, m, kEntry)) {
      current_mangled = m[1];
      v1::KernelResources& record = records.emplace_back();
      record.set_kernel_name(ReadableKernelName(current_mangled));
      record.set_arch(m[2]);
      properties_are_current = false;
    } else if (std::regex_search(line, m, kProperties)) {
      properties_are_current = !current_mangled.empty() && m[1] == current_mangled;
    } else if (std::regex_search(line, m, kFrame)) {
      if (properties_are_current) {
        records.back().set_stack_bytes(ToInt(m[1]));
        records.back().set_spill_bytes(ToInt(m[2]));
      }
      properties_are_current = false;
    } else if (!current_mangled.empty() && std::regex_search(line, m, kRegisters)) {
      records.back().set_registers(ToInt(m[1]));
      if (std::regex_search(line, m, kShared)) records.back().set_shared_bytes(ToInt(m[1]));
      current_mangled.clear();  // "Used" closes the entry's report
    }
  }
  return records;
}

std::string TrimLog(std::string_view log, size_t max_bytes) {
  if (log.size() <= max_bytes) return std::string(log);
  const size_t head = max_bytes / 4 * 3, tail = max_bytes / 4;
  return fmt::format("{}\n[... {} bytes of log cut ...]\n{}", log.substr(0, head), log.size() - head - tail,
                     log.substr(log.size() - tail));
}

}  // namespace sparseditto
