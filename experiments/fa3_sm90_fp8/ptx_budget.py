#!/usr/bin/env python3
"""Instructions per key block and per score along one path through a kernel's PTX (NVRTC's output, no SASS).

    python3 experiments/fa3_sm90_fp8/ptx_budget.py PTX ENTRY_SUBSTRING PATH SCORES_PER_BLOCK

PTX is a file that kernels_src/tools/ptx_compare.py snapshot wrote; ENTRY_SUBSTRING picks the entry (e.g.
fa3_sm90_fwd); PATH lists the basic blocks (their $L__BB0_<n> numbers) that one key block of the steady-state
loop executes, in order, each as N (the whole block) or N:first (up to and including its first branch: the
taken side of a branch that skips the rest, e.g. a signalling thread's release or a mask that is not needed).
SCORES_PER_BLOCK: the scores one thread owns per key block (kBlockN / 2 for a 64-row warpgroup tile).
`--blocks` instead prints each basic block's size, ex2 count and branch targets, to find the path.
"""
import collections
import re
import sys

CLASSES = [  # (row name, PTX opcode regex, note on what SASS makes of it)
    ("MUFU ex2", r"ex2\.", "MUFU.EX2"),
    ("FP32 FFMA", r"fma\.rn\.f32", ""),
    ("FP32 FMNMX (max)", r"max\.f32", ""),
    ("FP32 FADD (add/sub/neg)", r"(add|sub|neg)\.f32", "neg folds into the FFMA's operand"),
    ("FP32 FMUL", r"mul(\.rn)?\.f32", ""),
    ("F2FP (cvt e4m3x2/e5m2x2)", r"cvt\.rn\.satfinite", "two floats to two codes"),
    ("pack {lo, hi} (mov.b32 of two .b16)", None, "F2FP's merge form or a PRMT"),
    ("f32<->b32 moves around shfl", None, "free (same register)"),
    ("shfl", r"shfl\.", ""),
    ("vote", r"vote\.", ""),
    ("FP32 compare/abs (setp.f32, abs)", r"(setp\.\w+\.f32|abs\.f32)", ""),
    ("wgmma, fence, commit, wait", r"wgmma\.", ""),
    ("mbarrier try_wait / bar.sync / bar.arrive", r"(mbarrier|bar\.)", ""),
    ("branch", r"bra", ""),
    ("other mov", r"mov", "mostly free"),
    ("integer / pointer / predicate (descriptors, ring slot and parity, mask test, loop)", r".", ""),
]


def parse(path, entry):
    text = open(path).read()
    start = next(m.start() for m in re.finditer(r"^\.(visible |weak )?\.?entry (\S+)\(", text, re.M)
                 if entry in m.group(2))
    nxt = re.search(r"^\.(visible |weak )?\.?entry ", text[start + 1:], re.M)
    body = text[start:start + 1 + nxt.start()] if nxt else text[start:]
    blocks, cur = {"entry": []}, "entry"
    for line in body.splitlines():
        s = line.strip()
        m = re.match(r"^\$L__BB\d+_(\d+):", s)
        if m:
            cur = m.group(1)
            blocks[cur] = []
            continue
        if not s or s.startswith("//") or s.startswith(".") or s in ("{", "}"):
            continue
        blocks[cur].append(s)
    return blocks


def opcode(ins):
    return re.sub(r"^@!?%p\d+\s+", "", ins).split()[0].rstrip(";")


def classify(ins):
    op = opcode(ins)
    if op == "mov.b32" and "{" in ins:
        return "pack {lo, hi} (mov.b32 of two .b16)"
    if op == "mov.b32" and re.search(r"%f\d+", ins):
        return "f32<->b32 moves around shfl"
    for name, rx, _ in CLASSES:
        if rx and re.match(rx, op):
            return name
    raise AssertionError(ins)


def main(argv):
    if len(argv) == 3 and argv[2] == "--blocks" or len(argv) == 4 and argv[3] == "--blocks":
        for label, ins in parse(argv[1], argv[2]).items():
            ops = collections.Counter(opcode(x) for x in ins)
            targets = [x.split()[-1].rstrip(";") for x in ins if re.search(r"\bbra", x)]
            print(f"{label}: {len(ins)} instructions, ex2 {ops['ex2.approx.ftz.f32']}, "
                  f"wgmma {sum(v for k, v in ops.items() if k.startswith('wgmma.mma'))} -> "
                  f"{' '.join(targets)}")
        return 0
    blocks = parse(argv[1], argv[2])
    scores = float(argv[4])
    counts = collections.Counter()
    for spec in argv[3].split(","):
        label, _, mode = spec.partition(":")
        ins = blocks[label]
        if mode == "first":
            ins = ins[:next(i for i, x in enumerate(ins) if re.search(r"\bbra\b", x)) + 1]
        counts.update(classify(x) for x in ins)
    print("| PTX class | per key block | per score | SASS |")
    print("|---|---|---|---|")
    for name, _, note in CLASSES:
        if counts[name]:
            print(f"| {name} | {counts[name]} | {counts[name] / scores:.2f} | {note} |")
    total = sum(counts.values())
    print(f"| **total** | **{total}** | **{total / scores:.2f}** | |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
