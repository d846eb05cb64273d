// The small algebra of the ProgramModel's affine forms (ProgramModel.h):
// reading and printing symbolic coefficients.
#include "cudal1/Frontend/ProgramModel.h"

using namespace cudal1;

std::optional<int64_t> SymbolicValue::constant() const {
  if (terms.empty())
    return 0;
  if (terms.size() == 1 && terms[0].symbols.empty())
    return terms[0].coeff;
  return std::nullopt;
}

std::optional<std::string> SymbolicValue::name() const {
  if (terms.size() == 1 && terms[0].coeff == 1 && terms[0].symbols.size() == 1)
    return terms[0].symbols[0];
  return std::nullopt;
}

std::string SymbolicValue::str() const {
  if (terms.empty())
    return "0";
  std::string s;
  for (const Monomial &m : terms) {
    int64_t c = m.coeff;
    if (s.empty())
      s = c < 0 ? "-" : "";
    else
      s += c < 0 ? " - " : " + ";
    uint64_t mag = c < 0 ? uint64_t(0) - uint64_t(c) : uint64_t(c);
    std::string factors;
    for (const std::string &f : m.symbols)
      factors += (factors.empty() ? "" : " * ") + f;
    if (factors.empty())
      s += std::to_string(mag);
    else
      s += mag == 1 ? factors : std::to_string(mag) + " * " + factors;
  }
  return s;
}

SymbolicValue LinearPart::coefficient(const std::string &var) const {
  for (const AffineTerm &t : terms)
    if (t.var == var)
      return t.coeff;
  return SymbolicValue();
}
