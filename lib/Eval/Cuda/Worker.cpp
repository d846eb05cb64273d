// The evaluation workers: replay captured launches of one variant and verify
// them (verify), or time the original and the verified variants in one
// interleaved session and re-validate their timed outputs (time). Each runs
// in a process of its own, so a faulting variant takes down only its worker:
// a child of cudal1-eval for one request, or a kept worker (serve) that
// answers the requests for one kernel and keeps their set-up in between
// (KeptWorkers.h).
#include "Driver.h"
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/Bundle.h"
#include "cudal1/Eval/Cuda.h"
#include "cudal1/Eval/EntryName.h"
#include "cudal1/Eval/EvalArgs.h"
#include "cudal1/Eval/KeptWorkers.h"
#include "cudal1/Eval/LaunchRemap.h"
#include "cudal1/Eval/Numbers.h"
#include "cudal1/Eval/Stats.h"
#include "cudal1/Eval/Verify.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <poll.h>
#include <random>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace cudal1::cuda {

namespace {

constexpr size_t kGuardBytes = 4096; // red zone on each side of a buffer
constexpr unsigned char kGuardByte = 0xA5;
constexpr unsigned char kPoisonByte = 0xFF; // NaN for floats, -1 for ints
constexpr int kWarmups = 3;
constexpr int kMinRounds = 10;
// Enough for 10 buckets of 20 rounds. A kernel of 0.1 ms ran thousands of
// rounds in the 2 s window, which bought no decision the first 200 did not
// (the example's --tune spent 55 s of 193 timing such kernels, H100).
constexpr int kMaxRounds = 200;

#define TRY(expr)                                                                                  \
  do {                                                                                             \
    Status _s = (expr);                                                                            \
    if (!_s.ok())                                                                                  \
      return _s;                                                                                   \
  } while (0)

/// A CUDA failure while running a candidate: kept apart from setup errors
/// because it is the candidate's result (crash), not ours.
struct RunError {
  bool failed = false;
  std::string text;
};

struct Context {
  const DriverApi *api = nullptr;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  std::string name;
  size_t l2Bytes = 0;
};

Status initContext(int ordinal, Context &c) {
  Expected<const DriverApi *> d = driver();
  if (!d.ok())
    return d.error();
  c.api = *d;
  const DriverApi &a = *c.api;
  TRY(checkCu(a.cuInit(0), "cuInit"));
  int count = 0;
  TRY(checkCu(a.cuDeviceGetCount(&count), "cuDeviceGetCount"));
  if (ordinal < 0 || ordinal >= count)
    return makeError("no GPU ", ordinal, " (this machine has ", count, ")");
  TRY(checkCu(a.cuDeviceGet(&c.dev, ordinal), "cuDeviceGet"));
  char name[256] = {0};
  TRY(checkCu(a.cuDeviceGetName(name, sizeof name - 1, c.dev), "cuDeviceGetName"));
  c.name = name;
  int l2 = 0;
  TRY(checkCu(a.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, c.dev),
              "cuDeviceGetAttribute(L2)"));
  c.l2Bytes = size_t(l2);
  TRY(checkCu(a.cuDevicePrimaryCtxRetain(&c.ctx, c.dev), "cuDevicePrimaryCtxRetain"));
  TRY(checkCu(a.cuCtxSetCurrent(c.ctx), "cuCtxSetCurrent"));
  return Status::success();
}

struct Module {
  CUmodule mod = nullptr;
  CUfunction fn = nullptr;
};

Expected<Module> loadModule(Context &c, const std::string &path, const std::string &entry) {
  Expected<std::vector<uint8_t>> image = readWholeFile(path);
  if (!image.ok())
    return image.error();
  Module m;
  TRY(checkCu(c.api->cuModuleLoadData(&m.mod, image->data()), "cuModuleLoadData"));
  CUresult r = c.api->cuModuleGetFunction(&m.fn, m.mod, entry.c_str());
  if (r == CUDA_ERROR_NOT_FOUND) {
    // The tuner names a variant's entry by the original's mangled name; a
    // plan that changed the signature changed the mangling (EntryName.h).
    Expected<std::vector<std::string>> names = elfFunctionNames(image->data(), image->size());
    if (!names.ok())
      return makeError("entry point '", entry, "' not found in the module, whose symbols ",
                       "cannot be read: ", names.error().message());
    Expected<std::string> found = matchEntry(*names, entry);
    if (!found.ok())
      return found.error();
    r = c.api->cuModuleGetFunction(&m.fn, m.mod, found->c_str());
  }
  if (Status s = checkCu(r, "cuModuleGetFunction"); !s.ok())
    return makeError("entry point '", entry, "' not found in the module: ", s.message());
  return m;
}

/// One allocation of a captured launch, on the device.
struct DevAlloc {
  CUdeviceptr raw = 0;      // guard | buffer | guard
  CUdeviceptr work = 0;     // raw + kGuardBytes
  CUdeviceptr pristine = 0; // contents before the launch
  CUdeviceptr ref = 0;      // the reference's (promoted) copy
  size_t size = 0;
  ElemType elem = ElemType::Bytes;
  bool writeOnly = true;
  bool promoted = false; // f32 turned into f64 for the reference
  std::string name;      // "arg N"
  /// Where a check reads the buffer back (with its red zones): page-locked
  /// when the driver gives it (faster copies), made at the first check and
  /// kept for the next ones.
  uint8_t *readback = nullptr;
  bool readbackPinned = false;
  std::vector<uint8_t> readbackHeap;
};

