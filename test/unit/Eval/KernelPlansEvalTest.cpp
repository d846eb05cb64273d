// The kernel part on the GPU machine's side (lib/Eval/KernelPlansEval.cpp)
// without a GPU: the "instrumented program" is a script that copies a
// capture this test wrote, the worker is fake-worker.sh, compilation is
// real (nvcc). A variant's launch remap (launch=) becomes its kernel
// bundle's grid/block override, computed from the captured launches with
// the tuner's code; a remap that gives the captured launches different
// configurations leaves the variant to the program level, with its remark.
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/Bundle.h"
#include "cudal1/Eval/EvalDriver.h"
#include "cudal1/Eval/KernelPlans.h"
#include "cudal1/Eval/ProgramBundle.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sys/stat.h>

using namespace cudal1;

namespace {

CapturedLaunch launch(uint32_t gx, uint32_t bx) {
  CapturedLaunch l;
  l.kernelKey = "k.cu:1:scale";
  l.grid[0] = gx;
  l.block[0] = bx;
  CapturedAlloc a;
  a.size = 16;
  a.before.assign(16, 0);
  a.after.assign(16, 0);
  l.allocs.push_back(a);
  CapturedArg p;
  p.isPointer = true;
  l.args.push_back(p);
  CapturedArg n;
  n.bytes = {4, 0, 0, 0};
  l.args.push_back(n);
  return l;
}

TEST(KernelPlansEval, AppliesEachVariantsLaunchRemapToTheCapturedLaunches) {
  char tmpl[] = "/tmp/cudal1-kernel-plans-eval.XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string d = tmpl;
  const char *kernel = "extern \"C\" __global__ void scale(float *x, int n) {\n"
                       "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                       "  if (i < n) x[i] *= 2;\n}\n";
  for (const char *f : {"original.cu", "v1.cu", "v2.cu", "v3.cu", "v4.cu", "instrumented.cu"})
    std::ofstream(d + "/" + f) << kernel;
  // Two captured launches of different shapes: 2^21 x 1024 (2^31 threads)
  // and 32 x 128.
  CaptureFile cf;
  cf.launches = {launch(1u << 21, 1024), launch(32, 128)};
  ASSERT_TRUE(writeCaptureFile(d + "/made.capture", cf).ok());
  std::ofstream(d + "/build.sh") << "printf '#!/bin/sh\\ncp " << d
                                 << "/made.capture \"$CUDAL1_CAPTURE_FILE\"\\n' > \"$2\"\n"
                                    "chmod +x \"$2\"\n";
  ProgramBundle pb;
  pb.dir = d;
  pb.build = {"sh", d + "/build.sh", "{src}", "{exe}"};
  pb.run = {"{exe}"};
  pb.original = {"original", "original.cu", false, {}, ""};
  for (const char *id : {"v1", "v2", "v3", "v4"})
    pb.variants.push_back({id, std::string(id) + ".cu", false, {}, ""});
  ASSERT_TRUE(writeProgramManifest(pb, d).ok());
  ASSERT_EQ(::mkdir((d + "/kernels").c_str(), 0777), 0);
  std::ofstream(d + "/kernels/ref0.cu")
      << "extern \"C\" __global__ void scale_ref(double *x, int n) {\n"
         "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n) x[i] *= 2;\n}\n";
  KernelPlans kp;
  kp.kernels.push_back({"k.cu:1:scale", "scale", "scale", "f32* i32", "ref0.cu", "scale_ref"});
  // v1: blocks of 128; v2: the x grid halved, each launch on its own;
  // v4: blocks of one thread, 2^31 blocks for launch 0, beyond CUDA's grid
  // limit; v3: no remap.
  kp.variants.push_back(
      {"v1", "k.cu:1:scale", "scale", false, LaunchRemap{{LaunchRemapStep::reshape(128)}}});
  kp.variants.push_back(
      {"v2", "k.cu:1:scale", "scale", false, LaunchRemap{{LaunchRemapStep::divideX(2)}}});
  kp.variants.push_back(
      {"v4", "k.cu:1:scale", "scale", false, LaunchRemap{{LaunchRemapStep::reshape(1)}}});
  kp.variants.push_back({"v3", "k.cu:1:scale", "scale", false, LaunchRemap{}});
  ASSERT_TRUE(writeKernelPlans(kp, d + "/kernels").ok());
  Expected<ProgramBundle> back = readProgramBundle(d);
  ASSERT_TRUE(back.ok()) << back.error().message();

  KernelPlanRun run;
  run.options.workerExecutable = FAKE_WORKER;
  run.options.jobs = 2;
  run.options.window = 1;
  std::string said;
  run.say = [&](const std::string &m) { said += m + "\n"; };
  Expected<std::set<std::string>> replayed = evaluateKernelPlans(*back, run);
  ASSERT_TRUE(replayed.ok()) << replayed.error().message();
  Expected<KernelPlansStatus> st = readKernelPlansStatus(d + "/kernels");
  ASSERT_TRUE(st.ok()) << st.error().message();
  ASSERT_EQ(st->kernels.size(), 1u);
  EXPECT_EQ(st->kernels[0].launches, 2u);
  // The kernel bundle: v1 and v2 with their remaps (the worker applies
  // them to each captured launch), v3 with the captured configurations, v4
  // not in it.
  Expected<Bundle> kb = readBundle(d + "/kernels/k0");
  ASSERT_TRUE(kb.ok()) << kb.error().message() << "\n" << said;
  ASSERT_EQ(kb->variants.size(), 3u) << said;
  EXPECT_EQ(kb->variants[0].id, "v1");
  EXPECT_EQ(LaunchRemap{kb->variants[0].remap}.str(), "reshape(128)");
  EXPECT_FALSE(kb->variants[0].launch.hasGrid || kb->variants[0].launch.hasBlock);
  EXPECT_EQ(kb->variants[1].id, "v2");
  EXPECT_EQ(LaunchRemap{kb->variants[1].remap}.str(), "divide-x(2)");
  EXPECT_EQ(kb->variants[2].id, "v3");
  EXPECT_TRUE(kb->variants[2].remap.empty());
  EXPECT_FALSE(kb->variants[2].launch.hasGrid || kb->variants[2].launch.hasBlock);
  ASSERT_EQ(st->variants.size(), 1u);
  EXPECT_EQ(st->variants[0].id, "v4");
  EXPECT_NE(st->variants[0].remark.find("captured launch 0: launch remap"), std::string::npos)
      << st->variants[0].remark;
  EXPECT_NE(said.find("kernel plans: v4: captured launch 0: launch remap"), std::string::npos)
      << said;
  // Replayed (the fake worker verified and timed them): v1, v2 and v3; v4
  // is left to the program evaluation.
  EXPECT_TRUE(st->kernels[0].replayed) << st->kernels[0].remark << "\n" << said;
  EXPECT_EQ(replayed->count("v1"), 1u) << said;
  EXPECT_EQ(replayed->count("v2"), 1u) << said;
  EXPECT_EQ(replayed->count("v3"), 1u);
  EXPECT_EQ(replayed->count("v4"), 0u);
  std::system(("rm -rf " + d).c_str());
}

} // namespace
