# lit configuration for cudal1's textual tests (rewrites, analyses, CLI output).
import os
import shutil
import subprocess

import lit.formats

config.name = "cudal1"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".cu", ".test"]
# gpu/ and Corpus/ hold ctest-driven programs, not lit tests.
config.excludes = ["Inputs", "unit", "gpu", "Corpus", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cudal1_obj_root, "test")

path = os.pathsep.join([config.cudal1_tools_dir, config.llvm_tools_dir,
                        os.path.join(config.cuda_root, "bin"),
                        config.environment.get("PATH", os.environ.get("PATH", ""))])
config.environment["PATH"] = path
# The shipped model (models/policy) would make --tune's default strategy the
# policy: tests see the heuristic unless they install a model themselves.
config.environment["CUDAL1_POLICY_MODEL"] = os.path.join(config.cudal1_obj_root, "no-policy-model")
for var in ["HOME", "TMPDIR", "CUDA_VISIBLE_DEVICES"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]

config.substitutions.append(("%python", config.python))
config.substitutions.append(("%src_root", config.cudal1_src_root))
config.substitutions.append(("%cuda_root", config.cuda_root))
config.substitutions.append(("%cudal1_tools", config.cudal1_tools_dir))
config.substitutions.append(("%cudal1_obj", config.cudal1_obj_root))
config.substitutions.append(("%cudal1_lib", os.path.join(config.cudal1_obj_root, "lib")))
config.substitutions.append(("%cuda_shim", config.cuda_shim_path))
config.substitutions.append(("%cuda_stub_include", config.cuda_stub_include))
config.substitutions.append(("%FileCheck", "FileCheck --enable-var-scope"))


def gpu_present():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        return subprocess.run([smi, "-L"], capture_output=True, timeout=20).returncode == 0
    except Exception:
        return False


if shutil.which("nvcc", path=path):
    config.available_features.add("nvcc")
# CUB ships with the CUDA toolkit's CCCL headers, which a header-only CUDA
# install may lack (passes/runtime/cub-sum.cuh needs it).
if any(os.path.isdir(os.path.join(config.cuda_root, "include", d)) for d in ("cub", "cccl/cub")):
    config.available_features.add("cub")
if gpu_present():
    config.available_features.add("cuda-gpu")
# Built only where SQLite was found (test/unit/TuneDB).
if shutil.which("tunedb-test-helper", path=config.cudal1_tools_dir):
    config.available_features.add("tunedb")
# Built only where libtorch was found (lib/Policy): the policy's network.
if os.path.exists(os.path.join(config.cudal1_obj_root, "lib", "libCudaL1PolicyTorch.so")):
    config.available_features.add("torch")