/// A captured launch's device state in a worker, set up once and kept
/// until the worker exits (or, in a kept worker, drops the kernel's set-up).
struct LaunchState {
  const CapturedLaunch *cap = nullptr;
  std::vector<DevAlloc> allocs;
  std::vector<std::vector<double>> reference; // per alloc; empty if none
  bool haveReference = false;
  /// Per alloc, what its comparison takes from the original and the
  /// reference alone (Verify.h), made at its first check.
  std::vector<std::optional<CompareBaseline>> baselines;
};

Status checkSignature(const Bundle &b, const CapturedLaunch &l) {
  if (l.args.size() != b.args.size())
    return makeError("the bundle declares ", b.args.size(), " arguments, the capture of ",
                     l.kernelKey, " has ", l.args.size());
  for (size_t i = 0; i < l.args.size(); ++i) {
    const ArgType &t = b.args[i];
    const CapturedArg &a = l.args[i];
    if (t.pointer && !a.isPointer) {
      // A null pointer is recorded as 8 scalar bytes; accept it.
      if (a.bytes.size() == 8)
        continue;
      return makeError("argument ", i,
                       " is a pointer in the bundle but not "
                       "in the capture");
    }
    if (!t.pointer && a.isPointer)
      return makeError("argument ", i, " is a pointer in the capture but not in the bundle");
    if (!t.pointer) {
      size_t want = t.elem == ElemType::Bytes ? t.scalarBytes : elemSize(t.elem);
      if (a.bytes.size() != want)
        return makeError("argument ", i, " has ", a.bytes.size(),
                         " bytes in the capture, its type needs ", want);
    }
  }
  return Status::success();
}

Status setupLaunch(Context &c, const Bundle &b, const CapturedLaunch &cap, bool withReference,
                   LaunchState &ls) {
  const DriverApi &a = *c.api;
  ls.cap = &cap;
  ls.allocs.resize(cap.allocs.size());
  std::vector<bool> typed(cap.allocs.size(), false);
  for (size_t i = 0; i < cap.args.size(); ++i) {
    if (!cap.args[i].isPointer)
      continue;
    DevAlloc &d = ls.allocs[cap.args[i].alloc];
    const ArgType &t = b.args[i];
    if (!typed[cap.args[i].alloc]) {
      d.elem = t.elem;
      d.name = "arg " + std::to_string(i);
      typed[cap.args[i].alloc] = true;
    } else if (d.elem != t.elem) {
      d.elem = ElemType::Bytes; // differently typed views: compare bytes
    }
    d.writeOnly = d.writeOnly && t.writeOnly;
  }
  for (size_t i = 0; i < cap.allocs.size(); ++i) {
    DevAlloc &d = ls.allocs[i];
    const CapturedAlloc &ca = cap.allocs[i];
    d.size = ca.size;
    if (!typed[i])
      d.writeOnly = false;
    TRY(checkCu(a.cuMemAlloc(&d.raw, d.size + 2 * kGuardBytes), "cuMemAlloc"));
    d.work = d.raw + kGuardBytes;
    TRY(checkCu(a.cuMemAlloc(&d.pristine, std::max<size_t>(d.size, 1)), "cuMemAlloc"));
    if (d.size)
      TRY(checkCu(a.cuMemcpyHtoD(d.pristine, ca.before.data(), d.size), "cuMemcpyHtoD"));
  }
  ls.haveReference = withReference;
  if (withReference) {
    ls.reference.assign(cap.allocs.size(), {});
    for (size_t i = 0; i < cap.allocs.size(); ++i) {
      DevAlloc &d = ls.allocs[i];
      const CapturedAlloc &ca = cap.allocs[i];
      d.promoted = d.elem == ElemType::F32;
      if (d.promoted) {
        size_t n = d.size / 4;
        std::vector<double> conv(n);
        for (size_t k = 0; k < n; ++k) {
          float f;
          std::memcpy(&f, ca.before.data() + 4 * k, 4);
          conv[k] = f;
        }
        TRY(checkCu(a.cuMemAlloc(&d.ref, std::max<size_t>(n * 8, 1)), "cuMemAlloc"));
        if (n)
          TRY(checkCu(a.cuMemcpyHtoD(d.ref, conv.data(), n * 8), "cuMemcpyHtoD"));
      } else {
        TRY(checkCu(a.cuMemAlloc(&d.ref, std::max<size_t>(d.size, 1)), "cuMemAlloc"));
        if (d.size)
          TRY(checkCu(a.cuMemcpyHtoD(d.ref, ca.before.data(), d.size), "cuMemcpyHtoD"));
      }
    }
  }
  return Status::success();
}

/// Argument storage for cuLaunchKernel.
struct ArgPack {
  std::vector<std::vector<uint8_t>> storage;
  std::vector<void *> pointers;
  void finish() {
    for (auto &s : storage)
      pointers.push_back(s.data());
  }
};

ArgPack variantArgs(const Bundle &b, const LaunchState &ls) {
  ArgPack p;
  for (size_t i = 0; i < ls.cap->args.size(); ++i) {
    const CapturedArg &arg = ls.cap->args[i];
    if (!arg.isPointer) {
      p.storage.push_back(arg.bytes);
      continue;
    }
    CUdeviceptr v = ls.allocs[arg.alloc].work + arg.offset;
    std::vector<uint8_t> bytes(sizeof v);
    std::memcpy(bytes.data(), &v, sizeof v);
    p.storage.push_back(bytes);
  }
  (void)b;
  p.finish();
  return p;
}

