#!/usr/bin/env python3
"""Runs fa-check on every case of the independent corpus (independent_corpus.py) and measures its diagnosis:

- named first: a buggy case whose expected id is fa-check's first diagnosis;
- named anywhere: the expected id is among the names;
- false positives: a correct case that fails or gets a name (FP8 correct outputs included).

Kinds: fwd, bwd (catalogued bugs), fp8 (the FP8 bugs), fp8-fwd (forward bugs in FP8 outputs), interface
(interface mistakes), correct.

Figures are printed per kind (forward bugs, backward bugs, interface mistakes, correct outputs), then
compared with the floors given on the command line (exit 1 when one is missed, with every miss listed).

usage: run_corpus.py --fa-check PATH --corpus DIR [--generate] [--min-first F] [--max-false-positives N]
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_case(fa_check, case_dir):
    with open(os.path.join(case_dir, "case.json")) as f:
        case = json.load(f)
    cmd = [fa_check, "--threads", "1", "--json", os.path.join(case_dir, "report.json")] + case["args"]
    for name in case["files"]:
        cmd += ["--" + name, os.path.join(case_dir, name + ".npy")]
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    case["seconds"] = time.monotonic() - start
    if proc.returncode not in (0, 1):
        return case, None, f"fa-check exit {proc.returncode}: {proc.stderr.strip()}"
    with open(os.path.join(case_dir, "report.json")) as f:
        report = json.load(f)
    return case, report, ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fa-check", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--generate", action="store_true", help="write the corpus first")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--min-first", type=float, default=0.95,
                        help="floor on the fraction of catalogued bugs (fwd and bwd, each) named first")
    parser.add_argument("--min-interface-first", type=float, default=0.95,
                        help="floor on the fraction of interface mistakes named first")
    parser.add_argument("--min-fp8-first", type=float, default=0.95,
                        help="floor on the fraction of FP8 bugs (fp8-missing-descale, fp8-p-overflow) "
                             "named first")
    parser.add_argument("--min-fp8-fwd-first", type=float, default=0.95,
                        help="floor on the fraction of forward bugs in FP8 outputs named first")
    parser.add_argument("--max-false-positives", type=int, default=0)
    args = parser.parse_args()
    if args.generate:
        shutil.rmtree(args.corpus, ignore_errors=True)  # no case of an older generator survives
        subprocess.run([sys.executable, os.path.join(HERE, "independent_corpus.py"), args.corpus], check=True)
    cases = sorted(os.path.join(args.corpus, c) for c in os.listdir(args.corpus)
                   if os.path.exists(os.path.join(args.corpus, c, "case.json")))
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda c: run_case(args.fa_check, c), cases))

    tally = {}
    misses = []
    for case, report, error in results:
        kind = case["kind"]
        t = tally.setdefault(kind, dict(cases=0, first=0, anywhere=0, false_positives=0, verdict_right=0))
        t["cases"] += 1
        if error:
            misses.append(f"{case['name']}: {error}")
            continue
        ids = [d["id"] for d in report["diagnosis"]]
        failed = report["verdict"] == "fail"
        if kind == "correct":
            t["verdict_right"] += not failed
            if failed or ids:
                t["false_positives"] += 1
                misses.append(f"{case['name']}: correct output, verdict {report['verdict']}, named {ids}")
            continue
        t["verdict_right"] += failed
        expect = case["expect"]
        t["first"] += bool(ids) and ids[0] == expect
        t["anywhere"] += expect in ids
        if not ids or ids[0] != expect:
            misses.append(f"{case['name']}: expected {expect}, verdict {report['verdict']}, named {ids}")

    print("independent corpus:", len(results), "cases")
    for kind in ("fwd", "bwd", "fp8", "fp8-fwd", "interface", "correct"):
        t = tally.get(kind)
        if not t:
            continue
        n = t["cases"]
        if kind == "correct":
            print(f"  {kind:9s} {n:3d} cases: false positives {t['false_positives']}, "
                  f"passed {t['verdict_right']}/{n}")
        else:
            print(f"  {kind:9s} {n:3d} cases: named first {t['first']}/{n} ({100.0 * t['first'] / n:.0f}%), "
                  f"named anywhere {t['anywhere']}/{n}, failed {t['verdict_right']}/{n}")
    slowest = sorted(results, key=lambda r: -r[0].get("seconds", 0))[:3]
    print("  fa-check time: %.1f s in all; slowest: %s" % (
        sum(r[0].get("seconds", 0) for r in results),
        ", ".join("%s %.1f s" % (r[0]["name"], r[0]["seconds"]) for r in slowest)))
    for m in misses:
        print("  miss:", m)

    ok = True
    for kind, floor in (("fwd", args.min_first), ("bwd", args.min_first),
                        ("interface", args.min_interface_first),
                        ("fp8", args.min_fp8_first), ("fp8-fwd", args.min_fp8_fwd_first)):
        t = tally.get(kind)
        if t and t["first"] < floor * t["cases"]:
            print(f"FAIL: {kind}: named first {t['first']}/{t['cases']} is below the floor {floor:.2f}")
            ok = False
    fp = tally.get("correct", {}).get("false_positives", 0)
    if fp > args.max_false_positives:
        print(f"FAIL: {fp} false positives on correct outputs (allowed {args.max_false_positives})")
        ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
