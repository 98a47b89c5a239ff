# What the timing probes of hand-edited generated code share: a copy of a generated/
# directory with one kernel's CUDA source edited and the manifest's hash of that file
# replaced (the runtime checks it), so that a binary runs the edited kernel.
import hashlib, os, shutil


def write_probe(src, dst, kernel, edit):
    """Copies generated/ `src` to `dst`, applies `edit` (text -> text) to
    cuda/`kernel`.cu and replaces its hash in the manifest; returns the new hash."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    p = os.path.join(dst, f'cuda/{kernel}.cu')
    s = open(p).read()
    old = hashlib.sha256(s.encode()).hexdigest()
    s = edit(s)
    open(p, 'w').write(s)
    new = hashlib.sha256(s.encode()).hexdigest()
    m = os.path.join(dst, 'manifest.json')
    t = open(m).read()
    assert t.count(old) == 1
    open(m, 'w').write(t.replace(old, new))
    return new