ArgPack referenceArgs(const Bundle &b, const LaunchState &ls) {
  ArgPack p;
  for (size_t i = 0; i < ls.cap->args.size(); ++i) {
    const CapturedArg &arg = ls.cap->args[i];
    if (!arg.isPointer) {
      if (b.args[i].elem == ElemType::F32 && arg.bytes.size() == 4) {
        float f;
        std::memcpy(&f, arg.bytes.data(), 4);
        double d = f;
        std::vector<uint8_t> bytes(8);
        std::memcpy(bytes.data(), &d, 8);
        p.storage.push_back(bytes);
      } else {
        p.storage.push_back(arg.bytes);
      }
      continue;
    }
    const DevAlloc &d = ls.allocs[arg.alloc];
    CUdeviceptr v = d.ref + (d.promoted ? arg.offset * 2 : arg.offset);
    std::vector<uint8_t> bytes(sizeof v);
    std::memcpy(bytes.data(), &v, sizeof v);
    p.storage.push_back(bytes);
  }
  p.finish();
  return p;
}

struct Config {
  unsigned grid[3], block[3], shared;
};

Config configFor(const CapturedLaunch &cap, const LaunchOverride &o, bool doubleShared) {
  Config c;
  for (int i = 0; i < 3; ++i) {
    c.grid[i] = o.hasGrid ? o.grid[i] : cap.grid[i];
    c.block[i] = o.hasBlock ? o.block[i] : cap.block[i];
  }
  c.shared = o.hasShared ? o.sharedBytes : (doubleShared ? cap.sharedBytes * 2 : cap.sharedBytes);
  return c;
}

/// A variant's configuration for one captured launch: its remap applied to
/// that launch's grid and block (each launch on its own), else its fixed
/// override. The tuner checked the remap on these launches; a bundle from
/// elsewhere may hold one that gives no CUDA launch, which is the
/// variant's failure, not the worker's.
Expected<Config> variantConfig(const CapturedLaunch &cap, const VariantSpec &spec) {
  if (spec.remap.empty())
    return configFor(cap, spec.launch, false);
  Expected<LaunchOverride> o = LaunchRemap{spec.remap}.overrideFor(cap.grid, cap.block);
  if (!o.ok())
    return o.error();
  o->hasShared = spec.launch.hasShared;
  o->sharedBytes = spec.launch.sharedBytes;
  return configFor(cap, *o, false);
}

CUresult launch(Context &c, CUfunction fn, const Config &cfg, ArgPack &args) {
  if (cfg.shared > 48 * 1024)
    c.api->cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(cfg.shared));
  return c.api->cuLaunchKernel(fn, cfg.grid[0], cfg.grid[1], cfg.grid[2], cfg.block[0],
                               cfg.block[1], cfg.block[2], cfg.shared, nullptr,
                               args.pointers.data(), nullptr);
}

/// Puts every buffer back into its state before the launch (write-only ones
/// poisoned) and re-arms the red zones. Asynchronous on the legacy stream.
Status restore(Context &c, LaunchState &ls) {
  const DriverApi &a = *c.api;
  for (DevAlloc &d : ls.allocs) {
    TRY(checkCu(a.cuMemsetD8Async(d.raw, kGuardByte, kGuardBytes, nullptr), "cuMemsetD8Async"));
    TRY(checkCu(a.cuMemsetD8Async(d.work + d.size, kGuardByte, kGuardBytes, nullptr),
                "cuMemsetD8Async"));
    if (d.size == 0)
      continue;
    if (d.writeOnly)
      TRY(checkCu(a.cuMemsetD8Async(d.work, kPoisonByte, d.size, nullptr), "cuMemsetD8Async"));
    else
      TRY(checkCu(a.cuMemcpyDtoDAsync(d.work, d.pristine, d.size, nullptr), "cuMemcpyDtoDAsync"));
  }
  return Status::success();
}

/// Runs the promoted reference once and keeps its float outputs as doubles.
RunError runReference(Context &c, const Bundle &b, Module &ref, LaunchState &ls) {
  RunError err;
  ArgPack args = referenceArgs(b, ls);
  Config cfg = configFor(*ls.cap, b.reference.launch, true);
  CUresult r = launch(c, ref.fn, cfg, args);
  if (r == CUDA_SUCCESS)
    r = c.api->cuCtxSynchronize();
  if (r != CUDA_SUCCESS) {
    err.failed = true;
    err.text = "the reference kernel failed: " + checkCu(r, "launch").message();
    return err;
  }
  for (size_t i = 0; i < ls.allocs.size(); ++i) {
    DevAlloc &d = ls.allocs[i];
    if (d.elem != ElemType::F32 && d.elem != ElemType::F64)
      continue;
    size_t n = d.promoted ? d.size / 4 : d.size / 8;
    ls.reference[i].resize(n);
    if (n)
      r = c.api->cuMemcpyDtoH(ls.reference[i].data(), d.ref, n * 8);
    if (r != CUDA_SUCCESS) {
      err.failed = true;
      err.text = checkCu(r, "reading the reference output").message();
      return err;
    }
  }
  return err;
}

