// The policy's model: deterministic scores, a bit-identical save/load round
// trip, and every way a model directory can be unusable, each with its
// reason. Skipped in a build without libtorch (where loading is refused,
// which the first test checks).
#include "cudal1/Policy/Policy.h"

#include "PolicyTestUtil.h"
#include "Torch/Network.h" // lib/Policy: the network behind Policy (tests only)

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

using namespace cudal1;
using namespace cudal1::test;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    llvm::SmallString<128> p;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("cudal1-policy-test", p));
    path = std::string(p);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(path); }
  std::string file(const char *name) const { return path + "/" + name; }
};

EncodingSchema smallSchema() {
  static std::vector<KernelState> ks = {kernelState("a", 0, 0), kernelState("b", 2, 0.5)};
  std::vector<const KernelState *> ptrs = {&ks[0], &ks[1]};
  std::vector<std::vector<PlanStep>> plans;
  for (const PlanStep &s : ks[0].steps)
    plans.push_back({s});
  return fitSchema(ptrs, plans, 1);
}

std::vector<Plan> somePlans(const KernelState &k) {
  std::vector<Plan> out;
  for (const PlanStep &s : k.steps)
    out.push_back(Plan{{s}});
  out.push_back(Plan{{k.steps[0], k.steps[2]}});
  return out;
}

std::string errorOf(llvm::Expected<std::unique_ptr<Policy>> p) {
  if (p)
    return "";
  return llvm::toString(p.takeError());
}

