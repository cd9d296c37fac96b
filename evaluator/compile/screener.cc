#include "evaluator/compile/screener.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "evaluator/compile/screen_rules.h"
#include "fmt/format.h"

namespace sparseditto {
namespace {

using Kind = SourceToken::Kind;

// What a macro's body carries, transitively through the macros it names.
struct MacroTraits {
  bool has_asm = false;
  bool device = false;  // __device__ or __global__
  bool host = false;    // __host__
};

// The kind of brace a '{' opens, and for function bodies what the declaration said.
struct Scope {
  enum class Kind { kNamespace, kClass, kFunction, kOther };
  Kind kind = Kind::kOther;
  bool device = false;
  bool host = false;
  std::string name;  // kNamespace: its (last) name; empty for an anonymous one
};

// #if nesting, as far as __CUDA_ARCH__ is concerned.
enum class Region { kNeutral, kDeviceOnly, kHostOnly };

class Screener {
 public:
  explicit Screener(std::vector<SourceToken> tokens) : tokens_(std::move(tokens)) {}

  std::vector<ScreenFinding> Run() {
    for (size_t i = 0; i < tokens_.size();) {
      if (tokens_[i].directive >= 0) {
        size_t end = i;
        while (end < tokens_.size() && tokens_[end].directive == tokens_[i].directive) ++end;
        HandleDirective(i, end);
        i = end;
      } else {
        HandleCode(i);
        ++i;
      }
    }
    return std::move(findings_);
  }

 private:
  void Refuse(int line, std::string message) { findings_.push_back({line, std::move(message)}); }
  void RefuseToken(size_t i, std::string_view what, std::string_view reason) {
    Refuse(tokens_[i].line, fmt::format("{} is not allowed in a candidate ({})", what, reason));
  }

  const SourceToken* At(size_t i) const { return i < tokens_.size() ? &tokens_[i] : nullptr; }
  bool PunctAt(size_t i, std::string_view p) const { return At(i) && At(i)->IsPunct(p); }

  size_t MatchClose(size_t open, std::string_view opener, std::string_view closer) const {
    return MatchingClose(tokens_, open, opener, closer);
  }
  std::vector<std::pair<size_t, size_t>> CallArguments(size_t open) const { return CallArgumentRanges(tokens_, open); }

  // Joined contents of a run of string literals, or nullopt if [begin, end) holds anything else.
  std::optional<std::string> LiteralText(size_t begin, size_t end) const {
    std::string text;
    for (size_t i = begin; i < end; ++i) {
      if (tokens_[i].kind != Kind::kString) return std::nullopt;
      text += tokens_[i].text;
    }
    return begin < end ? std::optional<std::string>(text) : std::nullopt;
  }

  // member.name, pointer->name and other_namespace::name do not name the libc function.
  bool IsMemberOrForeignQualified(size_t i) const {
    if (i == 0 || tokens_[i - 1].directive != tokens_[i].directive) return false;
    const SourceToken& prev = tokens_[i - 1];
    if (prev.IsPunct(".") || prev.IsPunct("->")) return true;
    if (!prev.IsPunct("::") || i < 2) return false;
    const SourceToken& qualifier = tokens_[i - 2];
    // `return ::system(...)`, `using ::popen;`: a keyword before :: is no namespace; the name is global.
    return qualifier.kind == Kind::kIdentifier && !IsExpressionKeyword(qualifier.text) &&
           !std_like_.count(qualifier.text) && qualifier.directive == prev.directive;
  }

  // The first name of the qualified name starting at `k` (a leading :: skipped), or "".
  std::string FirstQualifier(size_t k) const {
    if (PunctAt(k, "::")) ++k;
    return At(k) && At(k)->kind == Kind::kIdentifier ? At(k)->text : "";
  }

