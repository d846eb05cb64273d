// Variant compilation: NVRTC in threads, nvcc (and nvlink for relocatable
// device code) as child processes.
#include "cudal1/Eval/Compile.h"
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/Cuda.h"
#include "cudal1/Eval/Process.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace cudal1 {

namespace {
bool startsWith(const std::string &s, const char *p) { return s.rfind(p, 0) == 0; }

bool isRelocatable(const std::vector<std::string> &flags) {
  for (const std::string &f : flags)
    if (f == "-rdc=true" || f == "--relocatable-device-code=true" || f == "-dc" ||
        f == "--device-c")
      return true;
  return false;
}

bool isArchFlag(const std::string &f) {
  return startsWith(f, "-arch") || startsWith(f, "--gpu-architecture") ||
         startsWith(f, "-gencode") || startsWith(f, "--generate-code") || startsWith(f, "-code") ||
         startsWith(f, "--gpu-code");
}

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
} // namespace

namespace {
bool containsText(const std::vector<uint8_t> &image, const std::string &text) {
  return std::search(image.begin(), image.end(), text.begin(), text.end()) != image.end();
}
} // namespace

bool cubinDefinesKernel(const std::vector<uint8_t> &image, const std::string &entry) {
  // Every kernel has its own code section, named ".text.NAME" in the ELF
  // section-name table (NUL-terminated, so "k" does not match "k_work").
  std::string name = ".text." + entry;
  name.push_back('\0');
  return image.size() > 4 && std::equal(image.begin(), image.begin() + 4, "\177ELF") &&
         containsText(image, name);
}

bool cubinDefinesAnyKernel(const std::vector<uint8_t> &image) {
  return image.size() > 4 && std::equal(image.begin(), image.begin() + 4, "\177ELF") &&
         containsText(image, std::string(".text."));
}

std::string cudaRoot() {
  if (const char *e = std::getenv("CUDAL1_CUDA_ROOT"); e && *e)
    return e;
  return CUDAL1_DEFAULT_CUDA_ROOT;
}

std::string chooseCompiler(const std::string &requested, const std::string &source,
                           const std::vector<std::string> &flags) {
  if (requested == "nvrtc" || requested == "nvcc")
    return requested;
  if (isRelocatable(flags))
    return "nvcc";
  // Headers NVRTC ships itself; anything else needs the user's include setup.
  static const char *const builtin[] = {
      "cuda_fp16.h",      "cuda_bf16.h",     "cuda_fp8.h",           "cooperative_groups.h",
      "cuda/std/cstdint", "cuda/std/limits", "cuda/std/type_traits", "cuda_runtime.h"};
  size_t pos = 0;
  while (pos < source.size()) {
    size_t eol = source.find('\n', pos);
    if (eol == std::string::npos)
      eol = source.size();
    std::string line = source.substr(pos, eol - pos);
    pos = eol + 1;
    size_t i = line.find_first_not_of(" \t");
    if (i == std::string::npos || line[i] != '#')
      continue;
    i = line.find_first_not_of(" \t", i + 1);
    if (i == std::string::npos || line.compare(i, 7, "include") != 0)
      continue;
    size_t open = line.find_first_of("<\"", i + 7);
    if (open == std::string::npos)
      continue;
    size_t close = line.find_first_of(">\"", open + 1);
    std::string h =
        line.substr(open + 1, close == std::string::npos ? std::string::npos : close - open - 1);
    bool known = false;
    for (const char *b : builtin)
      known |= h == b;
    if (!known)
      return "nvcc";
  }
  return "nvrtc";
}

