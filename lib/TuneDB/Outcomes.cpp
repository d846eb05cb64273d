#include "Outcomes.h"
#include "cudal1/Eval/Results.h"

bool cudal1::isEvaluatorOutcome(const std::string &name) {
  Outcome o;
  return parseOutcome(name, o);
}
