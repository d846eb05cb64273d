// nvcc → clang flag translation and the CUDA 13 workarounds (docs/Toolchain.md).
#include "cudal1/Frontend/CompileFlags.h"
#include "cudal1/Config.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <regex>

using namespace cudal1;
using llvm::StringRef;

namespace {

/// nvcc flags that take a separate value and mean nothing to clang.
const llvm::StringSet<> &nvccDroppedWithValue() {
  static const llvm::StringSet<> set = {"-ccbin",
                                        "--compiler-bindir",
                                        "-Xptxas",
                                        "--ptxas-options",
                                        "-Xnvlink",
                                        "--nvlink-options",
                                        "-Xfatbin",
                                        "--fatbin-options",
                                        "--threads",
                                        "-t",
                                        "-maxrregcount",
                                        "--maxrregcount",
                                        "-Xarchive",
                                        "--split-compile",
                                        "-res-usage-file",
                                        "--generate-dependencies-with-compile-file",
                                        "-MF"};
  return set;
}

/// nvcc flags without a value that clang does not take.
const llvm::StringSet<> &nvccDroppedAlone() {
  static const llvm::StringSet<> set = {"-lineinfo",
                                        "--generate-line-info",
                                        "-G",
                                        "--device-debug",
                                        "--expt-relaxed-constexpr",
                                        "-expt-relaxed-constexpr",
                                        "--expt-extended-lambda",
                                        "-expt-extended-lambda",
                                        "--extended-lambda",
                                        "-extended-lambda",
                                        "-forward-unknown-to-host-compiler",
                                        "--forward-unknown-to-host-compiler",
                                        "-forward-unknown-to-host-linker",
                                        "-res-usage",
                                        "--resource-usage",
                                        "-Wno-deprecated-gpu-targets",
                                        "--keep",
                                        "-keep",
                                        "-src-in-ptx",
                                        "--restrict",
                                        "-restrict",
                                        "-MD",
                                        "-MMD",
                                        "-c",
                                        "--compile",
                                        "-cudart=static",
                                        "-cudart=shared",
                                        "--cudart=static",
                                        "--cudart=shared",
                                        "-cudart",
                                        "--cudart"};
  return set;
}

/// The sm_NN of an nvcc architecture spelling, or "" (compute_90 → sm_90).
std::string smFromArch(StringRef arch) {
  std::smatch m;
  std::string s = arch.str();
  static const std::regex re("(sm|compute|lto)_([0-9]+[a-z]?)");
  if (std::regex_search(s, m, re))
    return "sm_" + m[2].str();
  return "";
}

void addArch(std::vector<std::string> &out, const std::string &sm) {
  std::string flag = "--cuda-gpu-arch=" + sm;
  if (!sm.empty() && std::find(out.begin(), out.end(), flag) == out.end())
    out.push_back(flag);
}

} // namespace

TranslatedFlags cudal1::translateCompileFlags(const std::vector<std::string> &in) {
  TranslatedFlags r;
  auto note = [&](const std::string &what) { r.notes.push_back(what); };
  for (size_t i = 0; i < in.size(); ++i) {
    StringRef a = in[i];
    auto next = [&]() -> std::string { return i + 1 < in.size() ? in[++i] : ""; };
    // Language: nvcc says `-x cu`.
    if (a == "-x" && i + 1 < in.size()) {
      std::string lang = next();
      if (lang == "cu") {
        note("translated nvcc flag '-x cu' to '-x cuda'");
        lang = "cuda";
      }
      r.args.push_back("-x");
      r.args.push_back(lang);
      continue;
    }
    // Architectures.
    if (a.starts_with("-arch=") || a.starts_with("--gpu-architecture=") || a == "-arch" ||
        a == "--gpu-architecture") {
      std::string v = a.contains('=') ? a.split('=').second.str() : next();
      std::string sm = smFromArch(v);
      note("translated nvcc flag '" + a.str() + (a.contains('=') ? "" : " " + v) +
           "' to '--cuda-gpu-arch=" + sm + "'");
      addArch(r.args, sm);
      continue;
    }
    if (a.starts_with("-gencode") || a.starts_with("--generate-code")) {
      std::string v = a.contains('=') ? a.split('=').second.str() : next();
      // arch=compute_90,code=[compute_90,sm_90] or code=sm_90: take the sm.
      std::string sm;
      static const std::regex re("sm_([0-9]+[a-z]?)");
      std::smatch m;
      if (std::regex_search(v, m, re))
        sm = "sm_" + m[1].str();
      else
        sm = smFromArch(v);
      note("translated nvcc flag '" + a.str() + "' to '--cuda-gpu-arch=" + sm + "'");
      addArch(r.args, sm);
      continue;
    }
    if (a == "-rdc=true" || a == "--relocatable-device-code=true" || a == "-dc") {
      note("translated nvcc flag '" + a.str() + "' to '-fgpu-rdc'");
      r.args.push_back("-fgpu-rdc");
      continue;
    }
    if (a == "--use_fast_math" || a == "-use_fast_math") {
      note("translated nvcc flag '" + a.str() + "' to '-ffast-math'");
      r.args.push_back("-ffast-math");
      continue;
    }
    if (a == "-Xcompiler" || a == "--compiler-options") {
      // Host compiler flags: pass the comma-separated list through.
      StringRef v = i + 1 < in.size() ? StringRef(in[++i]) : StringRef();
      llvm::SmallVector<StringRef, 4> parts;
      v.split(parts, ',', -1, false);
      for (StringRef p : parts)
        r.args.push_back(p.str());
      continue;
    }
    if (a.starts_with("-Xcompiler=") || a.starts_with("--compiler-options=")) {
      llvm::SmallVector<StringRef, 4> parts;
      a.split('=').second.split(parts, ',', -1, false);
      for (StringRef p : parts)
        r.args.push_back(p.str());
      continue;
    }
    if (a.starts_with("--std") && !a.starts_with("--std=")) { // nvcc: --std c++17
      r.args.push_back("-std=" + next());
      continue;
    }
    if (a.starts_with("--std=")) {
      r.args.push_back("-std=" + a.split('=').second.str());
      continue;
    }
    if (nvccDroppedAlone().contains(a)) {
      if (a != "-c" && a != "--compile" && a != "-MD" && a != "-MMD")
        note("dropped nvcc flag '" + a.str() + "'");
      continue;
    }
    if (nvccDroppedWithValue().contains(a)) {
      std::string v = next();
      if (a != "-MF")
        note("dropped nvcc flag '" + a.str() + " " + v + "'");
      continue;
    }
    if (a.starts_with("-ccbin=") || a.starts_with("--compiler-bindir=") ||
        a.starts_with("-Xptxas=") || a.starts_with("--ptxas-options=") ||
        a.starts_with("--threads=") || a.starts_with("-maxrregcount=") ||
        a.starts_with("--maxrregcount=") || a.starts_with("-Werror=") ||
        a.starts_with("--diag-suppress") || a.starts_with("-diag-suppress") ||
        a.starts_with("--Werror")) {
      note("dropped nvcc flag '" + a.str() + "'");
      continue;
    }
    if (a == "-o" || a == "--output-file" || a == "-MT" || a == "-MQ") {
      next();
      continue;
    }
    r.args.push_back(a.str());
  }
  return r;
}

