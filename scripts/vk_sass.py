#!/usr/bin/env python3
"""Disassemble what NVIDIA's Vulkan driver compiled, from its shader disk cache.

The driver's compiler report (`onekernel vk-stats`) gives register counts but no
instructions, and driver 580 returns no internal representation through
VK_KHR_pipeline_executable_properties. Its disk cache does hold the machine code, so run
a kernel with the cache pointed at an empty directory and disassemble what it wrote:

    export __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_PATH=/tmp/glc \
           __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1
    onekernel validate --kernel attn_decode_chunk --variant "..." --backend vulkan
    python3 scripts/vk_sass.py /tmp/glc OUTDIR [SM90]

Each cache entry is zstd frames; the one starting with `NVDANVVM` holds a section table
whose code entry (type 1: u32 type, u32 size, u64 offset from byte 8) is raw SASS for
`nvdisasm --binary`. This layout is undocumented and was read off driver 580 on the H200;
the script checks that the code ends as SASS does (an `EXIT`-then-self-branch tail) and
says so when it does not. Writes `<entry>-<n>.sass` and prints an opcode summary and
the static loops. `vk_sass.py --loops LISTING` prints the loops of any SASS listing
(e.g. `cuobjdump -sass` of the CUDA build, for comparison).
"""
import collections
import ctypes
import ctypes.util
import os
import shutil
import signal
import struct
import subprocess
import sys

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
SELF_BRANCH = bytes.fromhex("4779fc00fcffffff")  # BRA to itself: the end of every SASS function


def decompress(frame: bytes) -> bytes:
    """One zstd frame (trailing bytes ignored), by libzstd, the zstd program or the
    zstandard module, whichever is present."""
    lib = ctypes.util.find_library("zstd")
    if lib:
        z = ctypes.CDLL(lib)
        z.ZSTD_findFrameCompressedSize.restype = ctypes.c_size_t
        z.ZSTD_decompress.restype = ctypes.c_size_t
        z.ZSTD_isError.restype = ctypes.c_uint
        n = z.ZSTD_findFrameCompressedSize(frame, ctypes.c_size_t(len(frame)))
        if not z.ZSTD_isError(ctypes.c_size_t(n)):
            cap = 64 << 20
            buf = ctypes.create_string_buffer(cap)
            got = z.ZSTD_decompress(buf, ctypes.c_size_t(cap), frame, ctypes.c_size_t(n))
            if not z.ZSTD_isError(ctypes.c_size_t(got)):
                return buf.raw[:got]
        return b""
    if shutil.which("zstd"):
        r = subprocess.run(["zstd", "-d", "-c"], input=frame, capture_output=True)
        return r.stdout
    try:
        import zstandard  # type: ignore
    except ImportError:
        sys.exit("vk_sass: needs libzstd, the zstd program or the zstandard Python module")
    return zstandard.ZstdDecompressor().decompressobj().decompress(frame)


def frames(blob: bytes):
    starts = []
    i = blob.find(ZSTD_MAGIC)
    while i >= 0:
        starts.append(i)
        i = blob.find(ZSTD_MAGIC, i + 1)
    for k, s in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(blob)
        yield decompress(blob[s:end])


def code_of(container: bytes):
    kind, size = struct.unpack_from("<II", container, 72)
    (offset,) = struct.unpack_from("<Q", container, 80)
    code = container[8 + offset : 8 + offset + size]
    if kind != 1 or len(code) != size or SELF_BRANCH not in code:
        return None
    return code


def loops(sass: str, least: int = 30):
    """Static loops of a listing (a backward branch and the instructions it spans), with
    their length and opcode mix: the same view scripts/sass_profile.py gives from
    Nsight Compute for CUDA, without execution counts."""
    import re

    ins = []
    for line in sass.splitlines():
        m = re.match(r"\s*/\*([0-9a-f]+)\*/\s+(.*?);", line)
        if m:
            ins.append((int(m.group(1), 16), m.group(2).strip()))
    at = {a: i for i, (a, _) in enumerate(ins)}
    out = []
    for i, (a, text) in enumerate(ins):
        m = re.search(r"BRA (?:`\(\.L_x_\d+\) )?0x([0-9a-f]+)", text)
        if not m or int(m.group(1), 16) > a or int(m.group(1), 16) not in at:
            continue
        body = ins[at[int(m.group(1), 16)] : i + 1]
        if len(body) < least:
            continue
        mix = collections.Counter((t.split(None, 1)[1] if t.startswith("@") else t).split()[0].split(".")[0] for _, t in body)
        out.append(f"loop {m.group(1)}-{a:x}: {len(body)} instructions: " + " ".join(f"{k}:{v}" for k, v in mix.most_common(10)))
    return out


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--loops":
        # Any SASS listing (nvdisasm or cuobjdump -sass), e.g. CUDA's for comparison.
        for line in loops(open(sys.argv[2]).read()):
            print(line)
        return
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cache, out = sys.argv[1], sys.argv[2]
    arch = sys.argv[3] if len(sys.argv) > 3 else "SM90"
    os.makedirs(out, exist_ok=True)
    found = 0
    for root, _, files in os.walk(cache):
        for name in sorted(files):
            if not name.endswith(".bin"):
                continue
            blob = open(os.path.join(root, name), "rb").read()
            for n, data in enumerate(frames(blob)):
                if not data.startswith(b"NVDANVVM"):
                    continue
                code = code_of(data)
                stem = f"{name[:-4]}-{n}"
                if code is None:
                    print(f"{stem}: no code section in the layout this script knows (driver changed?)")
                    continue
                raw = os.path.join(out, stem + ".bin")
                open(raw, "wb").write(code)
                r = subprocess.run(["nvdisasm", "--binary", arch, "-c", raw], capture_output=True, text=True)
                if r.returncode != 0:
                    print(f"{stem}: nvdisasm failed: {r.stderr.strip()[:300]}")
                    continue
                open(os.path.join(out, stem + ".sass"), "w").write(r.stdout)
                ops = collections.Counter()
                for line in r.stdout.splitlines():
                    if "/*" in line and ";" in line:
                        text = line.split("*/", 1)[1].split(";")[0].strip()
                        if text.startswith("@"):
                            text = text.split(None, 1)[1] if " " in text else text
                        if text:
                            ops[text.split()[0].split(".")[0]] += 1
                found += 1
                top = ", ".join(f"{op} {c}" for op, c in ops.most_common(14))
                print(f"{stem}: {len(code)} bytes, {sum(ops.values())} instructions: {top}")
                for line in loops(r.stdout):
                    print("  " + line)
    if not found:
        sys.exit(f"vk_sass: no NVIDIA SASS found under {cache}")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet when piped into `head`
    main()