/// Reads back every buffer after a run and applies the tolerance rule.
RunError checkOutputs(Context &c, const Bundle &b, LaunchState &ls, bool fastMath,
                      const std::string &label, VerifyResult &vr) {
  RunError err;
  for (size_t i = 0; i < ls.allocs.size(); ++i) {
    DevAlloc &d = ls.allocs[i];
    size_t bytes = d.size + 2 * kGuardBytes;
    if (!d.readback) {
      void *pinned = nullptr;
      if (c.api->cuMemAllocHost(&pinned, bytes) == CUDA_SUCCESS && pinned) {
        d.readback = static_cast<uint8_t *>(pinned);
        d.readbackPinned = true;
      } else {
        d.readbackHeap.resize(bytes);
        d.readback = d.readbackHeap.data();
      }
    }
    uint8_t *host = d.readback;
    CUresult r = c.api->cuMemcpyDtoH(host, d.raw, bytes);
    if (r != CUDA_SUCCESS) {
      err.failed = true;
      err.text = checkCu(r, "reading back outputs").message();
      return err;
    }
    size_t before = 0, after = 0;
    for (size_t k = 0; k < kGuardBytes; ++k) {
      before += host[k] != kGuardByte;
      after += host[kGuardBytes + d.size + k] != kGuardByte;
    }
    if (before || after) {
      vr.pass = false;
      std::ostringstream os;
      os << label << ": wrote outside the buffer of " << d.name << " (" << before
         << " bytes changed in the red zone before it, " << after << " after its end)";
      vr.notes.push_back(os.str());
    }
    CompareInput in;
    in.buffer = label + " " + d.name;
    in.elem = d.elem;
    in.variant = host + kGuardBytes;
    in.original = ls.cap->allocs[i].after.data();
    in.count = d.size / elemSize(d.elem);
    in.fastMath = fastMath;
    if (ls.haveReference && !ls.reference[i].empty())
      in.reference = ls.reference[i].data();
    if (ls.baselines.size() != ls.allocs.size())
      ls.baselines.resize(ls.allocs.size());
    if (!ls.baselines[i])
      ls.baselines[i] = compareBaseline(in, b.tolerance);
    in.baseline = &*ls.baselines[i];
    compareBuffer(in, b.tolerance, vr);
  }
  return err;
}

std::string mismatchText(const Mismatch &m) {
  return m.buffer + " [" + std::to_string(m.index) + "]: expected " + m.expected + ", got " +
         m.got + ", allowed " + m.allowed;
}

struct Report {
  std::vector<std::string> lines;
  void add(const std::string &head, const std::string &text) {
    std::string t = text;
    for (char &ch : t)
      if (ch == '\n')
        ch = ' ';
    lines.push_back(head + " " + t);
  }
  Status write(const std::string &path) {
    std::string text;
    for (const std::string &l : lines)
      text += l + "\n";
    return writeFileAtomically(path, text.data(), text.size());
  }
};

Expected<std::vector<const CapturedLaunch *>> selectLaunches(const Bundle &b,
                                                             std::vector<CaptureFile> &files) {
  for (const std::string &c : b.captures) {
    Expected<CaptureFile> f = readCaptureFile(b.path(c));
    if (!f.ok())
      return f.error();
    files.push_back(f.take());
  }
  std::vector<const CapturedLaunch *> out;
  for (const CaptureFile &f : files)
    for (const CapturedLaunch &l : f.launches)
      if (l.kernelKey == b.kernelKey) {
        TRY(checkSignature(b, l));
        out.push_back(&l);
      }
  if (out.empty())
    return makeError("the captures hold no launch of kernel key '", b.kernelKey, "'");
  return out;
}

const VariantSpec *findSpec(const Bundle &b, const std::string &id) {
  if (id == "original")
    return &b.original;
  for (const VariantSpec &v : b.variants)
    if (v.id == id)
      return &v;
  return nullptr;
}

// --- verify ------------------------------------------------------------

/// One kernel's set-up, shared by the candidates of a worker's requests:
/// its captured launches, the reference module, and each launch's device
/// state with the reference's outputs and the comparison baselines
/// (LaunchState), made at its first use. Every run restores the buffers from
/// their pristine copies first; a candidate that damaged what the next one
/// reads could only make that one fail, and a worker stops at the first
/// candidate that is not ok anyway.
struct KernelSetup {
  std::vector<CaptureFile> files;
  std::vector<const CapturedLaunch *> launches;
  Module ref;
  std::vector<LaunchState> states; // per launch; cap == nullptr until set up
};

/// What a worker keeps between requests: the context and the set-up of
/// each kernel by its key (setupKey). A one-shot worker serves one request.
struct WorkerSession {
  Context c;
  int gpu = -1;
  std::map<std::string, std::unique_ptr<KernelSetup>> setups;
  /// The last request found its kernel's set-up made by an earlier one.
  bool keptSetup = false;
  /// The last verification request found every candidate ok.
  bool verifiedAll = false;
  // The timing's L2 flush buffer and events, made at the first timing.
  CUdeviceptr flush = 0;
  size_t flushWords = 0;
  CUevent start = nullptr, stop = nullptr, stopAll = nullptr;
};

Status sessionContext(WorkerSession &s, int gpu) {
  if (s.gpu == gpu)
    return Status::success();
  if (s.gpu >= 0)
    return makeError("this kept worker serves GPU ", s.gpu, ", not GPU ", gpu);
  TRY(initContext(gpu, s.c));
  s.gpu = gpu;
  return Status::success();
}

/// What makes two requests' set-ups the same: the bundle without its
/// variants and directory, each capture file by its real path, size and
/// modification time, and the reference cubin's bytes.
Expected<std::string> setupKey(const Bundle &b, const std::string &workDir) {
  Bundle k = b;
  k.dir.clear();
  k.variants.clear();
  k.captures.clear();
  for (const std::string &c : b.captures) {
    char real[4096];
    struct stat st;
    if (!::realpath(b.path(c).c_str(), real) || ::stat(real, &st) != 0)
      return makeError("cannot read capture ", b.path(c));
    k.captures.push_back(std::string(real) + "@" + std::to_string(st.st_size) + "@" +
                         std::to_string(st.st_mtim.tv_sec) + "." +
                         std::to_string(st.st_mtim.tv_nsec));
  }
  std::string key = formatManifest(k);
  if (b.hasReference) {
    Expected<std::vector<uint8_t>> ref = readWholeFile(workDir + "/reference.cubin");
    if (!ref.ok())
      return ref.error();
    key += "reference-cubin " + std::to_string(laneHash64(ref->data(), ref->size())) + "\n";
  }
  return key;
}

