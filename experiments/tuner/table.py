#!/usr/bin/env python3
"""Joins fa-tune's --json results (tuned best and family default per problem) with peers/peers.py's CSV
(PyTorch SDPA FLASH_ATTENTION and CUDNN_ATTENTION, same shapes, same run) into one dated Markdown table:
TFLOP/s of each, tuned/default, tuned/FA2, tuned/cuDNN. Written to a temporary name, then renamed.

Usage: table.py --out table.md --peers peers_fwd.csv tune1.json [tune2.json ...]
"""
import argparse
import csv
import json
import os
import re

PROBLEM = re.compile(r"b(\d+) h(\d+)/(\d+) n(\d+)x(\d+) d(\d+) (\S+) (full|causal) (fwd|bwd)")


def read_peers(path):
    peers, header = {}, ""
    with open(path) as f:
        lines = f.readlines()
    if lines and lines[0].startswith("#"):
        header = lines[0][1:].strip()
        lines = lines[1:]
    for r in csv.DictReader(lines):
        key = (r["dtype"], int(r["head_dim"]), int(r["seqlen"]), r["mask"], r["direction"])
        peers.setdefault(key, {})[r["backend"]] = float(r["tflops"])
    return peers, header


def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--peers")
    ap.add_argument("tune_json", nargs="+")
    a = ap.parse_args()
    peers, peers_header = read_peers(a.peers) if a.peers and os.path.exists(a.peers) else ({}, "")
    rows, meta = [], None
    for path in a.tune_json:
        if not os.path.exists(path):
            continue
        with open(path) as f:
            doc = json.load(f)
        meta = meta or doc
        for r in doc["results"]:
            m = PROBLEM.match(r["problem"])
            if not m:
                continue
            b, hq, hkv, nq, nk, d, dtype, mask, direction = m.groups()
            rows.append((dtype, int(d), mask, int(nq), direction, r))
    rows.sort(key=lambda x: (x[0], x[1], x[2], x[3]))
    out = []
    if meta:
        out.append(f"# Tuned vs default vs peers, {meta.get('date', '')[:10]}\n")
        out.append(f"GPU {meta.get('gpu_name', meta.get('gpu'))}, driver {meta.get('driver', '?')} "
                   f"(CUDA driver API {meta.get('cuda_driver_api', '?')}), NVRTC {meta.get('nvrtc', '?')}; "
                   f"peers: {peers_header or 'not measured'}\n")
    out.append("| family | dtype | d | mask | n | tuned TFLOP/s | default TFLOP/s | tuned/default | FA2 "
               "| cuDNN | tuned/FA2 | tuned/cuDNN | measured | best config |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for dtype, d, mask, n, direction, r in rows:
        p = peers.get((dtype, d, n, mask, direction), {})
        fa2, cudnn = p.get("flash"), p.get("cudnn")
        tuned, default = r["tflops"], r["default_tflops"]
        out.append(f"| {r['family']} | {dtype} | {d} | {mask} | {n} | {tuned:.1f} | "
                   f"{default:.1f}{'' if default else ' (' + r.get('default_verdict', '?') + ')'} | "
                   f"{ratio(tuned, default)} | {fa2 or 0:.1f} | {cudnn or 0:.1f} | {ratio(tuned, fa2)} | "
                   f"{ratio(tuned, cudnn)} | {r['measured']}+{r['resumed']} | `{r['best_config']}` |")
    text = "\n".join(out) + "\n"
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, a.out)
    print(text)


if __name__ == "__main__":
    main()
