#!/usr/bin/env python3
"""sass_diff.py - are two builds' kernels the same machine code? Compares the SASS of every
function in the objects of two build directories (cuobjdump -sass), per function name, with the
instruction addresses and encodings stripped; one object split into several counts as the same
functions. Prints the functions that differ or exist on one side only; exit 1 if any do.

    python3 tools/sass_diff.py BEFORE AFTER [--rename OLD=NEW ...] [--ptx]

--ptx compares the PTX the objects embed instead (what a GPU without sm_90 code JIT-compiles),
per virtual arch and function, with the names of file-local functions (whose hash changes from
one compile to the next), the function numbers in block labels and source paths left out.

BEFORE and AFTER are build directories (their kernels/*.cu.o are disassembled) or directories of
saved `cuobjdump -sass` outputs (*.sass), which saves disassembling a build twice. Needs cuobjdump
and nvdisasm on the PATH (CUDA toolkit, or pip's nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm).
"""
import glob, os, re, subprocess, sys
from collections import defaultdict

def functions(build):
    out = defaultdict(set)  # (arch, name) -> set of normalized bodies (static helpers repeat per file)
    dumps = sorted(glob.glob(os.path.join(build, '*.sass')))
    objs = dumps or sorted(glob.glob(os.path.join(build, 'kernels', '*.cu.o')))
    for obj in objs:
        if obj.endswith('.sass'):
            text = open(obj).read()
        else:
            text = subprocess.run(['cuobjdump', '-sass', obj], capture_output=True, text=True).stdout
        arch = name = None
        body = []
        def flush():
            if name is not None:
                out[(arch, name)].add('\n'.join(body))
        for line in text.splitlines():
            m = re.match(r'\s*\.target\s+(\S+)', line)  # the SASS's own arch (the fatbin headers
            if m:                                          # of PTX entries come in between)
                arch = m.group(1)
                continue
            m = re.match(r'\s*Function : (\S+)', line)
            if m:
                flush()
                name, body = m.group(1), []
                continue
            m = re.match(r'\s*/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;?\s*/\* 0x[0-9a-f]+ \*/', line)
            if m and name is not None:
                body.append(re.sub(r'\s+', ' ', m.group(1)))
        flush()
    return out

def ptx_functions(build):
    out = defaultdict(set)  # (arch, name) -> set of normalized bodies
    local = re.compile(r'_ZN\d+_INTERNAL_[0-9a-f]{8}_\d+_\w+?_cu_[0-9a-f]{8}(?:_\d+)?')
    for obj in sorted(glob.glob(os.path.join(build, 'kernels', '*.cu.o'))):
        text = subprocess.run(['cuobjdump', '-ptx', obj], capture_output=True, text=True).stdout
        arch = name = None
        body = []
        for line in text.splitlines():
            m = re.match(r'\s*\.target\s+(\S+)', line)
            if m:
                arch = m.group(1)
                continue
            line = re.sub(r'\$L__BB\d+_', '$L__BB_', local.sub('LOCAL', line.strip()))  # block labels
            m = re.match(r'(?:\.visible\s+|\.weak\s+)?\.(?:entry|func)\s+(?:\(.*?\)\s*)?(\S+?)\(', line)
            if m and name is None:
                name, body = m.group(1), []
            if name is None or line.startswith('.file') or line.startswith('.loc'):
                continue
            body.append(line)
            if line == '}':
                out[(arch, name)].add('\n'.join(body))
                name = None
    return out

def main():
    args = sys.argv[1:]
    renames = {}
    while '--rename' in args:
        i = args.index('--rename')
        old, new = args[i + 1].split('=', 1)
        renames[old] = new
        del args[i:i + 2]
    get = functions
    if '--ptx' in args:
        args.remove('--ptx')
        get = ptx_functions
    a, b = get(args[0]), get(args[1])
    ren = lambda k: (k[0], renames.get(k[1], k[1]))
    a = {ren(k): v for k, v in a.items()}
    diff = 0
    for k in sorted(set(a) | set(b)):
        if k not in a or k not in b:
            print('only in %s: %s %s' % (args[0] if k in a else args[1], k[0], k[1]))
            diff += 1
        elif a[k] != b[k]:
            print('differs: %s %s' % k)
            diff += 1
    print('%d functions compared, %d differ or are missing' % (len(set(a) | set(b)), diff))
    return 1 if diff else 0

sys.exit(main())