void freeSetup(Context &c, KernelSetup &ks) {
  const DriverApi &a = *c.api;
  for (LaunchState &ls : ks.states)
    for (DevAlloc &d : ls.allocs) {
      for (CUdeviceptr p : {d.raw, d.pristine, d.ref})
        if (p)
          (void)a.cuMemFree(p);
      if (d.readbackPinned)
        (void)a.cuMemFreeHost(d.readback);
    }
  if (ks.ref.mod)
    (void)a.cuModuleUnload(ks.ref.mod);
  ks.states.clear();
}

/// The set-up of bundle b's kernel: the one an earlier request of this
/// worker made when the key is the same, else a fresh one (a kept worker
/// holds one kernel's: it serves one kernel, and a new key replaces it).
Expected<KernelSetup *> kernelSetup(WorkerSession &s, const Bundle &b, const std::string &workDir) {
  Expected<std::string> key = setupKey(b, workDir);
  if (!key.ok())
    return key.error();
  auto it = s.setups.find(*key);
  s.keptSetup = it != s.setups.end();
  if (s.keptSetup)
    return it->second.get();
  for (auto &[k, old] : s.setups)
    freeSetup(s.c, *old);
  s.setups.clear();
  auto ks = std::make_unique<KernelSetup>();
  auto launches = selectLaunches(b, ks->files);
  if (!launches.ok())
    return launches.error();
  ks->launches = *launches;
  if (b.hasReference) {
    Expected<Module> r = loadModule(s.c, workDir + "/reference.cubin", b.reference.entry);
    if (!r.ok())
      return r.error().withContext("reference");
    ks->ref = *r;
  }
  ks->states.resize(ks->launches.size());
  KernelSetup *out = ks.get();
  s.setups[*key] = std::move(ks);
  return out;
}

/// Sets up launch li of the kernel (device state and the reference's
/// outputs) unless an earlier candidate or request did.
Status ensureLaunch(Context &c, const Bundle &b, KernelSetup &ks, size_t li) {
  LaunchState &ls = ks.states[li];
  if (ls.cap)
    return Status::success();
  TRY(setupLaunch(c, b, *ks.launches[li], b.hasReference, ls));
  if (b.hasReference) {
    RunError e = runReference(c, b, ks.ref, ls);
    if (e.failed) {
      ls.cap = nullptr; // not usable: set up again next time
      return Status::error(e.text);
    }
  }
  return Status::success();
}

/// Verifies one candidate and writes WORK/ID.verify. `outcome` receives
/// what the report says; the return value is the worker's exit code so far
/// (0: the report is complete; 2: our setup failed; 3: a CUDA error).
int verifyCandidate(const WorkerArgs &w, const Bundle &bundle, Context &c, KernelSetup &ks,
                    bool keptSetup, const std::string &id, std::string &outcome) {
  Report rep;
  std::string out = w.workDir + "/" + id + ".verify";
  auto finish = [&](const char *what, int code) {
    outcome = what;
    rep.lines.insert(rep.lines.begin(), std::string("outcome ") + what);
    Status s = rep.write(out);
    if (!s.ok())
      std::fprintf(stderr, "%s\n", s.message().c_str());
    return code;
  };
  auto setupError = [&](const Status &s) {
    rep.add("detail", "worker setup failed: " + s.message());
    return finish("setup-error", 2);
  };
  const Bundle *b = &bundle;
  const VariantSpec *spec = findSpec(*b, id);
  if (!spec)
    return setupError(makeError("no variant '", id, "' in the bundle"));
  rep.add("gpu", c.name);
  rep.add("mode", verifyModeOf(*b));
  rep.add("setup", keptSetup ? "kept" : "made");
  Expected<Module> mod = loadModule(c, w.workDir + "/" + spec->id + ".cubin", spec->entry);
  if (!mod.ok()) {
    rep.add("detail", mod.error().message());
    return finish("load-error", 0);
  }
  VerifyResult vr;
  vr.mode = verifyModeOf(*b);
  bool wrongFirst = false;
  for (size_t li = 0; li < ks.launches.size(); ++li) {
    if (Status s = ensureLaunch(c, *b, ks, li); !s.ok())
      return setupError(s);
    LaunchState &ls = ks.states[li];
    ArgPack args = variantArgs(*b, ls);
    Expected<Config> config = variantConfig(*ls.cap, *spec);
    if (!config.ok()) {
      rep.add("detail", "launch " + std::to_string(li) + ": " + config.error().message());
      return finish("crash", 0);
    }
    const Config &cfg = *config;
    // Two runs: a variant must not depend on state left by an earlier one.
    for (int run = 0; run < 2; ++run) {
      std::string label = "launch " + std::to_string(li) + " run " + std::to_string(run);
      CUresult r = CUDA_SUCCESS;
      if (Status s = restore(c, ls); !s.ok())
        return setupError(s);
      r = launch(c, mod->fn, cfg, args);
      if (r == CUDA_SUCCESS)
        r = c.api->cuCtxSynchronize();
      if (r != CUDA_SUCCESS) {
        rep.add("detail", label + ": " + checkCu(r, "kernel").message());
        // Errors that say the context or device is gone, not the kernel.
        bool infrastructure = r == CUDA_ERROR_CONTEXT_IS_DESTROYED ||
                              r == CUDA_ERROR_INVALID_CONTEXT ||
                              r == CUDA_ERROR_DEVICE_UNAVAILABLE || r == CUDA_ERROR_OUT_OF_MEMORY;
        return finish(infrastructure ? "setup-error" : "crash", 3);
      }
      bool passBefore = vr.pass;
      RunError e = checkOutputs(c, *b, ls, spec->fastMath, label, vr);
      if (e.failed) {
        rep.add("detail", label + ": " + e.text);
        return finish("crash", 3);
      }
      if (!vr.pass && run == 0)
        wrongFirst = true;
      if (passBefore && !vr.pass && run == 1 && !wrongFirst)
        rep.add("detail", "correct on the first run, wrong on a repeated run "
                          "of the same inputs: the variant keeps state "
                          "between launches");
      if (!vr.pass)
        break;
    }
    if (!vr.pass)
      break;
  }
  (void)c.api->cuModuleUnload(mod->mod);
  for (const std::string &n : vr.notes)
    rep.add("detail", n);
  if (!vr.pass)
    rep.add("detail", vr.badElements
                          ? std::to_string(vr.badElements) + " elements outside the tolerance (" +
                                vr.mode + ")"
                          : "a buffer's RMS error outside the tolerance (" + vr.mode + ")");
  for (const Mismatch &m : vr.mismatches)
    rep.add("mismatch", mismatchText(m));
  return finish(vr.pass ? "ok" : "wrong", 0);
}