  // `namespace X = std...;` makes X stand for std (s::system is std::system); so does a using-directive
  // or using-declaration of std inside namespace X (X::system then finds std::system). Names of the
  // candidate's own namespaces otherwise stay foreign qualifiers, like thrust:: and cub::.
  void TrackNamespaceAliases(size_t i) {
    const SourceToken& t = tokens_[i];
    if (t.IsIdentifier("namespace") && At(i + 1) && At(i + 1)->kind == Kind::kIdentifier && PunctAt(i + 2, "=")) {
      if (std_like_.count(FirstQualifier(i + 3))) std_like_.insert(At(i + 1)->text);
      return;
    }
    if (!t.IsIdentifier("using")) return;
    const size_t target = At(i + 1) && At(i + 1)->IsIdentifier("namespace") ? i + 2 : i + 1;
    // `using std::system;`, `using ::popen;`, `using namespace s;` (s an alias of std) all bring a
    // libc name into the namespace; `using T = int;` (an alias declaration) brings none.
    if (PunctAt(i + 2, "=")) return;
    if (!PunctAt(target, "::") && !std_like_.count(FirstQualifier(target))) return;
    for (const Scope& scope : scopes_) {
      if (scope.kind == Scope::Kind::kNamespace && !scope.name.empty()) std_like_.insert(scope.name);
    }
  }

  // `int kill = 0;`, `bool signal;`, `void H(int signal)`: a new variable that shadows the name, not a
  // use of it. A declaration with `extern` (extern char** environ;) still refers to the real thing.
  bool IsShadowingVariable(size_t i) const {
    if (i == 0 || tokens_[i - 1].directive >= 0 || !At(i + 1)) return false;
    const SourceToken& next = tokens_[i + 1];
    size_t type = i - 1;  // skip declarator punctuation back to the type: int* const& name
    while (type > 0 && (tokens_[type].IsPunct("*") || tokens_[type].IsPunct("&") || tokens_[type].IsIdentifier("const"))) {
      --type;
    }
    const SourceToken& type_token = tokens_[type];
    const bool after_type =
        type_token.IsPunct(">") || (type_token.kind == Kind::kIdentifier && !IsExpressionKeyword(type_token.text));
    if (!after_type || type_token.directive >= 0) return false;
    if (!(next.IsPunct(";") || next.IsPunct("=") || next.IsPunct("{") || next.IsPunct(",") || next.IsPunct("[") ||
          next.IsPunct(")"))) {
      return false;
    }
    for (size_t k = i; k-- > 0 && tokens_[k].directive < 0;) {
      if (tokens_[k].IsPunct(";") || tokens_[k].IsPunct("{") || tokens_[k].IsPunct("}")) break;
      if (tokens_[k].IsIdentifier("extern")) return false;
    }
    return true;
  }

  void CheckIdentifier(size_t i, bool in_code) {
    const SourceToken& t = tokens_[i];
    const bool call = PunctAt(i + 1, "(");
    if (IsAsmKeyword(t.text) || (in_code && macros_.count(t.text) && macros_[t.text].has_asm)) {
      if (in_code) CheckAsmContext(i);
      return;
    }
    if (t.text == "__attribute__" || t.text == "__attribute") return CheckAttributes(i + 1, MatchClose(i + 1, "(", ")"));
    if (IsMemberOrForeignQualified(i) || (in_code && IsShadowingVariable(i))) return;
    if (in_code && call && IsCudaName(t.text) && IsFunctionDefinition(i + 1)) {
      return RefuseToken(i, fmt::format("definition of {}()", t.text),
                         "it would interpose on a CUDA runtime/driver symbol; pick another name");
    }
    if (const BannedName* banned = FindBannedName(t.text)) {
      const std::vector<std::pair<size_t, size_t>> args = call ? CallArguments(i + 1) : decltype(args){};
      if (banned->calls_only && !call) return;
      if (banned->only_with_arguments >= 0 && static_cast<int>(args.size()) != banned->only_with_arguments) return;
      return RefuseToken(i, call ? fmt::format("call to {}()", t.text) : fmt::format("use of {}", t.text),
                         banned->reason);
    }
    if (IsFopenName(t.text)) return CheckFopen(i, call);
    if (IsOpenName(t.text)) return CheckOpen(i, call);
  }

  void CheckFopen(size_t i, bool call) {
    const std::string& name = tokens_[i].text;
    if (!call) return RefuseToken(i, fmt::format("use of {} other than a call", name), "file-system writes");
    const auto args = CallArguments(i + 1);
    if (args.size() < 2) return;
    const std::optional<std::string> mode = LiteralText(args[1].first, args[1].second);
    if (!mode) return RefuseToken(i, fmt::format("{}() with a mode that is not a string literal", name), "file-system writes");
    if (mode->find_first_of("wa+") != std::string::npos) {
      RefuseToken(i, fmt::format("{}() with mode \"{}\"", name, *mode), "file-system writes");
    }
  }