std::vector<std::string> nvrtcOptions(const std::vector<std::string> &flags,
                                      const std::string &arch, std::vector<std::string> &dropped) {
  std::vector<std::string> opts = {"--gpu-architecture=" + arch};
  for (size_t i = 0; i < flags.size(); ++i) {
    const std::string &f = flags[i];
    if (startsWith(f, "-D") || startsWith(f, "-U") || startsWith(f, "-I") ||
        startsWith(f, "-std=") || startsWith(f, "--std=") || startsWith(f, "-maxrregcount") ||
        startsWith(f, "--maxrregcount") || f == "-lineinfo" || f == "--generate-line-info" ||
        f == "--use_fast_math" || f == "-use_fast_math" || startsWith(f, "--ftz") ||
        startsWith(f, "--prec-div") || startsWith(f, "--prec-sqrt") || startsWith(f, "--fmad") ||
        startsWith(f, "-ftz") || startsWith(f, "-prec-div") || startsWith(f, "-prec-sqrt") ||
        startsWith(f, "-fmad") || f == "--expt-relaxed-constexpr" || f == "--extended-lambda" ||
        f == "--expt-extended-lambda" || f == "-rdc=true" ||
        f == "--relocatable-device-code=true" || f == "--extra-device-vectorization" || f == "-G") {
      // -D X and -I X with the value in the next word.
      if ((f == "-D" || f == "-I" || f == "-U") && i + 1 < flags.size()) {
        opts.push_back(f + flags[++i]);
        continue;
      }
      opts.push_back(f == "-use_fast_math" ? "--use_fast_math" : f);
    } else if (isArchFlag(f)) {
      // We compile for the GPU at hand; the user's targets do not apply.
      if ((f == "-arch" || f == "-gencode" || f == "-code") && i + 1 < flags.size())
        ++i;
    } else {
      dropped.push_back(f);
    }
  }
  return opts;
}

std::vector<std::string> nvccCommand(const std::string &nvcc, const CompileJob &job,
                                     bool relocatable, const std::string &output) {
  std::vector<std::string> cmd = {nvcc, "-cubin", "-arch=" + job.arch};
  for (size_t i = 0; i < job.flags.size(); ++i) {
    const std::string &f = job.flags[i];
    if (isArchFlag(f)) {
      if ((f == "-arch" || f == "-gencode" || f == "-code") && i + 1 < job.flags.size())
        ++i;
      continue;
    }
    if (f == "-c" || f == "-dc" || f == "--device-c" || f == "-cubin" || f == "-rdc=true" ||
        f == "--relocatable-device-code=true")
      continue;
    if (f == "-o") {
      ++i;
      continue;
    }
    cmd.push_back(f);
  }
  if (relocatable)
    cmd.push_back("-rdc=true");
  cmd.push_back("-o");
  cmd.push_back(output);
  cmd.push_back(job.source);
  return cmd;
}