/// Kills this worker when one candidate runs past its limit, after writing
/// that candidate's report (a hung kernel cannot be interrupted otherwise).
class Watchdog {
public:
  explicit Watchdog(double limitSeconds) : limit(limitSeconds) {
    if (limit > 0)
      thread = std::thread([this] { watch(); });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
    }
    wake.notify_all();
    if (thread.joinable())
      thread.join();
  }
  /// The candidate now running, and its report's path.
  void start(const std::string &reportPath) {
    std::lock_guard<std::mutex> lock(mutex);
    report = reportPath;
    deadline = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(limit));
    wake.notify_all();
  }
  void stop() {
    std::lock_guard<std::mutex> lock(mutex);
    report.clear();
  }

private:
  void watch() {
    std::unique_lock<std::mutex> lock(mutex);
    while (!done) {
      if (report.empty()) {
        wake.wait(lock);
        continue;
      }
      if (wake.wait_until(lock, deadline) == std::cv_status::timeout && !report.empty() &&
          std::chrono::steady_clock::now() >= deadline) {
        Report rep;
        rep.lines.push_back("outcome timeout");
        rep.add("detail", "killed after the time limit of the verification worker (a hang or "
                          "an endless loop)");
        (void)rep.write(report);
        std::fflush(nullptr);
        std::_Exit(4);
      }
    }
  }
  double limit;
  std::thread thread;
  std::mutex mutex;
  std::condition_variable wake;
  bool done = false;
  std::string report;
  std::chrono::steady_clock::time_point deadline;
};

// One worker verifies its candidates in order and stops after the first
// that is not ok (a fault may have left the context unusable, a wrong
// variant may have written where it should not): the evaluator starts a
// fresh worker for the rest.
int verifyWorker(const WorkerArgs &w, WorkerSession &session) {
  session.verifiedAll = false;
  auto setupFailed = [&](const Status &s) {
    Report rep;
    rep.lines.push_back("outcome setup-error");
    rep.add("detail", "worker setup failed: " + s.message());
    Status ws = rep.write(w.workDir + "/" + w.ids.at(0) + ".verify");
    if (!ws.ok())
      std::fprintf(stderr, "%s\n", ws.message().c_str());
    return 2;
  };
  Expected<Bundle> b = readBundle(w.bundleDir);
  if (!b.ok())
    return setupFailed(b.error());
  if (Status s = sessionContext(session, w.gpu); !s.ok())
    return setupFailed(s);
  Expected<KernelSetup *> ks = kernelSetup(session, *b, w.workDir);
  if (!ks.ok())
    return setupFailed(ks.error());
  Watchdog watchdog(w.candidateTimeout);
  for (const std::string &id : w.ids) {
    watchdog.start(w.workDir + "/" + id + ".verify");
    std::string outcome;
    int code = verifyCandidate(w, *b, session.c, **ks, session.keptSetup, id, outcome);
    watchdog.stop();
    if (code != 0 || outcome != "ok")
      return code;
  }
  session.verifiedAll = true;
  return 0;
}

// --- time --------------------------------------------------------------

