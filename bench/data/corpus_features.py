"""The kernels of a corpus program as cudal1-opt --analyze sees them now:
the key and analysis features the dataset's importers record
(import-bundle-results, import-sweep)."""
import json
import os
import subprocess


def corpus_kernels(cudal1_opt, corpus, program):
    """[(name, key, feature values or None)] and the feature version, of
    CORPUS/PROGRAM.cu; ([], None) when it is missing or does not analyze."""
    src = os.path.join(corpus, program + ".cu")
    if not os.path.exists(src):
        return [], None
    p = subprocess.run([cudal1_opt, src, "--analyze", "--", "-x", "cuda",
                        "--cuda-gpu-arch=sm_90", "-I", corpus], capture_output=True, text=True)
    if p.returncode != 0:
        return [], None
    out, version = [], None
    for k in json.loads(p.stdout).get("kernels", []):
        f = k.get("features")
        if k.get("key"):
            out.append((k.get("name", ""), k["key"], f["values"] if f else None))
            if f:
                version = f["version"]
    return out, version


def _opt(cudal1_opt, corpus, src, mode):
    p = subprocess.run([cudal1_opt, src, mode, "--", "-x", "cuda", "--cuda-gpu-arch=sm_90",
                        "-I", corpus], capture_output=True, text=True)
    return json.loads(p.stdout) if p.returncode == 0 else None


def corpus_program(cudal1_opt, corpus, program):
    """What an importer needs to key a plan of CORPUS/PROGRAM.cu as --tune
    would: the analysis (`--analyze`: kernel keys, features, the host code's
    key) and the legal space (`--list-transforms=json`: the launch, loop,
    sync and copy sites and the composed steps). None when the file is
    missing or does not parse."""
    src = os.path.join(corpus, program + ".cu")
    if not os.path.exists(src):
        return None
    analysis = _opt(cudal1_opt, corpus, src, "--analyze")
    listing = _opt(cudal1_opt, corpus, src, "--list-transforms=json")
    if analysis is None or listing is None:
        return None
    return {"file": os.path.basename(src), "analysis": analysis, "listing": listing}
