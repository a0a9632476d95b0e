#!/usr/bin/env bash
# Runs on the lent GPU machine, from the repository root, after `source .gpu/b/install.sh`:
#   bash bench/gpu_run.sh verify|rest|all|savings|real
# zeroopt is made importable without installing: the package-dir mapping needs a layout where
# zeroopt/runtime_checks etc. exist, so symlinks are added inside this (disposable) checkout;
# they resolve to the real files, so site paths still match by realpath. (A PYTHONPATH shim
# elsewhere is not enough: `python -m` puts the repository root, and its zeroopt/, first.)
set -u
export PYTHONUNBUFFERED=1
export FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=1 FLASH_ATTENTION_CUTE_DSL_CACHE_DIR=/tmp/fa4cache
for d in rules patcher runtime_checks fixtures; do [ -e "zeroopt/$d" ] || ln -s "../$d" "zeroopt/$d"; done
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
out="${OUT:-bench/results}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import torch, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'python', sys.version.split()[0])"
mode="${1:-verify}"
case "$mode" in
  verify|all)
    t0=$(date +%s)
    python3 - <<'PY' || exit 3
import time, torch
t = time.time()
from zeroopt.fixtures.flash_scenario import scenario
from zeroopt.fixtures.flash_backend import _flash_attn_func
print("flash_attn.cute importable:", _flash_attn_func() is not None)
out = scenario("cuda")
print("scenario on cuda ok in %.1f s:" % (time.time() - t), {k: tuple(v.shape) for k, v in out.items()})
PY
    echo "sanity run took $(( $(date +%s) - t0 )) s"
    python3 bench/gpu_verify_fixture.py --device cuda --jobs "${JOBS:-4}" --out "$out" 2>&1 | tee "$out/verify_all.log"
    # The analysis's own safe set (lifecycle pass included), poisoned together.
    python3 bench/gpu_verify_fixture.py --device cuda --jobs "${JOBS:-4}" --part static --out "$out" 2>&1 | tee "$out/verify_static.log"
    ;;
esac
case "$mode" in
  rest|all)
    python3 bench/gpu_verify_fixture.py --device cuda --jobs "${JOBS:-4}" --part safe --out "$out" 2>&1 | tee "$out/verify_safe.log"
    python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_fixture_gpu.py 2>&1 | tail -15 | tee "$out/pytest_gpu.log"
    python3 bench/gpu_savings.py --out "$out" 2>&1 | tee "$out/gpu_savings.log"
    ;;
  savings)
    python3 bench/gpu_savings.py --out "$out" 2>&1 | tee "$out/gpu_savings.log"
    ;;
esac
case "$mode" in
  real|all)
    # SGLang 0.5.23's released _init_full_cg_prefill_metadata (bench/pinned_source.py) under a full
    # prefill CUDA graph with FlashAttention 4: the scan's one `safe` there, checked at run time.
    t0=$(date +%s)
    python3 - <<'PY' || exit 4
import sys, time
sys.path.insert(0, "bench")
t = time.time()
import sglang_full_cg_prefill as h
print("flash_attn.cute used (CUDA graphs):", h.uses_flash_attn("cuda"))
out = h.scenario("cuda")
print("real-sglang scenario on cuda ok in %.1f s:" % (time.time() - t), {k: tuple(v.shape) for k, v in out.items()})
PY
    echo "real-sglang sanity run took $(( $(date +%s) - t0 )) s"
    python3 bench/gpu_verify_real_sglang.py --device cuda --jobs "${JOBS:-4}" --out "$out" 2>&1 | tee "$out/verify_real_sglang.log"
    ;;
esac