int timingWorker(const WorkerArgs &w, WorkerSession &session) {
  Report rep;
  std::string out = w.workDir + "/timing.txt";
  auto fail = [&](const std::string &text) {
    rep.add("error", text);
    Status s = rep.write(out);
    (void)s;
    return 2;
  };
  Expected<Bundle> b = readBundle(w.bundleDir);
  if (!b.ok())
    return fail(b.error().message());
  if (Status s = sessionContext(session, w.gpu); !s.ok())
    return fail(s.message());
  Context &c = session.c;
  Expected<KernelSetup *> setup = kernelSetup(session, *b, w.workDir);
  if (!setup.ok())
    return fail(setup.error().message());
  KernelSetup &ks = **setup;
  const DriverApi &a = *c.api;
  rep.add("gpu", c.name);
  rep.add("setup", session.keptSetup ? "kept" : "made");

  // 1. Modules of all candidates, the original first.
  struct Cand {
    std::string id;
    const VariantSpec *spec;
    Module mod;
    std::vector<double> t, tGuard;
    bool wrong = false;
    VerifyResult vr;
  };
  std::vector<Cand> cands;
  for (const std::string &id : w.ids) {
    const VariantSpec *spec = findSpec(*b, id);
    if (!spec)
      return fail("no variant '" + id + "' in the bundle");
    Expected<Module> m = loadModule(c, w.workDir + "/" + id + ".cubin", spec->entry);
    if (!m.ok())
      return fail(id + ": " + m.error().message());
    cands.push_back({id, spec, *m, {}, {}, false, {}});
  }
  // A kept worker serves more requests: this one's modules go with it.
  struct Unload {
    const DriverApi &a;
    std::vector<Cand> &cands;
    ~Unload() {
      for (Cand &cd : cands)
        (void)a.cuModuleUnload(cd.mod.mod);
    }
  } unload{a, cands};

  // 2. Device state of every captured launch, shared by all candidates
  // (each run restores it first), and the reference outputs: kept from
  // the verification when this worker did it.
  for (size_t li = 0; li < ks.launches.size(); ++li)
    if (Status s = ensureLaunch(c, *b, ks, li); !s.ok())
      return fail(s.message());
  std::vector<LaunchState> &states = ks.states;
  std::vector<std::vector<ArgPack>> packs(cands.size());
  std::vector<std::vector<Config>> cfgs(cands.size());
  for (size_t ci = 0; ci < cands.size(); ++ci)
    for (LaunchState &ls : states) {
      packs[ci].push_back(variantArgs(*b, ls));
      Expected<Config> config = variantConfig(*ls.cap, *cands[ci].spec);
      if (!config.ok()) // verification refused it first
        return fail(cands[ci].id + ": " + config.error().message());
      cfgs[ci].push_back(*config);
    }

  // 3. The L2 flush buffer: twice the L2, rewritten before every launch.
  if (!session.flush) {
    session.flushWords = std::max<size_t>(c.l2Bytes * 2, 1 << 20) / 4;
    if (Status s = checkCu(a.cuMemAlloc(&session.flush, session.flushWords * 4), "cuMemAlloc");
        !s.ok())
      return fail(s.message());
    a.cuEventCreate(&session.start, CU_EVENT_DEFAULT);
    a.cuEventCreate(&session.stop, CU_EVENT_DEFAULT);
    a.cuEventCreate(&session.stopAll, CU_EVENT_DEFAULT);
  }
  const CUdeviceptr flush = session.flush;
  const size_t flushWords = session.flushWords;
  CUevent start = session.start, stop = session.stop, stopAll = session.stopAll;
  unsigned flushValue = 0;

  // One timed execution of candidate ci over all captured launches. The
  // stop event goes on the legacy stream, which waits for all blocking
  // streams; stopAll is recorded after a device-wide synchronization, so
  // work that escaped both (device-side launches, other streams) shows up
  // as a gap between the two.
  auto runOnce = [&](size_t ci, bool validate, double &t, double &tg, std::string &crash) -> bool {
    t = tg = 0;
    for (size_t li = 0; li < states.size(); ++li) {
      LaunchState &ls = states[li];
      if (Status s = restore(c, ls); !s.ok()) {
        crash = s.message();
        return false;
      }
      a.cuMemsetD32Async(flush, flushValue++, flushWords, nullptr);
      a.cuEventRecord(start, nullptr);
      CUresult r = launch(c, cands[ci].mod.fn, cfgs[ci][li], packs[ci][li]);
      a.cuEventRecord(stop, nullptr);
      if (r == CUDA_SUCCESS)
        r = a.cuCtxSynchronize();
      if (r == CUDA_SUCCESS) {
        a.cuEventRecord(stopAll, nullptr);
        r = a.cuEventSynchronize(stopAll);
      }
      float ms = 0, msAll = 0;
      if (r == CUDA_SUCCESS)
        r = a.cuEventElapsedTime(&ms, start, stop);
      if (r == CUDA_SUCCESS)
        r = a.cuEventElapsedTime(&msAll, start, stopAll);
      if (r != CUDA_SUCCESS) {
        crash = checkCu(r, "timed launch").message();
        return false;
      }
      t += ms;
      tg += msAll;
      if (validate) {
        std::string label = "timed launch " + std::to_string(li);
        RunError e = checkOutputs(c, *b, ls, cands[ci].spec->fastMath, label, cands[ci].vr);
        if (e.failed) {
          crash = e.text;
          return false;
        }
        if (!cands[ci].vr.pass)
          cands[ci].wrong = true;
      }
    }
    return true;
  };
  auto crashed = [&](size_t ci, const std::string &text) {
    rep.add("crashed", cands[ci].id + " " + text);
    Status s = rep.write(out);
    (void)s;
    return 3;
  };

  // 4. Warm-ups, discarded.
  for (size_t ci = 0; ci < cands.size(); ++ci)
    for (int k = 0; k < kWarmups; ++k) {
      double t, tg;
      std::string crash;
      if (!runOnce(ci, false, t, tg, crash))
        return crashed(ci, crash);
    }

  // 5. Rounds in a fresh random order until the window is spent; one early
  // round and the last one re-validate the outputs of the timed launches.
  // Racing (issue 15 item 5): from kMinRounds on, a variant that cannot win
  // (Stats.h, raceVerdict) stops being timed after one more validated run,
  // and once the race is decided one last validated round ends the window.
  std::mt19937_64 rng(w.seed);
  int checkRound = 2 + int(rng() % 5);
  std::vector<size_t> order(cands.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::vector<bool> racing(cands.size(), true);
  auto begin = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  };
  int rounds = 0, raceAt = kMinRounds;
  bool last = false, decided = false;
  while (!last) {
    last = decided || rounds + 1 >= kMaxRounds ||
           (rounds + 1 >= kMinRounds && elapsed() >= w.windowSeconds);
    bool validate = last || rounds == checkRound;
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t ci : order) {
      if (!racing[ci])
        continue;
      double t, tg;
      std::string crash;
      if (!runOnce(ci, validate, t, tg, crash))
        return crashed(ci, crash);
      cands[ci].t.push_back(t);
      cands[ci].tGuard.push_back(tg);
    }
    ++rounds;
    if (last || !w.race || rounds < raceAt)
      continue;
    raceAt = rounds + std::max(2, rounds / 2); // the bootstrap is not free
    std::vector<size_t> entries;
    std::vector<std::optional<SpeedupEstimate>> est;
    for (size_t ci = 1; ci < cands.size(); ++ci)
      if (racing[ci]) {
        entries.push_back(ci);
        est.push_back(bootstrapSpeedup(cands[0].t, cands[ci].t, 10, 1000, w.seed + ci));
      }
    RaceVerdict verdict = raceVerdict(est);
    for (size_t j = 0; j < entries.size(); ++j) {
      if (!verdict.cannotWin[j])
        continue;
      size_t ci = entries[j];
      double t, tg;
      std::string crash;
      if (!runOnce(ci, true, t, tg, crash)) // its last run is validated too
        return crashed(ci, crash);
      racing[ci] = false;
      char range[64];
      std::snprintf(range, sizeof range, "%.3fx to %.3fx", est[j]->lo, est[j]->hi);
      rep.add("detail", cands[ci].id + " timing stopped after " + std::to_string(rounds) +
                            " rounds: it cannot win (" + range + ")");
    }
    decided = verdict.decided;
  }
  // 6. The report: per-round samples (paired by index) and re-validation.
  rep.add("rounds", std::to_string(rounds));
  rep.add("window-s", std::to_string(elapsed()));
  for (Cand &cd : cands) {
    std::ostringstream ts, gs;
    char buf[32];
    for (double v : cd.t) {
      std::snprintf(buf, sizeof buf, " %.6g", v);
      ts << buf;
    }
    for (double v : cd.tGuard) {
      std::snprintf(buf, sizeof buf, " %.6g", v);
      gs << buf;
    }
    rep.add("samples", cd.id + ts.str());
    rep.add("samples-all", cd.id + gs.str());
    rep.add("revalidate", cd.id + (cd.wrong ? " wrong" : " ok"));
    for (const std::string &n : cd.vr.notes)
      rep.add("detail", cd.id + " " + n);
    for (const Mismatch &m : cd.vr.mismatches)
      rep.add("mismatch", cd.id + " " + mismatchText(m));
  }
  if (Status s = rep.write(out); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return 2;
  }
  return 0;
}

} // namespace