  void CheckOpen(size_t i, bool call) {
    const std::string& name = tokens_[i].text;
    if (!call) return RefuseToken(i, fmt::format("use of {} other than a call", name), "file-system writes");
    const auto args = CallArguments(i + 1);
    const size_t flags_index = name == "openat" ? 2 : 1;
    if (args.size() <= flags_index) return;
    for (size_t k = args[flags_index].first; k < args[flags_index].second; ++k) {
      const SourceToken& f = tokens_[k];
      if (f.IsPunct("|") || f.Is(Kind::kNumber, "0") || (f.kind == Kind::kIdentifier && IsReadOnlyOpenFlag(f.text))) continue;
      return RefuseToken(i, fmt::format("{}() with flags other than O_RDONLY-like constants", name), "file-system writes");
    }
  }

  // Attribute names between tokens (begin, end); gnu::constructor and __constructor__ count too.
  void CheckAttributes(size_t begin, size_t end) {
    for (size_t k = begin; k < end && k < tokens_.size(); ++k) {
      if (tokens_[k].kind != Kind::kIdentifier) continue;
      std::string_view name = tokens_[k].text;
      if (name.size() > 4 && name.starts_with("__") && name.ends_with("__")) name = name.substr(2, name.size() - 4);
      if (IsRefusedAttribute(name)) {
        RefuseToken(k, fmt::format("attribute '{}'", name), "code that runs at load time or symbol aliasing");
      }
    }
  }

  // After the ')' of `name(...)`: only qualifiers, attributes and a trailing return type lead to '{'.
  bool IsFunctionDefinition(size_t open) const {
    size_t i = MatchClose(open, "(", ")");
    if (i == std::string::npos) return false;
    for (++i; i < tokens_.size() && tokens_[i].directive < 0; ++i) {
      const SourceToken& t = tokens_[i];
      if (t.IsPunct("{") || t.IsIdentifier("try")) return true;
      if (t.IsPunct("(")) {
        i = MatchClose(i, "(", ")");
        if (i == std::string::npos) return false;
      } else if (t.kind != Kind::kIdentifier && t.kind != Kind::kNumber && !t.IsPunct("->") && !t.IsPunct("::") &&
                 !t.IsPunct("*") && !t.IsPunct("&") && !t.IsPunct("<") && !t.IsPunct(">") && !t.IsPunct("[") &&
                 !t.IsPunct("]")) {
        return false;
      }
    }
    return false;
  }

  bool InDeviceRegion() const {
    return std::any_of(regions_.begin(), regions_.end(), [](Region r) { return r == Region::kDeviceOnly; });
  }

  void CheckAsmContext(size_t i) {
    if (InDeviceRegion()) return;
    const Scope* function = nullptr;
    if (!scopes_.empty() && scopes_.back().kind == Scope::Kind::kFunction) function = &scopes_.back();
    if (function && function->device && !function->host) return;
    if (function && function->device) {
      return RefuseToken(i, "inline asm in a __host__ __device__ function outside #ifdef __CUDA_ARCH__",
                         "host code must not run asm");
    }
    RefuseToken(i, "inline asm outside a __device__ or __global__ function", "host code must not run asm");
  }