namespace {
CompileResult compileUncached(const CompileJob &job) {
  CompileResult res;
  res.id = job.id;
  auto start = std::chrono::steady_clock::now();
  Expected<std::vector<uint8_t>> src = readWholeFile(job.source);
  if (!src.ok()) {
    res.log = src.error().message();
    return res;
  }
  std::string text(src->begin(), src->end());
  res.compiler = chooseCompiler(job.compiler, text, job.flags);
  if (res.compiler == "nvrtc" && isRelocatable(job.flags)) {
    // Relocatable code needs a device link with cudadevrt: nvcc + nvlink.
    res.compiler = "nvcc";
  }
  if (res.compiler == "nvrtc") {
    std::vector<std::string> dropped;
    std::vector<std::string> opts = nvrtcOptions(job.flags, job.arch, dropped);
    std::string log;
    if (!dropped.empty()) {
      log = "flags NVRTC does not take, left out:";
      for (const std::string &d : dropped)
        log += " " + d;
      log += "\n";
    }
    std::string nvrtcLog;
    Expected<std::vector<uint8_t>> cubin = cuda::compileWithNvrtc(text, job.source, opts, nvrtcLog);
    res.log = log + nvrtcLog;
    if (!cubin.ok()) {
      res.log += (res.log.empty() ? "" : "\n") + cubin.error().message();
    } else {
      Status s = writeFileAtomically(job.output, cubin->data(), cubin->size());
      res.ok = s.ok();
      if (!s.ok())
        res.log += s.message();
    }
    res.seconds = since(start);
    return res;
  }

  std::string root = cudaRoot();
  bool relocatable = isRelocatable(job.flags);
  // nvlink picks the input's kind by its extension and silently ignores a
  // file it does not recognize ("x.cubin.rdc" gave a module without a single
  // kernel: "entry point not found" on the H200), so the relocatable object
  // must end in .cubin.
  std::string firstOut = relocatable ? job.output + ".rdc.cubin" : job.output;
  ProcessResult p = runProcess(nvccCommand(root + "/bin/nvcc", job, relocatable, firstOut), 600);
  res.log = p.output;
  if (!(p.exited && p.exitCode == 0)) {
    res.log += "\nnvcc: " + p.describe();
    res.seconds = since(start);
    return res;
  }
  if (relocatable) {
    ProcessResult l = runProcess({root + "/bin/nvlink", "-arch=" + job.arch, firstOut,
                                  "-L" + root + "/lib64", "-lcudadevrt", "-o", job.output},
                                 300);
    res.log += l.output;
    if (!(l.exited && l.exitCode == 0)) {
      res.log += "\nnvlink: " + l.describe();
      res.seconds = since(start);
      return res;
    }
    Expected<std::vector<uint8_t>> linked = readWholeFile(job.output);
    if (!linked.ok() || !cubinDefinesAnyKernel(*linked)) {
      res.log += "\nnvlink: the linked module defines no kernel (was the "
                 "relocatable object ignored?)";
      res.seconds = since(start);
      return res;
    }
  }
  res.ok = true;
  res.seconds = since(start);
  return res;
}

/// The cache's name for a job: everything that decides the cubin.
std::string cacheKey(const CompileJob &job, const std::vector<uint8_t> &source) {
  std::string key = job.compiler + '\0' + job.arch + '\0' + cudaRoot() + '\0';
  for (const std::string &f : job.flags)
    key += f + '\0';
  key.append(source.begin(), source.end());
  char hex[17];
  std::snprintf(
      hex, sizeof hex, "%016llx",
      (unsigned long long)fnv1a64(reinterpret_cast<const uint8_t *>(key.data()), key.size()));
  return hex;
}
} // namespace

CompileResult compileVariant(const CompileJob &job) {
  if (job.cacheDir.empty())
    return compileUncached(job);
  Expected<std::vector<uint8_t>> src = readWholeFile(job.source);
  if (!src.ok())
    return compileUncached(job); // reports the read error
  auto start = std::chrono::steady_clock::now();
  std::string base = job.cacheDir + "/" + cacheKey(job, *src);
  Expected<std::vector<uint8_t>> cubin = readWholeFile(base + ".cubin");
  Expected<std::vector<uint8_t>> compiler = readWholeFile(base + ".compiler");
  if (cubin.ok() && compiler.ok() &&
      writeFileAtomically(job.output, cubin->data(), cubin->size()).ok()) {
    CompileResult res;
    res.id = job.id;
    res.ok = res.cached = true;
    res.compiler.assign(compiler->begin(), compiler->end());
    res.seconds = since(start);
    return res;
  }
  CompileResult res = compileUncached(job);
  if (res.ok) {
    // The cubin first, the compiler's name last: a reader that finds the
    // name finds a whole cubin (both are written atomically).
    Expected<std::vector<uint8_t>> out = readWholeFile(job.output);
    if (out.ok() && writeFileAtomically(base + ".cubin", out->data(), out->size()).ok())
      (void)writeFileAtomically(base + ".compiler", res.compiler.data(), res.compiler.size());
  }
  return res;
}

std::vector<CompileResult> compileAll(const std::vector<CompileJob> &jobs, int parallelism,
                                      const std::function<void(const CompileResult &)> &progress) {
  std::vector<CompileResult> results(jobs.size());
  std::atomic<size_t> next{0};
  std::mutex mutex;
  auto work = [&] {
    for (size_t i; (i = next++) < jobs.size();) {
      results[i] = compileVariant(jobs[i]);
      if (progress) {
        std::lock_guard<std::mutex> lock(mutex);
        progress(results[i]);
      }
    }
  };
  int n = std::max(1, std::min<int>(parallelism, int(jobs.size())));
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t)
    threads.emplace_back(work);
  for (std::thread &t : threads)
    t.join();
  return results;
}

} // namespace cudal1
