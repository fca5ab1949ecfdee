# Minimal reader for R lazy-load databases (.rdx/.rdb): enough of R's XDR serialisation
# format to pull character vectors out of janeaustenr's data.
import struct, zlib, sys
class R:
    def __init__(s, b): s.b = b; s.p = 0; s.refs = []
    def i(s):
        v = struct.unpack('>i', s.b[s.p:s.p+4])[0]; s.p += 4; return v
    def d(s):
        v = struct.unpack('>d', s.b[s.p:s.p+8])[0]; s.p += 8; return v
    def header(s):
        assert s.b[:2] == b'X\n', s.b[:2]; s.p = 2
        ver = s.i(); s.i(); s.i()
        if ver == 3: n = s.i(); s.p += n
    def item(s):
        f = s.i(); t = f & 0xff; has_attr = f & (1 << 9); has_tag = f & (1 << 10)
        if t == 254: return None           # NILVALUE
        if t == 242: return None           # EMPTYENV
        if t == 253: return None           # GLOBALENV
        if t == 255: return s.refs[(f >> 8) - 1]
        if t == 1:                         # SYMSXP
            v = s.item(); s.refs.append(v); return v
        if t == 9:                         # CHARSXP
            n = s.i()
            if n == -1: return None
            v = s.b[s.p:s.p+n].decode('utf-8', 'replace'); s.p += n; return v
        if t in (2, 0x11):                 # LISTSXP
            attr = s.item() if has_attr else None
            tag = s.item() if has_tag else None
            car = s.item(); cdr = s.item()
            out = [(tag, car)]
            if isinstance(cdr, list): out += cdr
            return out
        if t in (16, 19, 20):              # STRSXP, VECSXP, EXPRSXP
            n = s.i(); v = [s.item() for _ in range(n)]
        elif t in (13, 10):                # INTSXP, LGLSXP
            n = s.i(); v = list(struct.unpack('>%di' % n, s.b[s.p:s.p+4*n])); s.p += 4*n
        elif t == 14:
            n = s.i(); v = list(struct.unpack('>%dd' % n, s.b[s.p:s.p+8*n])); s.p += 8*n
        else:
            raise ValueError('type %d at %d' % (t, s.p))
        attr = s.item() if has_attr else None
        return {'v': v, 'attr': attr} if attr else v
def blob(rdb, off, ln):
    b = rdb[off:off+ln]
    n = struct.unpack('>I', b[:4])[0]
    if b[4:5] in (b'Z', b'2', b'X', b'0'): raise ValueError('unsupported compression')
    return zlib.decompress(b[4:])
def load(prefix):
    rdx = open(prefix + '.rdx', 'rb').read(); rdb = open(prefix + '.rdb', 'rb').read()
    import gzip; r = R(gzip.decompress(rdx)); r.header(); idx = r.item()
    return idx, rdb
