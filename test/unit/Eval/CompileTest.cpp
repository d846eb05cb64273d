// Compiler choice, flag translation, and a real compile of every source in
// the GPU test bundles (NVRTC and nvcc need no GPU).
#include "cudal1/Eval/Compile.h"
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/Bundle.h"

#include <gtest/gtest.h>

#include <map>
#include <unistd.h>

using namespace cudal1;

TEST(Compile, ChoosesTheCompiler) {
  EXPECT_EQ(chooseCompiler("auto", "__global__ void k(){}", {}), "nvrtc");
  EXPECT_EQ(chooseCompiler("auto", "#include <cuda_fp16.h>\n", {}), "nvrtc");
  EXPECT_EQ(chooseCompiler("auto", "  #  include \"mine.h\"\n", {}), "nvcc");
  EXPECT_EQ(chooseCompiler("auto", "", {"-rdc=true"}), "nvcc");
  EXPECT_EQ(chooseCompiler("nvcc", "", {}), "nvcc");
}

TEST(Compile, TranslatesFlagsForNvrtc) {
  std::vector<std::string> dropped;
  std::vector<std::string> o = nvrtcOptions(
      {"-O3", "-DX=1", "-I", "inc", "-arch=sm_80", "--use_fast_math", "-Xcompiler", "-std=c++17"},
      "sm_90", dropped);
  EXPECT_EQ(o[0], "--gpu-architecture=sm_90");
  EXPECT_NE(std::find(o.begin(), o.end(), "-DX=1"), o.end());
  EXPECT_NE(std::find(o.begin(), o.end(), "-Iinc"), o.end());
  EXPECT_NE(std::find(o.begin(), o.end(), "--use_fast_math"), o.end());
  EXPECT_EQ(std::find(o.begin(), o.end(), "-arch=sm_80"), o.end());
  EXPECT_NE(std::find(dropped.begin(), dropped.end(), "-O3"), dropped.end());
}

TEST(Compile, NvccCommandReplacesTargets) {
  CompileJob j;
  j.source = "k.cu";
  j.flags = {"-O3", "-gencode", "arch=compute_80,code=sm_80", "-c", "-o", "k.o"};
  std::vector<std::string> cmd = nvccCommand("nvcc", j, false, "k.cubin");
  std::string all;
  for (const std::string &c : cmd)
    all += c + " ";
  EXPECT_EQ(all, "nvcc -cubin -arch=sm_90 -O3 -o k.cubin k.cu ");
}

// Every source of the GPU bundles compiles as its manifest asks (except the
// one meant to fail), so a GPU run is never wasted on a typo.
TEST(Compile, GpuBundleSourcesCompile) {
  char dir[] = "/tmp/cudal1-compile-test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::vector<CompileJob> jobs;
  std::map<std::string, std::string> entries;
  for (const char *name : {"stencil", "rowsum", "sumsq"}) {
    std::string bdir = std::string(CUDAL1_GPU_BUNDLES) + "/" + name;
    std::FILE *f = std::fopen((bdir + "/manifest.txt").c_str(), "r");
    ASSERT_NE(f, nullptr);
    std::string text;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
      text.append(buf, n);
    std::fclose(f);
    Expected<Bundle> bundle = parseManifest(text, bdir, name);
    ASSERT_TRUE(bundle.ok()) << bundle.error().message();
    std::vector<VariantSpec> specs = bundle->variants;
    specs.push_back(bundle->original);
    if (bundle->hasReference)
      specs.push_back(bundle->reference);
    for (const VariantSpec &v : specs) {
      CompileJob j;
      j.id = std::string(name) + "-" + v.id;
      j.source = bundle->path(v.source);
      j.output = std::string(dir) + "/" + j.id + ".cubin";
      j.compiler = v.compiler;
      j.flags = bundle->flags;
      j.flags.insert(j.flags.end(), v.extraFlags.begin(), v.extraFlags.end());
      jobs.push_back(j);
      entries[j.id] = v.entry;
    }
  }
  std::vector<CompileResult> res = compileAll(jobs, 2);
  for (const CompileResult &r : res) {
    bool expectFailure = r.id == "stencil-compile-error";
    EXPECT_EQ(r.ok, !expectFailure) << r.id << " (" << r.compiler << "):\n" << r.log;
    if (r.id == "stencil-side-stream")
      EXPECT_EQ(r.compiler, "nvcc");
    // The module must hold the entry point the workers look up: the H200
    // run got CUDA_ERROR_NOT_FOUND for side-stream, whose nvlink step had
    // silently dropped its input.
    if (r.ok) {
      Expected<std::vector<uint8_t>> image =
          readWholeFile(std::string(dir) + "/" + r.id + ".cubin");
      ASSERT_TRUE(image.ok()) << r.id;
      EXPECT_TRUE(cubinDefinesKernel(*image, entries[r.id]))
          << r.id << " (" << r.compiler << "): no kernel '" << entries[r.id] << "' in the module";
    }
    if (r.id == "stencil-side-stream" && r.ok) {
      Expected<std::vector<uint8_t>> image =
          readWholeFile(std::string(dir) + "/" + r.id + ".cubin");
      ASSERT_TRUE(image.ok());
      EXPECT_TRUE(cubinDefinesKernel(*image, "stencil_work"));
      EXPECT_FALSE(cubinDefinesKernel(*image, "stencil_wor"));
    }
    if (r.id == "stencil-fast")
      EXPECT_EQ(r.compiler, "nvrtc");
  }
  system((std::string("rm -rf ") + dir).c_str());
}