Expected<std::string> deviceName(int ordinal) {

  Expected<const DriverApi *> d = driver();
  if (!d.ok())
    return d.error();
  const DriverApi &a = **d;
  TRY(checkCu(a.cuInit(0), "cuInit"));
  int count = 0;
  TRY(checkCu(a.cuDeviceGetCount(&count), "cuDeviceGetCount"));
  if (ordinal < 0 || ordinal >= count)
    return makeError("no GPU ", ordinal, " (this machine has ", count, ")");
  CUdevice dev;
  TRY(checkCu(a.cuDeviceGet(&dev, ordinal), "cuDeviceGet"));
  char name[256] = {0};
  TRY(checkCu(a.cuDeviceGetName(name, sizeof name - 1, dev), "cuDeviceGetName"));
  return std::string(name);
}

int holdContext(int gpu, double maxSeconds) {
  Context c;
  if (Status s = initContext(gpu, c); !s.ok()) {
    std::fprintf(stderr, "cudal1-eval: cannot hold a context on GPU %d: %s\n", gpu,
                 s.message().c_str());
    return 2;
  }
  std::printf("holding %s\n", c.name.c_str());
  std::fflush(stdout);
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (maxSeconds > 0 && waited >= maxSeconds)
      return 0;
    pollfd in{0, POLLIN, 0};
    int n = ::poll(&in, 1, 1000);
    if (n < 0 && errno != EINTR)
      return 0;
    char buf[256];
    if (n > 0 && ::read(0, buf, sizeof buf) <= 0) // closed: the holder's owner let go
      return 0;
  }
}

namespace {

/// A kept worker's request: the words of `cudal1-eval --worker ...`.
Expected<WorkerArgs> parseRequest(const std::vector<std::string> &words) {
  Expected<EvalArgs> args = parseEvalArgs(words);
  if (!args.ok())
    return makeError("request: ", args.error().message());
  if (args->help || args->version || !args->request.bundleDirs.empty() || args->request.probe ||
      args->request.holdContext)
    return makeError("request: a kept worker takes --worker and its flags only");
  const WorkerArgs &w = args->request.worker;
  if (w.mode != "verify" && w.mode != "time")
    return makeError("request: a kept worker verifies or times, not '", w.mode, "'");
  if (w.ids.empty())
    return makeError("request: no variant ids");
  return w;
}

int runRequest(const WorkerArgs &args, WorkerSession &session) {
  if (args.ids.empty()) {
    std::fprintf(stderr, "worker: no variant ids\n");
    return 2;
  }
  if (args.mode == "verify")
    return verifyWorker(args, session);
  if (args.mode == "time")
    return timingWorker(args, session);
  std::fprintf(stderr, "worker: unknown mode '%s'\n", args.mode.c_str());
  return 2;
}

} // namespace

int runWorker(const WorkerArgs &args) {
  if (args.mode == "serve") {
    // The session lives as long as the server: the set-up of its kernel is
    // kept from one request to the next while every candidate is ok.
    WorkerSession session;
    return serveKeptWorker(
        args.socket, args.idleSeconds, [&](const std::vector<std::string> &words, bool &keep) {
          Expected<WorkerArgs> w = parseRequest(words);
          if (!w.ok()) {
            std::fprintf(stderr, "kept worker: %s\n", w.error().message().c_str());
            keep = false;
            return 2;
          }
          int code = runRequest(*w, session);
          // A verification that stopped (not ok, a fault, a failed set-up)
          // or a timing that did not finish leaves this worker unusable.
          keep = code == 0 && (w->mode == "time" || session.verifiedAll);
          return code;
        });
  }
  WorkerSession session;
  return runRequest(args, session);
}

} // namespace cudal1::cuda
