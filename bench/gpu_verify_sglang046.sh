#!/usr/bin/env bash
# Runs on a lent GPU machine from a checkout of this repository, after
# `source .gpu/b/install.sh` (flash-attn-4: ../shared/gpu/README.md), with $ZEROOPT_BENCH_CACHE
# holding the pinned SGLang file (`python bench/pinned_source.py --export DIR` on a machine with
# an index):   bash bench/gpu_verify_sglang046.sh [sanity|verify|pytest|all]
# zeroopt is imported from this checkout through a `zeroopt` link in a PYTHONPATH folder (the
# repository root is the package).
set -u
export PYTHONUNBUFFERED=1
export FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=1 FLASH_ATTENTION_CUTE_DSL_CACHE_DIR=/tmp/fa4cache
mkdir -p /tmp/zo && ln -sfn "$PWD" /tmp/zo/zeroopt
export PYTHONPATH="/tmp/zo${PYTHONPATH:+:$PYTHONPATH}"
out="${OUT:-bench/results}"
mkdir -p "$out"
mode="${1:-all}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import torch, sys; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'python', sys.version.split()[0])"
if [ "$mode" = sanity ] || [ "$mode" = all ]; then
  # One run of each configuration, timed (the first compiles FA4's kernels into the cache).
  # A configuration whose zeros baseline fails with FA4 is left out of `verify` (and reported).
  passing=""
  for c in decode local encdec eagle1 eagle2; do
    if ZEROOPT_SGLANG046_CONFIGS=$c timeout 300 python3 - > "$out/sanity_$c.log" 2>&1 <<'PY'; then passing="$passing${passing:+,}$c"; fi
import os, sys, time
sys.path.insert(0, "bench")
t = time.time()
import sglang046_cuda_graph as h
out = h.scenario("cuda")
print(os.environ["ZEROOPT_SGLANG046_CONFIGS"], "FA4 in graphs:", h.uses_flash_attn("cuda"),
      "outputs", len(out), "finite", all(bool(v.isfinite().all()) for v in out.values()),
      "%.1f s" % (time.time() - t))
PY
    tail -3 "$out/sanity_$c.log"
  done
  echo "$passing" > "$out/configs.txt"
  echo "configurations that run with zeros: $passing"
  export ZEROOPT_SGLANG046_CONFIGS="$passing"
  t0=$(date +%s)
  python3 -c "import sys; sys.path.insert(0, 'bench'); import sglang046_cuda_graph as h; h.scenario('cuda')"
  echo "all configurations, one trial's scenario: $(( $(date +%s) - t0 )) s (process included)"
fi
if [ "$mode" = verify ] || [ "$mode" = all ]; then
  [ -f "$out/configs.txt" ] && export ZEROOPT_SGLANG046_CONFIGS="$(cat "$out/configs.txt")"
  python3 bench/gpu_verify_sglang046.py --device cuda --jobs "${JOBS:-8}" \
    --scan bench/results/scan_sglang046.json --out "$out" --table "$out/sglang046_table.md" 2>&1 \
    | tee "$out/verify_sglang046_cuda.log"
fi
if [ "$mode" = pytest ] || [ "$mode" = all ]; then
  python3 -m pytest -m gpu -q -p no:cacheprovider 2>&1 | tee "$out/pytest_gpu.txt" | tail -15
fi