std::vector<std::string> cudal1::cudaToolchainArgs() {
  // CUDA 13 keeps CUB, Thrust and libcu++ in include/cccl, which nvcc (not
  // clang) puts on the include path.
  return {std::string("--cuda-path=") + config::cudaShimPath,
          "-Wno-unknown-cuda-version",
          "-isystem",
          config::cudaStubInclude,
          "-isystem",
          std::string(config::cudaRoot) + "/include/cccl",
          std::string("-resource-dir=") + config::clangResourceDir};
}

std::vector<std::string> cudal1::analysisArgs(const std::vector<std::string> &userArgs,
                                              std::vector<std::string> *notes) {
  TranslatedFlags t = translateCompileFlags(userArgs);
  if (notes)
    *notes = t.notes;
  std::vector<std::string> args;
  bool hasLang = false, hasArch = false;
  for (const std::string &a : t.args) {
    hasLang |= a == "-x" || StringRef(a).starts_with("-x");
    hasArch |=
        StringRef(a).starts_with("--cuda-gpu-arch=") || StringRef(a).starts_with("--offload-arch=");
  }
  if (!hasLang) {
    args.push_back("-x");
    args.push_back("cuda");
  }
  args.insert(args.end(), t.args.begin(), t.args.end());
  if (!hasArch)
    args.push_back("--cuda-gpu-arch=sm_90");
  for (std::string &a : cudaToolchainArgs())
    args.push_back(a);
  args.push_back("--cuda-host-only");
  return args;
}

std::vector<std::string> cudal1::buildFlagsOf(const std::vector<std::string> &args,
                                              const std::string &workingDir) {
  llvm::SmallString<256> cwd(workingDir);
  if (cwd.empty())
    llvm::sys::fs::current_path(cwd);
  auto absolute = [&](StringRef p) {
    llvm::SmallString<256> a(p);
    if (!llvm::sys::path::is_absolute(a)) {
      a = cwd;
      llvm::sys::path::append(a, p);
    }
    llvm::sys::path::remove_dots(a, /*remove_dot_dot=*/true);
    return std::string(a);
  };
  std::vector<std::string> toolchain = cudaToolchainArgs();
  auto ours = [&](StringRef v) {
    return std::find(toolchain.begin(), toolchain.end(), v) != toolchain.end();
  };
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    StringRef a = args[i];
    bool more = i + 1 < args.size();
    // A flag and its value, joined (-Idir) or as the next word (-I dir).
    auto value = [&](StringRef flag, std::string &v) {
      if (!a.starts_with(flag))
        return false;
      if (a.size() > flag.size()) {
        v = a.drop_front(flag.size()).str();
        return true;
      }
      if (!more)
        return false;
      v = args[++i];
      return true;
    };
    std::string v;
    if (value("-isystem", v)) {
      if (!ours(v)) {
        out.push_back("-isystem");
        out.push_back(absolute(v));
      }
    } else if (value("-iquote", v) || value("-I", v)) {
      out.push_back("-I" + absolute(v));
    } else if (a == "-include" && more) {
      // Found in the working directory first, then on the include path.
      v = args[++i];
      std::string abs = absolute(v);
      out.push_back("-include");
      out.push_back(llvm::sys::fs::exists(abs) ? abs : v);
    } else if (value("-D", v)) {
      out.push_back("-D" + v);
    } else if (value("-U", v)) {
      out.push_back("-U" + v);
    } else if (a.starts_with("-std=")) {
      out.push_back(a.str());
    }
  }
  return out;
}
