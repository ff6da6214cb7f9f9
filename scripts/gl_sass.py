#!/usr/bin/env python3
"""The machine code NVIDIA's GL driver made of our programs, read from its shader disk cache.

    __GL_SHADER_DISK_CACHE_PATH=/tmp/c __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 <a GL program>
    scripts/gl_sass.py /tmp/c OUT

glGetProgramBinary returns only NVIDIA's intermediate assembly ("!!NVcp5.0"); the disk cache's
.bin files hold, after each program's assembly text, a zstd frame (its compressed and raw
sizes in the 8 bytes before it) whose raw bytes are an "NVuc" image: the code's size at offset
0x44, its offset at 0x48. That code is the SM's own instructions; `nvdisasm --binary SM90`
(CUDA's toolkit, on the GPU machine) disassembles it. Writes OUT/progN.{nvasm,code,sass} and
prints per program its work group, shared memory, instruction count, highest register and
opcode counts. Needs the `zstandard` package (carried as a wheel to the GPU machine). The
layout is the driver's (580.159.04 here), not a documented format.
"""
import collections
import os
import re
import struct
import subprocess
import sys

import zstandard

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def programs(cache):
    """(assembly text, NVuc image) of every program in the cache's .bin files."""
    dctx = zstandard.ZstdDecompressor()
    for root, _, files in os.walk(cache):
        for f in sorted(files):
            if not f.endswith(".bin"):
                continue
            data = open(os.path.join(root, f), "rb").read()
            # A frame has its two sizes in the 8 bytes before it.
            i = data.find(ZSTD_MAGIC, 8)
            while i >= 0:
                comp, raw = struct.unpack_from("<II", data, i - 8)
                image = dctx.decompress(data[i:i + comp], max_output_size=raw)
                start = data.rfind(b"!!NVcp5.0", 0, i)
                text = ""
                if start >= 0:
                    text = re.match(rb"[\x20-\x7e\n\t]*", data[start:]).group().decode()
                yield text, image
                i = data.find(ZSTD_MAGIC, i + 4)


def summary(text, sass):
    """One line: the program's header lines, instruction and opcode counts, highest register."""
    ops = collections.Counter()
    regs = set()
    for line in sass.split("\n"):
        m = re.search(r"\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
        if m:
            ops[m.group(2)] += 1
        regs.update(int(r) for r in re.findall(r"\bR(\d+)\b", line))
    head = [h for h in text.split("\n")[:12] if h.startswith(("GROUP_SIZE", "SHARED_MEMORY"))]
    top = ", ".join(f"{k} {v}" for k, v in ops.most_common(25))
    return (f"{' '.join(head)} {sum(ops.values())} instructions, highest register "
            f"R{max(regs) if regs else -1}; {top}")


def main():
    cache, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for n, (text, image) in enumerate(programs(cache)):
        open(f"{out}/prog{n}.nvasm", "w").write(text)
        if image[:4] != b"NVuc":
            print(f"prog{n}: no NVuc image")
            continue
        size, offset = struct.unpack_from("<II", image, 0x44)
        open(f"{out}/prog{n}.code", "wb").write(image[offset:offset + size])
        r = subprocess.run(["nvdisasm", "--binary", "SM90", f"{out}/prog{n}.code"],
                           capture_output=True, text=True)
        open(f"{out}/prog{n}.sass", "w").write(r.stdout + r.stderr)
        print(f"prog{n}: {summary(text, r.stdout)}")


if __name__ == "__main__":
    main()
