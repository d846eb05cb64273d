// The plan language: a tiny recursive-descent parser and its printer.
//   plan  := item (';' item)* [';']
//   item  := ['@' (NAME | '#' INT | ('loop' | 'sync') '#' INT) ':'] step
//   step  := NAME ['(' [param (',' param)*] ')']
//   param := NAME '=' VALUE            VALUE := [A-Za-z0-9_.x-]+
#include "cudal1/Rewrite/Plan.h"

#include "llvm/ADT/StringExtras.h"

#include <cctype>

using namespace cudal1;

std::optional<std::string> PlanStep::param(const std::string &name) const {
  for (const auto &[k, v] : params)
    if (k == name)
      return v;
  return std::nullopt;
}

std::optional<unsigned> PlanStep::uintParam(const std::string &name, unsigned lo,
                                            unsigned hi) const {
  std::optional<std::string> v = param(name);
  unsigned n = 0;
  if (!v || llvm::StringRef(*v).getAsInteger(10, n) || n < lo || n > hi)
    return std::nullopt;
  return n;
}

namespace {

class PlanParser {
public:
  explicit PlanParser(const std::string &text) : text(text) {}

  llvm::Expected<Plan> parse() {
    Plan plan;
    PlanScope scope;
    skip();
    while (pos < text.size()) {
      if (peek() == ';') { // empty item
        ++pos;
        skip();
        continue;
      }
      if (peek() == '@') {
        ++pos;
        if (peek() == '#') {
          ++pos;
          llvm::Expected<int> id = siteId("expected a launch id after '@#'", "launch id");
          if (!id)
            return id.takeError();
          scope = PlanScope{"", *id};
        } else {
          std::string name = ident(/*kebab=*/false);
          if (name.empty())
            return error("expected a kernel name or '#launch-id' after '@'");
          scope = PlanScope{name, -1};
          if (peek() == '#') { // a host site: @loop#N, @sync#N, @copy#N
            if (name != "loop" && name != "sync" && name != "copy")
              return error("expected 'loop', 'sync' or 'copy' before '#'");
            ++pos;
            llvm::Expected<int> id =
                siteId("expected an id after '@" + name + "#'", "@" + name + " id");
            if (!id)
              return id.takeError();
            scope = PlanScope{};
            (name == "loop" ? scope.loop : name == "sync" ? scope.sync : scope.copy) = *id;
          }
        }
        skip();
        if (!eat(':'))
          return error("expected ':' after the scope");
        skip();
      }
      PlanStep step;
      step.scope = scope;
      step.column = pos + 1;
      step.transform = ident(/*kebab=*/true);
      if (step.transform.empty())
        return error("expected a transform name");
      skip();
      if (eat('(')) {
        skip();
        if (!eat(')')) {
          while (true) {
            skip();
            std::string key = ident(/*kebab=*/true);
            if (key.empty())
              return error("expected a parameter name");
            skip();
            if (!eat('='))
              return error("expected '=' after parameter '" + key + "'");
            skip();
            std::string value = valueToken();
            if (value.empty())
              return error("expected a value for parameter '" + key + "'");
            if (step.param(key))
              return error("parameter '" + key + "' given twice");
            step.params.emplace_back(key, value);
            skip();
            if (eat(')'))
              break;
            if (!eat(','))
              return error("expected ',' or ')'");
          }
        }
      }
      plan.steps.push_back(std::move(step));
      skip();
      if (pos < text.size() && !eat(';'))
        return error("expected ';' between steps");
      skip();
    }
    if (plan.steps.empty())
      return error("the plan has no steps");
    return plan;
  }

private:
  const std::string &text;
  size_t pos = 0;

  char peek() const { return pos < text.size() ? text[pos] : '\0'; }
  void skip() {
    while (pos < text.size() && isspace((unsigned char)text[pos]))
      ++pos;
  }
  bool eat(char c) {
    if (peek() != c)
      return false;
    ++pos;
    return true;
  }
  std::string ident(bool kebab) {
    size_t start = pos;
    if (pos < text.size() && (isalpha((unsigned char)text[pos]) || text[pos] == '_'))
      ++pos;
    else
      return "";
    while (pos < text.size() &&
           (isalnum((unsigned char)text[pos]) || text[pos] == '_' || (kebab && text[pos] == '-')))
      ++pos;
    return text.substr(start, pos - start);
  }
  /// The decimal id after '#'. Ids index sites of one file, so anything
  /// above kMaxPlanId is refused here rather than overflowing an int.
  llvm::Expected<int> siteId(const std::string &missing, const std::string &what) {
    size_t start = pos;
    while (pos < text.size() && isdigit((unsigned char)text[pos]))
      ++pos;
    if (start == pos)
      return error(missing);
    llvm::StringRef digits = llvm::StringRef(text).slice(start, pos);
    unsigned long long v = 0;
    if (digits.getAsInteger(10, v) || v > (unsigned long long)kMaxPlanId) {
      pos = start;
      return error(what + " " + digits.str() + " is out of range (0 to " +
                   std::to_string(kMaxPlanId) + ")");
    }
    return int(v);
  }
  std::string valueToken() {
    size_t start = pos;
    while (pos < text.size() && (isalnum((unsigned char)text[pos]) || text[pos] == '_' ||
                                 text[pos] == '.' || text[pos] == '-'))
      ++pos;
    return text.substr(start, pos - start);
  }
  llvm::Error error(const std::string &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "plan:1:%zu: error: %s", pos + 1,
                                   msg.c_str());
  }
};

} // namespace

llvm::Expected<Plan> cudal1::parsePlan(const std::string &text) { return PlanParser(text).parse(); }

std::string cudal1::printPlan(const Plan &plan) {
  std::string out;
  PlanScope current;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep &s = plan.steps[i];
    if (i)
      out += "; ";
    if (!(s.scope == current)) {
      if (s.scope.launch >= 0)
        out += "@#" + std::to_string(s.scope.launch) + ": ";
      else if (s.scope.loop >= 0)
        out += "@loop#" + std::to_string(s.scope.loop) + ": ";
      else if (s.scope.sync >= 0)
        out += "@sync#" + std::to_string(s.scope.sync) + ": ";
      else if (s.scope.copy >= 0)
        out += "@copy#" + std::to_string(s.scope.copy) + ": ";
      else if (!s.scope.kernel.empty())
        out += "@" + s.scope.kernel + ": ";
      current = s.scope;
    }
    out += s.transform;
    if (!s.params.empty()) {
      out += "(";
      for (size_t j = 0; j < s.params.size(); ++j)
        out += (j ? ", " : "") + s.params[j].first + "=" + s.params[j].second;
      out += ")";
    }
  }
  return out;
}

std::optional<std::vector<unsigned>> cudal1::parseDims(const std::string &text) {
  llvm::SmallVector<llvm::StringRef, 3> parts;
  llvm::StringRef(text).split(parts, 'x');
  if (parts.empty() || parts.size() > 3)
    return std::nullopt;
  std::vector<unsigned> dims;
  for (llvm::StringRef p : parts) {
    unsigned v;
    // A block dimension is at most 1024 in CUDA; the bound also keeps the
    // product of three dimensions inside an unsigned (65536x65536 wrapped
    // to 0 threads and passed launch-config's 1024-thread check).
    if (p.getAsInteger(10, v) || v == 0 || v > kMaxDim)
      return std::nullopt;
    dims.push_back(v);
  }
  return dims;
}