void writeFile(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

#define REQUIRE_TORCH()                                                                            \
  if (!policyBackendAvailable())                                                                   \
  GTEST_SKIP() << "built without libtorch"

TEST(Policy, CreateWorksOrSaysWhyNot) {
  llvm::Expected<std::unique_ptr<Policy>> p = Policy::create(smallSchema(), 16, 1);
  if (policyBackendAvailable()) {
    ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  } else {
    ASSERT_FALSE(bool(p));
    EXPECT_NE(llvm::toString(p.takeError()).find("without libtorch"), std::string::npos);
  }
}

TEST(Policy, ScoresAreDeterministicAndSaneInRange) {
  REQUIRE_TORCH();
  auto p1 = Policy::create(smallSchema(), 32, 7), p2 = Policy::create(smallSchema(), 32, 7);
  ASSERT_TRUE(p1 && p2);
  KernelState k = kernelState("a", 0, 0);
  Exemplar e;
  e.steps = {k.steps[1]};
  e.measured.outcome = Outcome::Ok;
  e.measured.timed = true;
  e.measured.speedup = 1.3;
  k.exemplars = {e};
  auto s1 = (*p1)->score(k, somePlans(k)), s1again = (*p1)->score(k, somePlans(k)),
       s2 = (*p2)->score(k, somePlans(k));
  ASSERT_TRUE(s1 && s1again && s2);
  ASSERT_EQ(s1->size(), somePlans(k).size());
  for (size_t i = 0; i < s1->size(); ++i) {
    // The same seed gives the same network; the same call the same bits.
    EXPECT_EQ((*s1)[i].logSpeedup, (*s1again)[i].logSpeedup);
    EXPECT_EQ((*s1)[i].logSpeedup, (*s2)[i].logSpeedup);
    EXPECT_GT((*s1)[i].uncertainty, 0);
    EXPECT_GT((*s1)[i].verifyProbability, 0);
    EXPECT_LT((*s1)[i].verifyProbability, 1);
  }
  auto other = Policy::create(smallSchema(), 32, 8);
  ASSERT_TRUE(bool(other));
  EXPECT_NE((*(*other)->score(k, somePlans(k)))[0].logSpeedup, (*s1)[0].logSpeedup);
}

TEST(Policy, ThePriorPullsWhatTheNetworkDoesNotKnowTowardNoChange) {
  REQUIRE_TORCH();
  TempDir dir;
  auto p = Policy::create(smallSchema(), 32, 7);
  ASSERT_TRUE(bool(p));
  KernelState k = kernelState("a", 0, 0);
  (*p)->info().priorSd = 0;
  auto bare = (*p)->score(k, somePlans(k));
  (*p)->info().priorSd = 0.5;
  auto withPrior = (*p)->score(k, somePlans(k));
  ASSERT_TRUE(bare && withPrior);
  for (size_t i = 0; i < bare->size(); ++i) {
    const PlanScore &b = (*bare)[i], &w = (*withPrior)[i];
    // Without a prior the score is the network's own.
    EXPECT_EQ(b.logSpeedup, b.networkLogSpeedup);
    EXPECT_EQ(b.uncertainty, b.networkUncertainty);
    EXPECT_EQ(w.networkLogSpeedup, b.networkLogSpeedup);
    // With it: the precision-weighted mean of 0 (prior) and the network's.
    double var = b.networkUncertainty * b.networkUncertainty;
    EXPECT_NEAR(w.logSpeedup, b.networkLogSpeedup * 0.25 / (0.25 + var), 1e-9);
    EXPECT_NEAR(w.uncertainty, std::sqrt(0.25 * var / (0.25 + var)), 1e-9);
    EXPECT_LT(std::fabs(w.logSpeedup), std::fabs(b.networkLogSpeedup) + 1e-12);
    EXPECT_LT(w.uncertainty, 0.5);
    EXPECT_EQ(w.verifyProbability, b.verifyProbability);
  }
  // The prior is the model's: saved with it, and the default where a
  // model.json predates it.
  ASSERT_FALSE(bool((*p)->save(dir.path, false)));
  auto q = Policy::load(dir.path);
  ASSERT_TRUE(bool(q)) << llvm::toString(q.takeError());
  EXPECT_EQ((*q)->info().priorSd, 0.5);
  std::string json;
  {
    std::ifstream in(dir.file("model.json"));
    json.assign(std::istreambuf_iterator<char>(in), {});
  }
  size_t at = json.find("\"prior_sd\"");
  ASSERT_NE(at, std::string::npos);
  json.erase(at, json.find('\n', at) - at + 1);
  writeFile(dir.file("model.json"), json);
  auto old = Policy::load(dir.path);
  ASSERT_TRUE(bool(old)) << llvm::toString(old.takeError());
  EXPECT_EQ((*old)->info().priorSd, kPolicyPriorSd);
}

TEST(Policy, SaveLoadRoundTripIsBitIdentical) {
  REQUIRE_TORCH();
  TempDir dir;
  auto p = Policy::create(smallSchema(), 32, 3);
  ASSERT_TRUE(bool(p));
  (*p)->info().minor = 4;
  (*p)->info().stages = "a";
  ASSERT_FALSE(bool((*p)->save(dir.path, false)));
  auto q = Policy::load(dir.path);
  ASSERT_TRUE(bool(q)) << llvm::toString(q.takeError());
  std::vector<float> a = (*p)->network().parameters(), b = (*q)->network().parameters();
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
  EXPECT_TRUE((*q)->schema() == (*p)->schema());
  EXPECT_EQ((*q)->info().minor, 4);
  EXPECT_EQ((*q)->info().stages, "a");
  KernelState k = kernelState("b", 2, 0.5);
  auto sa = (*p)->score(k, somePlans(k)), sb = (*q)->score(k, somePlans(k));
  ASSERT_TRUE(sa && sb);
  for (size_t i = 0; i < sa->size(); ++i) {
    EXPECT_EQ((*sa)[i].logSpeedup, (*sb)[i].logSpeedup);
    EXPECT_EQ((*sa)[i].uncertainty, (*sb)[i].uncertainty);
    EXPECT_EQ((*sa)[i].verifyProbability, (*sb)[i].verifyProbability);
  }
  // An existing model is replaced only when asked.
  llvm::Error again = (*p)->save(dir.path, false);
  ASSERT_TRUE(bool(again));
  EXPECT_NE(llvm::toString(std::move(again)).find("already there"), std::string::npos);
  EXPECT_FALSE(bool((*p)->save(dir.path, true)));
}

TEST(Policy, UnusableModelsSayWhy) {
  REQUIRE_TORCH();
  TempDir dir;
  EXPECT_NE(errorOf(Policy::load(dir.file("none"))).find("no such directory"), std::string::npos);
  EXPECT_NE(errorOf(Policy::load(dir.path)).find("model.json"), std::string::npos);

  auto p = Policy::create(smallSchema(), 16, 1);
  ASSERT_TRUE(bool(p));
  ASSERT_FALSE(bool((*p)->save(dir.path, false)));
  std::ifstream in(dir.file("model.json"));
  std::string model((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_TRUE(bool(Policy::load(dir.path)));

  auto withModel = [&](const std::string &text) {
    writeFile(dir.file("model.json"), text);
    return errorOf(Policy::load(dir.path));
  };
  auto replaced = [&](const std::string &from, const std::string &to) {
    std::string t = model;
    size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  EXPECT_NE(withModel("{ not json").find("not JSON"), std::string::npos);
  EXPECT_NE(withModel("{\"format\": \"other\"}").find("not a cudal1 policy model"),
            std::string::npos);
  std::string major = "\"major\": " + std::to_string(kPolicyModelMajor);
  EXPECT_NE(withModel(replaced(major, "\"major\": 99")).find("model version 99"),
            std::string::npos);
  std::string encoding = "\"encoding_version\": " + std::to_string(kEncodingVersion);
  EXPECT_NE(withModel(replaced(encoding, "\"encoding_version\": 9"))
                .find("schema mismatch: encoding version 9"),
            std::string::npos);
  // The effects of another effect version mean something else.
  EXPECT_NE(withModel(replaced("\"effect_version\": 0", "\"effect_version\": 7"))
                .find("schema mismatch: effect version 7"),
            std::string::npos);
  // A schema of another shape than the weights (a widened network).
  EXPECT_NE(withModel(replaced("\"hidden\": 16", "\"hidden\": 17")).find("does not fit"),
            std::string::npos);
  writeFile(dir.file("model.json"), model);
  writeFile(dir.file("weights.pt"), "garbage, not a torch archive");
  EXPECT_NE(
      errorOf(Policy::load(dir.path)).find("weights.pt does not fit the schema or is corrupt"),
      std::string::npos);
  llvm::sys::fs::remove(dir.file("weights.pt"));
  EXPECT_NE(errorOf(Policy::load(dir.path)).find("weights.pt: no such file"), std::string::npos);
}

TEST(Policy, RefusesStatesItWasNotTrainedToRead) {
  REQUIRE_TORCH();
  auto p = Policy::create(smallSchema(), 16, 1);
  ASSERT_TRUE(bool(p));
  auto why = [&](const KernelState &k) {
    auto s = (*p)->score(k, somePlans(k));
    return s ? std::string() : llvm::toString(s.takeError());
  };
  KernelState k = kernelState("a", 0, 0);
  EXPECT_EQ(why(k), "");
  KernelState v2 = k;
  v2.featureVersion = 2;
  EXPECT_NE(why(v2).find("features of version 2, the model was trained on version 1"),
            std::string::npos);
  KernelState unknown = k;
  unknown.features.emplace_back("tensor_cores", 1);
  EXPECT_NE(why(unknown).find("'tensor_cores' is not in the model's schema"), std::string::npos);
  KernelState far = k;
  far.features[1].second = 1e12;
  EXPECT_NE(why(far).find("standard deviations from the training data"), std::string::npos);
}

} // namespace
