// A strict well-formedness check of XML text, for tests of generated files (the SVG plots): no XML
// library is a dependency of the project. Test code only.
#pragma once

#include <cctype>
#include <set>
#include <string>
#include <vector>

namespace sparseditto::testing {

// A strict check that `text` is well-formed XML (prolog, one root, balanced tags, quoted attributes
// without '<', entity references only of the five predefined or numeric ones); "" when it is.
inline std::string XmlProblem(const std::string& text) {
  size_t i = 0;
  std::vector<std::string> open;
  int roots = 0;
  auto entity_ok = [&](size_t at) {
    const size_t end = text.find(';', at);
    if (end == std::string::npos) return false;
    const std::string name = text.substr(at + 1, end - at - 1);
    static const std::set<std::string> named = {"amp", "lt", "gt", "quot", "apos"};
    return named.contains(name) || (name.size() > 1 && name[0] == '#');
  };
  auto is_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '-' || c == '.'; };
  if (text.rfind("<?xml", 0) == 0) i = text.find("?>") + 2;
  while (i < text.size()) {
    if (text[i] != '<') {
      if (text[i] == '&' && !entity_ok(i)) return "bad entity at " + std::to_string(i);
      if (open.empty() && !std::isspace(static_cast<unsigned char>(text[i]))) return "text outside the root";
      ++i;
      continue;
    }
    if (text.compare(i, 4, "<!--") == 0) {
      i = text.find("-->", i);
      if (i == std::string::npos) return "unclosed comment";
      i += 3;
      continue;
    }
    const bool closing = text[i + 1] == '/';
    size_t j = i + (closing ? 2 : 1);
    const size_t name_start = j;
    while (j < text.size() && is_name(text[j])) ++j;
    const std::string name = text.substr(name_start, j - name_start);
    if (name.empty()) return "a tag without a name at " + std::to_string(i);
    std::set<std::string> attributes;
    while (j < text.size() && text[j] != '>' && text[j] != '/') {
      while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (text[j] == '>' || text[j] == '/') break;
      if (closing) return "attributes on a closing tag";
      const size_t a = j;
      while (j < text.size() && is_name(text[j])) ++j;
      const std::string attribute = text.substr(a, j - a);
      if (attribute.empty() || j + 1 >= text.size() || text[j] != '=' || (text[j + 1] != '"' && text[j + 1] != '\'')) {
        return "malformed attribute at " + std::to_string(a);
      }
      if (!attributes.insert(attribute).second) return "attribute " + attribute + " twice";
      const char quote = text[j + 1];
      const size_t end = text.find(quote, j + 2);
      if (end == std::string::npos) return "unclosed attribute value";
      for (size_t k = j + 2; k < end; ++k) {
        if (text[k] == '<') return "'<' in an attribute value";
        if (text[k] == '&' && !entity_ok(k)) return "bad entity in an attribute value";
      }
      j = end + 1;
    }
    const bool empty = j < text.size() && text[j] == '/';
    if (empty) ++j;
    if (j >= text.size() || text[j] != '>') return "unclosed tag " + name;
    if (closing) {
      if (open.empty() || open.back() != name) return "</" + name + "> does not close the open element";
      open.pop_back();
    } else {
      if (open.empty() && ++roots > 1) return "more than one root";
      if (!empty) open.push_back(name);
    }
    i = j + 1;
  }
  if (!open.empty()) return "unclosed element " + open.back();
  return roots == 1 ? "" : "no root element";
}

}  // namespace sparseditto::testing
