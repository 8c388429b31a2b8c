#!/usr/bin/env python3
"""The include graph against the layer table of ARCHITECTURE.md: arrows point down only.

Reads every tracked C++/CUDA file, takes each `#include "folder/..."` of a project folder and reports
  - an arrow running up: a file in folder A includes folder B that A may not use (the table below);
  - a cycle between sub-folders (numerics/x -> numerics/y -> numerics/x), which the table cannot see.
Exit 1 when there is either (tests/layers runs it), 0 otherwise; --count prints only the figures.

usage: layers.py [--repo DIR] [--count] [--arrows-only]
"""
import argparse
import os
import re
import subprocess
import sys

# Who may include whom (ARCHITECTURE.md, "Layout"). kernels_src's headers are the family declarations that
# g++ and NVRTC both compile, so the layers that describe or launch families may include them. device/ uses
# db/ for the compile cache and the GPU key (device/compile/compile_service, device/gpu_key), as the layer
# diagram draws it (device above runtime/ and db/).
ALLOWED = {
    "kernels_src": {"kernels_src"},
    "common": {"common"},
    "runtime": {"runtime", "common"},
    "db": {"db", "common"},
    "device": {"device", "runtime", "db", "common", "kernels_src"},
    "numerics": {"numerics", "device", "db", "common"},
    "tuner": {"tuner", "device", "runtime", "db", "numerics", "common", "kernels_src"},
}
# The commands' mains and the tests stand above everything.
TOP = {"tools", "tests", "experiments", "scripts"}
SOURCE = re.compile(r"\.(cpp|hpp|h|cu|cuh|inc)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def tracked_files(repo):
    """The files git tracks (and the untracked ones it does not ignore); every file outside a checkout."""
    listing = subprocess.run(["git", "-C", repo, "ls-files", "--cached", "--others", "--exclude-standard"],
                             capture_output=True, text=True)
    if listing.returncode == 0:
        names = listing.stdout.splitlines()
    else:
        names = [os.path.relpath(os.path.join(d, f), repo) for d, _, fs in os.walk(repo) for f in fs]
    return sorted(f for f in names if SOURCE.search(f) and os.path.exists(os.path.join(repo, f)))


def link_arrows(repo, folders):
    """CMake: a target defined in folder A linked to fl_<B> where A may not use B (wherever the link is)."""
    defined, links = {}, []
    for folder in sorted(folders):
        for d, _, fs in os.walk(os.path.join(repo, folder)):
            if "CMakeLists.txt" not in fs:
                continue
            with open(os.path.join(d, "CMakeLists.txt"), encoding="utf-8") as f:
                text = re.sub(r"#.*", "", f.read())
            for name in re.findall(r"add_(?:library|executable)\(\s*([\w-]+)", text):
                defined[name] = folder
            # foreach(tool a b c) ... add_executable(${tool} ...): a, b and c are defined here.
            for var, items in re.findall(r"foreach\(\s*(\w+)\s+([^)]*)\)", text):
                if re.search(r"add_(?:library|executable)\(\s*\$\{" + var + r"\}", text):
                    for name in items.split():
                        defined[name] = folder
            for target, rest in re.findall(r"target_link_libraries\(\s*([\w$\{\}-]+)([^)]*)\)", text):
                links.append((folder, target, re.findall(r"\bfl_(\w+)", rest)))
    up = []
    for where, target, libs in links:
        owner = defined.get(target, where)
        for lib in libs:
            if owner in ALLOWED and lib in folders and lib not in ALLOWED[owner]:
                up.append(f"{target} ({owner}/) links fl_{lib} (in {where}/CMakeLists.txt)")
    return up


def subfolder(path):
    """numerics/emulator for numerics/emulator/x.cpp; None for a folder's own top-level files."""
    parts = path.split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else None


def cycles(edges):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", default=".")
    parser.add_argument("--count", action="store_true")
    parser.add_argument("--arrows-only", action="store_true",
                        help="exit 1 on arrows up only; cycles are listed")
    args = parser.parse_args()

    folders = set(ALLOWED) | TOP
    up, edges = [], {}
    for path in tracked_files(args.repo):
        folder = path.split("/")[0]
        if folder not in folders:
            continue
        with open(os.path.join(args.repo, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for target in INCLUDE.findall(text):
            to = target.split("/")[0]
            if to not in folders or "/" not in target:
                continue  # a header of the same folder spelled relatively, or a system one
            if folder in ALLOWED and to not in ALLOWED[folder]:
                up.append(f"{path} -> {target}")
            if folder not in TOP:
                a, b = subfolder(path), subfolder(target)
                if a and b and a != b:
                    edges.setdefault(a, set()).add(b)
    loops = cycles(edges)
    up += ["link: " + line for line in link_arrows(args.repo, set(ALLOWED))]
    if args.count:
        print(f"arrows running up: {len(up)}; sub-folder cycles: {len(loops)}")
    else:
        for line in up:
            print("up:", line)
        for loop in loops:
            print("cycle:", " <-> ".join(loop))
        print(f"{len(up)} arrows running up, {len(loops)} sub-folder cycles")
    return 1 if up or (loops and not args.arrows_only) else 0


if __name__ == "__main__":
    sys.exit(main())