  // Classifies the '{' at `open` from the declaration tokens since the last ';', '{' or '}'.
  Scope ClassifyBrace(size_t open) const {
    if (!scopes_.empty() && scopes_.back().kind == Scope::Kind::kFunction) return scopes_.back();
    Scope scope;
    size_t first_class_key = std::string::npos, first_paren = std::string::npos;
    bool has_initializer = false;
    int paren_depth = 0;
    for (size_t k = declaration_start_; k < open; ++k) {
      const SourceToken& t = tokens_[k];
      if (t.directive >= 0) continue;
      if (t.IsIdentifier("namespace")) {
        Scope ns;
        ns.kind = Scope::Kind::kNamespace;
        for (size_t n = k + 1; n < open && tokens_[n].kind == Kind::kIdentifier; n += 2) {  // a::b: b
          ns.name = tokens_[n].text;
          if (!PunctAt(n + 1, "::")) break;
        }
        return ns;
      }
      // `x = ...` starts an initialiser; an `=` inside parentheses (a default argument) or in `operator=`
      // does not.
      if (t.IsPunct("=") && paren_depth == 0 && !(k > 0 && tokens_[k - 1].IsIdentifier("operator"))) has_initializer = true;
      if (t.IsPunct("(")) ++paren_depth;
      if (t.IsPunct(")") && paren_depth > 0) --paren_depth;
      if (t.IsPunct("(") && first_paren == std::string::npos) first_paren = k;
      if (first_class_key == std::string::npos &&
          (t.IsIdentifier("class") || t.IsIdentifier("struct") || t.IsIdentifier("union") || t.IsIdentifier("enum"))) {
        first_class_key = k;
      }
      if (t.kind != Kind::kIdentifier) continue;
      // __device__ is spelled __attribute__((device)) once preprocessed.
      const bool in_attribute = k >= 2 && tokens_[k - 1].IsPunct("(") && tokens_[k - 2].IsPunct("(");
      const bool device = t.text == "__device__" || t.text == "__global__" ||
                          (in_attribute && (t.text == "device" || t.text == "global"));
      MacroTraits traits{false, device, t.text == "__host__" || (in_attribute && t.text == "host")};
      if (auto m = macros_.find(t.text); m != macros_.end()) traits = m->second;
      scope.device |= traits.device;
      scope.host |= traits.host;
    }
    if (first_class_key != std::string::npos && first_class_key < first_paren) return Scope{Scope::Kind::kClass, false, false, ""};
    if (has_initializer || first_paren == std::string::npos) return Scope{Scope::Kind::kOther, false, false, ""};
    scope.kind = Scope::Kind::kFunction;
    return scope;
  }

  void HandleCode(size_t i) {
    const SourceToken& t = tokens_[i];
    if (t.IsPunct("{")) {
      scopes_.push_back(ClassifyBrace(i));
      declaration_start_ = i + 1;
    } else if (t.IsPunct("}")) {
      if (!scopes_.empty()) scopes_.pop_back();
      declaration_start_ = i + 1;
    } else if (t.IsPunct(";")) {
      if (scopes_.empty() || scopes_.back().kind != Scope::Kind::kFunction) declaration_start_ = i + 1;
    } else if (t.IsPunct("[") && PunctAt(i + 1, "[")) {
      CheckAttributes(i + 2, MatchClose(i, "[", "]"));
    } else if (t.kind == Kind::kIdentifier) {
      TrackNamespaceAliases(i);
      CheckIdentifier(i, /*in_code=*/true);
    } else if (t.kind == Kind::kString && (i == 0 || tokens_[i - 1].kind != Kind::kString)) {
      CheckStrings(i);
    }
  }

  void CheckStrings(size_t i) {
    std::string joined;
    for (size_t k = i; k < tokens_.size() && tokens_[k].kind == Kind::kString; ++k) joined += tokens_[k].text;
    if (joined.find("/proc/") != std::string::npos || joined.ends_with("/proc")) {
      RefuseToken(i, fmt::format("string \"{}\"", joined.substr(0, 80)), "reads of /proc");
    } else if (joined.find("/environ") != std::string::npos) {
      RefuseToken(i, fmt::format("string \"{}\"", joined.substr(0, 80)), "reading the environment");
    }
  }

  void HandleDirective(size_t begin, size_t end) {
    const SourceToken* name = begin + 1 < end ? &tokens_[begin + 1] : nullptr;
    if (name != nullptr && (name->kind == Kind::kNumber || name->IsIdentifier("line"))) {
      return RefuseToken(begin, "a #line directive or line marker", "it would make the candidate's code look like a header's");
    }
    if (name == nullptr || name->kind != Kind::kIdentifier) return;
    const std::string& directive = name->text;
    if (directive == "include" || directive == "include_next" || directive == "import") {
      return CheckInclude(begin, end);
    }
    if (directive == "define" && begin + 2 < end) return HandleDefine(begin + 2, end);
    if (directive == "undef" && begin + 2 < end) macros_.erase(tokens_[begin + 2].text);
    if (directive == "if" || directive == "ifdef" || directive == "ifndef") {
      regions_.push_back(ConditionRegion(directive, begin + 2, end));
    } else if (directive == "elif" && !regions_.empty()) {
      regions_.back() = ConditionRegion("if", begin + 2, end);
    } else if (directive == "else" && !regions_.empty()) {
      regions_.back() = regions_.back() == Region::kHostOnly ? Region::kDeviceOnly : Region::kNeutral;
    } else if (directive == "endif" && !regions_.empty()) {
      regions_.pop_back();
    }
  }

