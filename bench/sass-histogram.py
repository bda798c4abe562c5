"""Instruction histogram of CUDA kernels from `cuobjdump -sass` output (run where the CUDA
toolkit has cuobjdump, e.g. the GPU machine):
    cuobjdump -sass build/.libs/libtaskqcd.so > all.sass
    python3 bench/sass-histogram.py all.sass 'dslash_wilson_interior_kernelILi2ELi12'
Prints each matching kernel's static instruction count and its most frequent opcodes."""
import re,collections,sys
txt=open(sys.argv[1]).read().split('Function : ')
for blk in txt[1:]:
    name=blk.split('\n',1)[0].strip()
    if not re.search(sys.argv[2], name): continue
    ops=collections.Counter()
    for line in blk.split('\n'):
        m=re.match(r'\s*/\*[0-9a-f]{4,}\*/\s+(.*?);',line)
        if not m: continue
        ins=re.sub(r'^@!?U?P[0-9T]\s+','',m.group(1))
        ops[ins.split()[0]]+=1
    print(name[:70], sum(ops.values()))
    print('   ', ', '.join(f'{k}:{v}' for k,v in ops.most_common(16)))