  // kDeviceOnly when the condition requires __CUDA_ARCH__ (no '!' and no '||'); kHostOnly for
  // #ifndef __CUDA_ARCH__ and #if !defined(__CUDA_ARCH__).
  Region ConditionRegion(const std::string& directive, size_t begin, size_t end) const {
    bool mentions_arch = false, negated = false, disjunction = false;
    for (size_t k = begin; k < end; ++k) {
      mentions_arch |= tokens_[k].IsIdentifier("__CUDA_ARCH__");
      negated |= tokens_[k].IsPunct("!");
      disjunction |= tokens_[k].IsPunct("||");
    }
    if (!mentions_arch || disjunction) return Region::kNeutral;
    if (directive == "ifndef") return end - begin == 1 ? Region::kHostOnly : Region::kNeutral;
    if (directive == "ifdef") return Region::kDeviceOnly;
    if (!negated) return Region::kDeviceOnly;
    const bool plain_not_defined = end - begin >= 3 && tokens_[begin].IsPunct("!") &&
                                   tokens_[begin + 1].IsIdentifier("defined") && end - begin <= 5;
    return plain_not_defined ? Region::kHostOnly : Region::kNeutral;
  }

  void CheckInclude(size_t begin, size_t end) {
    const SourceToken& directive = tokens_[begin + 1];
    if (directive.text == "include_next") return RefuseToken(begin, "#include_next", "only the toolkit's headers");
    if (begin + 2 >= end) return;
    const SourceToken& target = tokens_[begin + 2];
    if (target.kind == Kind::kString) {
      if (target.text != "sparseditto_kernel.h") {
        RefuseToken(begin, fmt::format("#include \"{}\"", target.text),
                    "a candidate is one file; only \"sparseditto_kernel.h\" is included with quotes");
      }
      return;
    }
    if (target.kind != Kind::kHeaderName) return RefuseToken(begin, "a computed #include", "only literal header names");
    if (target.text.starts_with("/") || target.text.find("..") != std::string::npos) {
      return RefuseToken(begin, fmt::format("#include <{}>", target.text), "include paths outside the toolkit");
    }
    if (const char* reason = RefusedHeaderReason(target.text)) {
      RefuseToken(begin, fmt::format("#include <{}>", target.text), reason);
    }
  }

  void HandleDefine(size_t name_index, size_t end) {
    const std::string& name = tokens_[name_index].text;
    MacroTraits traits;
    for (size_t k = name_index + 1; k < end; ++k) {
      const SourceToken& t = tokens_[k];
      if (t.IsPunct("##")) RefuseToken(k, "token pasting (##) in a macro", "it can assemble refused names");
      if (t.kind == Kind::kString && tokens_[k - 1].kind != Kind::kString) CheckStrings(k);
      if (t.kind != Kind::kIdentifier) continue;
      traits.has_asm |= IsAsmKeyword(t.text);
      traits.device |= t.text == "__device__" || t.text == "__global__";
      traits.host |= t.text == "__host__";
      if (auto m = macros_.find(t.text); m != macros_.end()) {
        traits.has_asm |= m->second.has_asm;
        traits.device |= m->second.device;
        traits.host |= m->second.host;
      }
      if (!IsAsmKeyword(t.text)) CheckIdentifier(k, /*in_code=*/false);
    }
    macros_[name] = traits;
  }

  std::vector<SourceToken> tokens_;
  std::vector<ScreenFinding> findings_;
  std::map<std::string, MacroTraits> macros_;
  std::set<std::string> std_like_ = {"std"};  // std and the names that stand for it
  std::vector<Scope> scopes_;
  std::vector<Region> regions_;
  size_t declaration_start_ = 0;
};

}  // namespace

std::vector<ScreenFinding> RunScreener(std::vector<SourceToken> tokens) { return Screener(std::move(tokens)).Run(); }

}  // namespace sparseditto
