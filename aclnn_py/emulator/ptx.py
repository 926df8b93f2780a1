"""Inline PTX for the host CUDA emulator.

``rewrite_inline_asm(text)`` finds the ``asm("<ptx>" : outputs : inputs : clobbers)`` statements
(``asm volatile``, ``__asm__ __volatile__`` ...) in the user's (preprocessed) source and replaces each
by a C++ block that computes what the PTX computes, with the helpers of ``include/emu_ptx.h``
(namespace ``::__emu::ptx``). Warp and block collectives become calls of the emulator's own
``__shfl_*_sync``, ``__ballot_sync``, ``__syncthreads`` ... written in the user's text, so that their
checks, call sites and the loader's scan for collectives apply as to the CUDA functions.

An instruction the emulator does not implement makes the statement a compile error at the user's
line: ``static_assert(false, "inline PTX instruction 'X' is not supported by the emulator ...")``.
Line structure is kept: the replacement has as many newlines as the statement had, each
instruction's code on the line of the string literal that holds it.

Each statement becomes ``[&]() -> void { ... }()`` (an expression statement, so ``if (c) asm(...);
else ...`` keeps its meaning, and no loop for the loader's warp-loop rewrite to see): operands are
evaluated once into PTX registers of their constraint's type, the instructions run in order, outputs
are assigned at the end. `{ .reg ...; }` blocks, predicates (`@p`, `@!p`, `setp` with `p|q`), labels
and `bra` within the statement, `%=`, `%%`, `%[name]` operands and the carry flag of add.cc/addc/
sub.cc/subc/mad.cc/madc chains live inside that block (a chain that reads a carry set by another
asm statement is refused).

Instructions: mov (special registers, pack/unpack), ld/st (state spaces, cache and memory-order
qualifiers, .v2/.v4), cvta, prefetch, atom/red, membar/fence, bar/barrier.sync 0, bar.warp.sync,
add/sub/mul/mad (.lo/.hi/.wide/.cc/.sat), addc/subc/madc, mul24.lo, div/rem, min/max, abs, neg,
and/or/xor/not/cnot, shl/shr, brev, popc, clz, bfind, bfe, bfi, prmt (all modes), shf, lop3, the SIMD video instructions (vadd4/2, vsub, vavrg, vabsdiff, vmin,
vmax with .sat or .add, default selectors),
dp4a/dp2a, selp, setp, cvt (int/float/f16/bf16 with rounding, .sat, .ftz, .relu; f16x2/bf16x2),
f32/f64 add/sub/mul/div/fma/rcp/sqrt (all roundings, .ftz, .sat), rsqrt/ex2/lg2/sin/cos/tanh
(.approx computed accurately, as the emulator's fast intrinsics), f16/bf16(x2) add/sub/mul/fma
(the emulator's __hadd & co.), shfl.sync, vote(.sync), match.sync, redux.sync, activemask,
nanosleep, trap, cp.async (+ commit/wait), createpolicy, griddepcontrol.
"""
from __future__ import annotations

import re

__all__ = ["rewrite_inline_asm", "UNSUPPORTED_MARK"]

UNSUPPORTED_MARK = "is not supported by the emulator"

# (after preprocessing, cuda_emu.h has turned the `asm` keyword into __emu_inline_asm)
_KEYWORD_RE = re.compile(
    r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|\b(?:__emu_inline_asm|__asm__|__asm|asm)\b')
_QUALIFIERS = ("volatile", "__volatile__", "__volatile", "inline", "__inline__", "goto")
_STRING_RE = re.compile(r'(?:u8|u|U|L)?"((?:\\.|[^"\\\n])*)"')

# constraint letter -> C++ register type
_CONSTRAINT_TYPES = {"h": "uint16_t", "r": "uint32_t", "l": "uint64_t", "f": "float", "d": "double", "n": None}

# PTX type -> C++ type the instruction computes in (f16/bf16 and the x2 forms as their bits)
_TYPES = {
    "b8": "uint8_t", "u8": "uint8_t", "s8": "int8_t",
    "b16": "uint16_t", "u16": "uint16_t", "s16": "int16_t", "f16": "uint16_t", "bf16": "uint16_t",
    "b32": "uint32_t", "u32": "uint32_t", "s32": "int32_t", "f32": "float", "f16x2": "uint32_t",
    "bf16x2": "uint32_t",
    "b64": "uint64_t", "u64": "uint64_t", "s64": "int64_t", "f64": "double",
    "pred": "bool",
}
_INT = {"b8", "u8", "s8", "b16", "u16", "s16", "b32", "u32", "s32", "b64", "u64", "s64"}
_SIGNED = {"s8", "s16", "s32", "s64"}
_FLOAT = {"f32", "f64"}
_HALF = {"f16", "bf16"}
_SIZE = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2, "b32": 4, "u32": 4,
         "s32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8}

_SPECIAL = {
    "%laneid": ("uint32_t", "__P::laneid()"),
    "%warpid": ("uint32_t", "__P::warpid()"),
    "%nwarpid": ("uint32_t", "__P::nwarpid()"),
    "%smid": ("uint32_t", "__P::smid()"),
    "%nsmid": ("uint32_t", "__P::nsmid()"),
    "%gridid": ("uint64_t", "__P::gridid()"),
    "%lanemask_eq": ("uint32_t", "__P::lanemask_eq()"),
    "%lanemask_le": ("uint32_t", "__P::lanemask_le()"),
    "%lanemask_lt": ("uint32_t", "__P::lanemask_lt()"),
    "%lanemask_ge": ("uint32_t", "__P::lanemask_ge()"),
    "%lanemask_gt": ("uint32_t", "__P::lanemask_gt()"),
    "%clock": ("uint32_t", "static_cast<uint32_t>(clock64())"),
    "%clock_hi": ("uint32_t", "static_cast<uint32_t>(static_cast<uint64_t>(clock64()) >> 32)"),
    "%clock64": ("uint64_t", "static_cast<uint64_t>(clock64())"),
    "%globaltimer": ("uint64_t", "static_cast<uint64_t>(__globaltimer())"),
    "%globaltimer_lo": ("uint32_t", "static_cast<uint32_t>(__globaltimer())"),
    "%globaltimer_hi": ("uint32_t", "static_cast<uint32_t>(__globaltimer() >> 32)"),
    "%dynamic_smem_size": ("uint32_t", "__P::dynamic_smem_size()"),
}
# (the text is preprocessed: threadIdx & co. are already expanded, so the emitted code names their values)
for _v, _n in (("tid", "::__emu::dims.tid"), ("ntid", "::__emu::dims.bdim"), ("ctaid", "::__emu::dims.bid"),
               ("nctaid", "::__emu::dims.gdim")):
    for _c in "xyz":
        _SPECIAL[f"%{_v}.{_c}"] = ("uint32_t", f"static_cast<uint32_t>({_n}.{_c})")

# instruction families refused with a reason of their own
_REFUSED = {
    "mma": "warp-level matrix multiply PTX (use <mma.h> / nvcuda::wmma, which the emulator supports)",
    "wmma": "warp-level matrix PTX (use <mma.h> / nvcuda::wmma, which the emulator supports)",
    "wgmma": "warpgroup matrix multiply", "ldmatrix": "warp matrix loads", "stmatrix": "warp matrix stores",
    "movmatrix": "warp matrix transposes", "mbarrier": "mbarrier objects", "tcgen05": "tensor memory",
    "tensormap": "tensor maps", "cp.async.bulk": "bulk asynchronous copies (TMA)",
    "cp.reduce.async.bulk": "bulk asynchronous copies (TMA)",
}


class Unsupported(Exception):
    def __init__(self, what: str, why: str = ""):
        super().__init__(what)
        self.what = what
        self.why = why


def _cstr(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def _error_code(what: str, why: str = "") -> str:
    msg = f"inline PTX instruction '{what}' {UNSUPPORTED_MARK}"
    if why:
        msg += f" ({why})"
    return f"[&]() -> void {{ static_assert(false, {_cstr(msg)}); }}()"


# ------------------------------------------------------------------------------------------------
# Finding the statements
# ------------------------------------------------------------------------------------------------
def _skip_ws(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in " \t\r\n\f\v":
        i += 1
    return i


def _past_literal(s: str, i: int) -> int:
    """Index just past the string or char literal that opens at s[i]."""
    j = i + 1
    while j < len(s) and s[j] != s[i]:
        j += 2 if s[j] == "\\" else 1
    return j + 1


def _match_paren(text: str, i: int) -> int:
    """Index of the ')' closing the '(' at text[i], string and char literals skipped; -1 if none."""
    depth = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            i = _past_literal(text, i)
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _split_top(s: str, sep: str) -> list[str]:
    """Split at `sep` characters outside brackets and literals."""
    parts, depth, last, i, n = [], 0, 0, 0, len(s)
    while i < n:
        ch = s[i]
        if ch in "\"'":
            i = _past_literal(s, i)
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(s[last:i])
            last = i + 1
        i += 1
    parts.append(s[last:])
    return parts


def _unescape(s: str) -> str:
    out, i = [], 0
    simple = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "a": "\a",
              "v": "\v", "f": "\f", "?": "?"}
    while i < len(s):
        ch = s[i]
        if ch == "\\" and i + 1 < len(s):
            nx = s[i + 1]
            m = re.match(r"x([0-9a-fA-F]+)|([0-7]{1,3})", s[i + 1:i + 12])
            if m:
                out.append(chr(int(m.group(1), 16) if m.group(1) else int(m.group(2), 8)))
                i += 1 + len(m.group(0))
                continue
            if nx in simple:
                out.append(simple[nx])
                i += 2
                continue
            out.append(nx)
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def rewrite_inline_asm(text: str) -> str:
    if "asm" not in text:
        return text
    out, last, counter = [], 0, [0]
    for m in _KEYWORD_RE.finditer(text):
        if m.start() < last or m.group(0)[0] in "\"'":
            continue
        i = _skip_ws(text, m.end())
        while True:
            w = re.match(r"[A-Za-z_]\w*", text[i:])
            if w and w.group(0) in _QUALIFIERS:
                i = _skip_ws(text, i + len(w.group(0)))
                continue
            break
        if i >= len(text) or text[i] != "(":
            continue
        close = _match_paren(text, i)
        if close < 0:
            continue
        span = text[m.start():close + 1]
        counter[0] += 1
        try:
            code = _translate(text, m.start(), i, close, counter[0])
        except Unsupported as e:
            code = _error_code(e.what, e.why)
        except (IndexError, KeyError, ValueError) as e:   # malformed PTX: a compile error, never a loader crash
            stmt = " ".join(span.replace("__emu_inline_asm", "asm").split())[:120]
            code = _error_code(stmt, f"the emulator could not read it: {type(e).__name__}")
        out.append(text[last:m.start()])
        out.append(code)
        out.append("\n" * (span.count("\n") - code.count("\n")))
        last = close + 1
    out.append(text[last:])
    return "".join(out)


# ------------------------------------------------------------------------------------------------
# The statement: template, operands
# ------------------------------------------------------------------------------------------------
class _Operand:
    def __init__(self, idx: int, name: str | None, constraint: str, expr: str, output: bool):
        self.idx, self.name, self.expr, self.output = idx, name, expr.strip(), output
        c = constraint.replace("&", "")
        self.inout = c.startswith("+")
        c = c.lstrip("=+")
        if c not in _CONSTRAINT_TYPES:
            raise Unsupported(f'constraint "{constraint}"', "the emulator knows h, r, l, f, d and n")
        self.letter = c
        self.ctype = _CONSTRAINT_TYPES[c]
        self.var = f"__a{idx}"


def _translate(text: str, kw: int, lp: int, rp: int, uid: int) -> str:
    inner = text[lp + 1:rp]
    sections = _split_top(inner, ":")
    if len(sections) > 4:
        raise Unsupported("asm goto", "jumps out of inline PTX")
    tmpl_src = sections[0]
    # template literals and their line offsets (relative to the keyword's line)
    pieces = []
    base_line = text.count("\n", kw, lp + 1)
    pos = 0
    for sm in _STRING_RE.finditer(tmpl_src):
        between = tmpl_src[pos:sm.start()]
        if between.strip():
            raise Unsupported("asm template", "the template must be string literals")
        line = base_line + tmpl_src.count("\n", 0, sm.start())
        pieces.append((line, _unescape(sm.group(1))))
        pos = sm.end()
    if tmpl_src[pos:].strip():
        raise Unsupported("asm template", "the template must be string literals")
    ops: list[_Operand] = []
    for k, out in ((1, True), (2, False)):
        if len(sections) > k and sections[k].strip():
            for item in _split_top(sections[k], ","):
                item = item.strip()
                if not item:
                    continue
                om = re.match(r'(?:\[\s*(\w+)\s*\]\s*)?"([^"]*)"\s*\((.*)\)\s*$', item, re.S)
                if not om:
                    raise Unsupported("asm operand", f"cannot read operand {item!r}")
                ops.append(_Operand(len(ops), om.group(1), om.group(2), om.group(3), out))
    clobbers = []
    if len(sections) > 3:
        clobbers = [_unescape(x.group(1)) for x in _STRING_RE.finditer(sections[3])]
    # substitute %N / %[name] / %% / %= per piece, keep line numbers
    by_name = {o.name: o for o in ops if o.name}

    def subst(s: str) -> str:
        res, i = [], 0
        while i < len(s):
            ch = s[i]
            if ch == "%" and i + 1 < len(s):
                nx = s[i + 1]
                if nx == "%":
                    res.append("%")
                    i += 2
                    continue
                if nx == "=":
                    res.append(str(uid))
                    i += 2
                    continue
                dm = re.match(r"\d+", s[i + 1:])
                if dm:
                    k = int(dm.group(0))
                    res.append(f" __OPND{k}__ ")
                    i += 1 + len(dm.group(0))
                    continue
                nm = re.match(r"\[\s*(\w+)\s*\]", s[i + 1:])
                if nm:
                    res.append(f" __OPND{by_name[nm.group(1)].idx}__ " if nm.group(1) in by_name
                               else f" __OPNDNAME_{nm.group(1)}__ ")
                    i += 1 + len(nm.group(0))
                    continue
            res.append(ch)
            i += 1
        return "".join(res)

    chars: list[tuple[str, int]] = []
    for line, s in pieces:
        for ch in subst(s):
            chars.append((ch, line))
    ptx = "".join(c for c, _ in chars)
    lines = [ln for _, ln in chars]
    gen = _Gen(ops, uid)
    body = gen.program(ptx, lines, base_line)
    # assemble
    head = ["[&]() -> void { "]
    if gen.carry_set:
        head.append("uint64_t __cc = 0; ")
    for o in ops:
        head.append(f"auto&& __e{o.idx} = ({o.expr}); ")
        if o.letter == "n":
            head.append(f"const auto {o.var} = __e{o.idx}; ")
        elif o.output and not o.inout:
            head.append(f"{o.ctype} {o.var}{{}}; ")
        else:
            head.append(f"{o.ctype} {o.var} = __P::in<{o.ctype}>(__e{o.idx}); ")
        head.append(f"(void){o.var}; ")
    if "memory" in clobbers:
        head.append("std::atomic_signal_fence(std::memory_order_seq_cst); ")
    tail = []
    if "memory" in clobbers:
        tail.append("std::atomic_signal_fence(std::memory_order_seq_cst); ")
    for o in ops:
        if o.output:
            tail.append(f"__P::out(__e{o.idx}, {o.var}); ")
    tail.append("}()")
    # the instructions at their lines
    code = ["".join(head)]
    cur = 0
    for line, stmt in body:
        if line > cur:
            code.append("\n" * (line - cur))
            cur = line
        code.append(stmt + " ")
    code.append("".join(tail))
    return "".join(code).replace("__P::", "::__emu::ptx::")


# ------------------------------------------------------------------------------------------------
# PTX operands
# ------------------------------------------------------------------------------------------------
class _Reg:
    def __init__(self, cname: str, ctype: str):
        self.cname, self.ctype = cname, ctype

    def read(self, t: str) -> str:
        return f"__P::rd<{t}>({self.cname})"

    def write(self, t: str, e: str) -> str:
        return f"__P::wr<{t}>({self.cname}, static_cast<{t}>({e}));"


class _Imm:
    def __init__(self, cexpr: str, bits_type: str | None = None):
        self.cexpr, self.bits_type = cexpr, bits_type   # bits_type: 0f/0d literals

    def read(self, t: str) -> str:
        if self.bits_type:
            return f"__P::rd<{t}>(__P::bits<{self.bits_type}>({self.cexpr}))"
        return f"static_cast<{t}>({self.cexpr})"

    def write(self, t, e):
        raise Unsupported("immediate destination", "an immediate cannot be written")


class _Special(_Imm):
    def __init__(self, name: str):
        ctype, expr = _SPECIAL[name]
        super().__init__(expr)
        self.ctype = ctype

    def read(self, t: str) -> str:
        return f"__P::rd<{t}>(static_cast<{self.ctype}>({self.cexpr}))"


class _Sink:
    def write(self, t, e):
        return f"(void)({e});"

    def read(self, t):
        raise Unsupported("_", "the sink operand cannot be read")


class _Gen:
    def __init__(self, ops: list[_Operand], uid: int):
        self.ops = ops
        self.uid = uid
        self.scopes: list[dict[str, tuple[str, str]]] = [{}]
        self.nreg = 0
        self.carry_set = False

    # -- operands --
    def lookup(self, name: str):
        for sc in reversed(self.scopes):
            if name in sc:
                return sc[name]
        return None

    def operand(self, tok: str):
        tok = tok.strip()
        m = re.fullmatch(r"__OPNDNAME_(\w+)__", tok)
        if m:
            raise Unsupported(f"%[{m.group(1)}]", "no operand of that name")
        m = re.fullmatch(r"__OPND(\d+)__", tok)
        if m:
            if int(m.group(1)) >= len(self.ops):
                raise Unsupported(f"%{m.group(1)}", "operand number out of range")
            o = self.ops[int(m.group(1))]
            if o.letter == "n":
                return _Imm(o.var)
            return _Reg(o.var, o.ctype)
        if tok == "_":
            return _Sink()
        r = self.lookup(tok)
        if r:
            return _Reg(*r)
        if tok in _SPECIAL:
            return _Special(tok)
        if tok.startswith("%"):
            raise Unsupported(tok, "special register")
        m = re.fullmatch(r"([+-]?)0[fF]([0-9a-fA-F]{8})", tok)
        if m:
            v = int(m.group(2), 16) ^ (0x80000000 if m.group(1) == "-" else 0)
            return _Imm(f"0x{v:x}ull", "float")
        m = re.fullmatch(r"([+-]?)0[dD]([0-9a-fA-F]{16})", tok)
        if m:
            v = int(m.group(2), 16) ^ (1 << 63 if m.group(1) == "-" else 0)
            return _Imm(f"0x{v:x}ull", "double")
        m = re.fullmatch(r"([+-]?)(0[xX][0-9a-fA-F]+|0[bB][01]+|0[0-7]*|[1-9]\d*)[uU]?", tok)
        if m:
            v = int(m.group(2), 0) if not re.fullmatch(r"0[0-7]+", m.group(2)) else int(m.group(2), 8)
            if m.group(1) == "-":
                v = -v
            v &= (1 << 64) - 1
            if v >= 1 << 63:
                return _Imm(f"static_cast<long long>({v - (1 << 64)}ll)" if v - (1 << 64) > -(1 << 63)
                            else "static_cast<long long>(0x8000000000000000ull)")
            return _Imm(f"{v}ll")
        if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?", tok):
            return _Imm(f"{tok}")
        raise Unsupported(tok, "operand")

    def vec(self, tok: str) -> list:
        tok = tok.strip()
        if not (tok.startswith("{") and tok.endswith("}")):
            raise Unsupported(tok, "a vector operand {a, b, ...} was expected")
        return [self.operand(t) for t in tok[1:-1].split(",")]

    def addr(self, tok: str, space: str) -> str:
        """C++ expression: the host address (uint64_t) of `[reg+off]`."""
        tok = tok.strip()
        if not (tok.startswith("[") and tok.endswith("]")):
            raise Unsupported(tok, "an address [reg+offset] was expected")
        inner = tok[1:-1].replace(" ", "")
        m = re.fullmatch(r"([^+\-]+|[+-]?\d+)(?:([+-])(.+))?", inner)
        if not m:
            raise Unsupported(tok, "address")
        base = self.operand(m.group(1)).read("uint64_t")
        off = ""
        if m.group(2):
            ov = self.operand(m.group(3)).read("int64_t")
            off = f" {m.group(2)} static_cast<uint64_t>({ov})"
        a = f"({base}{off})"
        if space == "shared":
            return f"__P::from_shared({a})"
        return a

    # -- program --
    def program(self, ptx: str, lines: list[int], base_line: int) -> list[tuple[int, str]]:
        out: list[tuple[int, str]] = []
        # strip comments
        s = ptx
        s = re.sub(r"//[^\n]*", lambda m: " " * len(m.group(0)), s)
        s = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), s, flags=re.S)
        i, n = 0, len(s)
        start = 0

        def line_at(k: int) -> int:
            return lines[k] if k < len(lines) else (lines[-1] if lines else base_line)

        while i <= n:
            ch = s[i] if i < n else ";"
            if ch == "{" and s[start:i].strip():   # a vector operand {a, b}
                j = s.find("}", i)
                if j < 0:
                    raise Unsupported("{", "unbalanced braces")
                i = j + 1
                continue
            if ch in "{};":
                stmt = s[start:i].strip()
                at = line_at(start + (len(s[start:i]) - len(s[start:i].lstrip())))
                if stmt:
                    # labels
                    while True:
                        lm = re.match(r"([A-Za-z_$][\w$]*)\s*:(?!:)\s*", stmt)
                        if not lm:
                            break
                        out.append((at, f"{self.label(lm.group(1))}: ;"))
                        stmt = stmt[lm.end():]
                    if stmt:
                        out.append((at, self.statement(stmt)))
                if ch == "{":
                    self.scopes.append({})
                    out.append((line_at(i), "{"))
                elif ch == "}":
                    if len(self.scopes) > 1:
                        self.scopes.pop()
                    out.append((line_at(i), "}"))
                start = i + 1
            i += 1
        return out

    def label(self, name: str) -> str:
        return f"__ptx_L{self.uid}_{re.sub(r'[^A-Za-z0-9_]', '_', name)}"

    def declare(self, stmt: str) -> str:
        # .reg .type name, name<N>, ...
        m = re.match(r"\.reg\s+((?:\.v[24]\s+)?)\.(\w+)\s+(.*)$", stmt, re.S)
        if not m:
            raise Unsupported(stmt.split()[0] + " " + (stmt.split()[1] if len(stmt.split()) > 1 else ""),
                              "declarations other than .reg")
        if m.group(1).strip():
            raise Unsupported(".reg " + m.group(1).strip(), "vector registers")
        t = m.group(2)
        if t not in _TYPES:
            raise Unsupported(f".reg .{t}", "register type")
        ct = _TYPES[t]
        decls = []
        for nm in m.group(3).split(","):
            nm = nm.strip()
            am = re.fullmatch(r"([%\w$]+)\s*<\s*(\d+)\s*>", nm)
            names = [f"{am.group(1)}{k}" for k in range(int(am.group(2)))] if am else [nm]
            for x in names:
                self.nreg += 1
                cname = f"__r{self.nreg}"
                self.scopes[-1][x] = (cname, ct)
                decls.append(f"{ct} {cname}{{}}; (void){cname};")
        return " ".join(decls)

    def statement(self, stmt: str) -> str:
        if stmt.startswith(".reg"):
            return self.declare(stmt)
        if stmt.startswith("."):
            raise Unsupported(stmt.split()[0], "directive")
        guard = None
        gm = re.match(r"@\s*(!?)\s*([%\w$]+)\s+", stmt)
        if gm:
            p = self.operand(gm.group(2))
            guard = ("!" if gm.group(1) else "") + p.read("bool")
            stmt = stmt[gm.end():]
        parts = stmt.split(None, 1)
        mnem = parts[0]
        opnds = [x.strip() for x in _split_top(parts[1], ",")] if len(parts) > 1 else []
        try:
            code = self.instr(mnem, opnds)
        except (IndexError, KeyError, ValueError):
            raise Unsupported(mnem, "operands it could not read") from None
        except Unsupported as e:
            if e.what == mnem:
                raise
            raise Unsupported(mnem, f"{e.why + ' ' if e.why else ''}{e.what!r}".strip()) from None
        if guard:
            code = f"if ({guard}) {{ {code} }}"
        return code

    # -- instructions --
    def instr(self, mnem: str, a: list[str]) -> str:
        for fam, why in _REFUSED.items():
            if mnem == fam or mnem.startswith(fam + "."):
                raise Unsupported(mnem, why)
        parts = mnem.split(".")
        op, mods = parts[0], parts[1:]
        fn = getattr(self, "i_" + op, None)
        if fn is None:
            raise Unsupported(mnem)
        self.mnem = mnem
        return fn(mods, a)

    def need(self, a, k):
        if len(a) != k:
            raise Unsupported(self.mnem, f"{k} operands expected, {len(a)} given")

    def types(self, mods):
        return [m for m in mods if m in _TYPES]

    def one_type(self, mods, allowed=None):
        ts = self.types(mods)
        if len(ts) != 1 or (allowed is not None and ts[0] not in allowed):
            raise Unsupported(self.mnem, "type")
        return ts[0]

    def rnd(self, mods, default=0, integer=False):
        names = ("rni", "rzi", "rmi", "rpi") if integer else ("rn", "rz", "rm", "rp")
        for k, nm in enumerate(names):
            if nm in mods:
                return k
        return default

    def check_mods(self, mods, allowed):
        for m in mods:
            if m not in allowed and m not in _TYPES:
                raise Unsupported(self.mnem, f"modifier .{m}")

    # mov / special registers / pack-unpack
    def i_mov(self, mods, a):
        self.need(a, 2)
        t = self.one_type(mods)
        ct = _TYPES[t]
        d, s = a
        if d.startswith("{"):   # unpack
            parts = self.vec(d)
            src = self.operand(s).read(ct)
            w = _SIZE[t] * 8 // len(parts)
            pt = {8: "uint8_t", 16: "uint16_t", 32: "uint32_t"}[w]
            code = [f"{{ {ct} __v = {src};"]
            for k, p in enumerate(parts):
                code.append(p.write(pt, f"static_cast<{pt}>(static_cast<uint64_t>(__v) >> {k * w})"))
            code.append("}")
            return " ".join(code)
        if s.startswith("{"):   # pack
            parts = self.vec(s)
            w = _SIZE[t] * 8 // len(parts)
            pt = {8: "uint8_t", 16: "uint16_t", 32: "uint32_t"}[w]
            e = " | ".join(f"(static_cast<uint64_t>({p.read(pt)}) << {k * w})" for k, p in enumerate(parts))
            return self.operand(d).write(ct, f"__P::bits<{ct}>({e})")
        return self.operand(d).write(ct, self.operand(s).read(ct))

    # memory
    _SPACES = ("global", "shared", "local", "const", "param", "shared::cta")

    def mem_common(self, mods):
        space, kind, vec = "generic", "0", 1
        for m in mods:
            if m in ("global", "local", "const", "param"):
                space = m
            elif m in ("shared", "shared::cta"):
                space = "shared"
            elif m == "shared::cluster":
                raise Unsupported(self.mnem, "distributed shared memory (clusters)")
            elif m == "volatile":
                kind = "1"
            elif m == "relaxed":
                kind = "2"
            elif m in ("acquire", "release"):
                kind = "3"
            elif m in ("v2", "v4", "v8"):
                vec = int(m[1:])
            elif m in ("weak", "nc", "ca", "cg", "cs", "lu", "cv", "wb", "wt", "cta", "gpu", "sys", "cluster",
                       "mmio", "unified") or m.startswith(("L1::", "L2::")):
                pass
            elif m in _TYPES:
                pass
            else:
                raise Unsupported(self.mnem, f"modifier .{m}")
        return space, kind, vec

    def i_ld(self, mods, a):
        if len(a) == 3 and any(m.startswith("L2::cache_hint") for m in mods):
            a = a[:2]
        self.need(a, 2)
        space, kind, vec = self.mem_common(mods)
        t = self.one_type(mods)
        if t in ("pred",):
            raise Unsupported(self.mnem, "type")
        ct = _TYPES[t]
        addr = self.addr(a[1], space)
        if vec == 1:
            return f"{{ const uint64_t __ad = {addr}; {self.operand(a[0]).write(ct, f'__P::ld<{ct}>(__ad, {kind})')} }}"
        parts = self.vec(a[0])
        if len(parts) != vec:
            raise Unsupported(self.mnem, "vector length")
        code = [f"{{ const uint64_t __ad = {addr}; {ct} __v[{vec}];"]
        for k in range(vec):
            code.append(f"__v[{k}] = __P::ld<{ct}>(__ad + {k * _SIZE[t]}, {kind});")
        for k, p in enumerate(parts):
            code.append(p.write(ct, f"__v[{k}]"))
        code.append("}")
        return " ".join(code)

    def i_st(self, mods, a):
        if len(a) == 3 and any(m.startswith("L2::cache_hint") for m in mods):
            a = a[:2]
        self.need(a, 2)
        space, kind, vec = self.mem_common(mods)
        t = self.one_type(mods)
        ct = _TYPES[t]
        addr = self.addr(a[0], space)
        if vec == 1:
            return f"{{ const uint64_t __ad = {addr}; __P::st<{ct}>(__ad, {self.operand(a[1]).read(ct)}, {kind}); }}"
        parts = self.vec(a[1])
        if len(parts) != vec:
            raise Unsupported(self.mnem, "vector length")
        code = [f"{{ const uint64_t __ad = {addr}; {ct} __v[{vec}] = {{"]
        code.append(", ".join(p.read(ct) for p in parts) + "};")
        for k in range(vec):
            code.append(f"__P::st<{ct}>(__ad + {k * _SIZE[t]}, __v[{k}], {kind});")
        code.append("}")
        return " ".join(code)

    def i_prefetch(self, mods, a):
        return "(void)0;"

    i_prefetchu = i_prefetch

    def i_cvta(self, mods, a):
        self.need(a, 2)
        t = self.one_type(mods, {"u32", "u64"})
        ct = _TYPES[t]
        to = "to" in mods
        space = next((m for m in mods if m in ("global", "shared", "local", "const", "param", "shared::cta")), None)
        if space is None:
            raise Unsupported(self.mnem, "state space")
        src = self.operand(a[1]).read("uint64_t")
        if space in ("shared", "shared::cta"):
            e = f"__P::to_shared({src})" if to else f"__P::from_shared({src})"
        else:
            e = src
        return self.operand(a[0]).write(ct, f"static_cast<{ct}>({e})")

    def atom_like(self, mods, a, has_dst):
        ops = {"add": "A_ADD", "min": "A_MIN", "max": "A_MAX", "inc": "A_INC", "dec": "A_DEC", "and": "A_AND",
               "or": "A_OR", "xor": "A_XOR", "exch": "A_EXCH", "cas": None}
        space, op = "generic", None
        for m in mods:
            if m in ("global",):
                space = "global"
            elif m in ("shared", "shared::cta"):
                space = "shared"
            elif m == "shared::cluster":
                raise Unsupported(self.mnem, "distributed shared memory (clusters)")
            elif m in ops:
                op = m
            elif m in ("relaxed", "acquire", "release", "acq_rel", "sem", "cta", "gpu", "sys", "noftz") \
                    or m.startswith(("L2::", "L1::")) or m in _TYPES:
                pass
            elif m in ("v2", "v4", "v8"):
                raise Unsupported(self.mnem, "vector atomics")
            else:
                raise Unsupported(self.mnem, f"modifier .{m}")
        if op is None:
            raise Unsupported(self.mnem, "operation")
        t = self.one_type(mods)
        if any(x.startswith("L2::cache_hint") for x in mods):
            a = a[:-1]
        k = 0
        dst = None
        if has_dst:
            dst = self.operand(a[0])
            k = 1
        addr = self.addr(a[k], space)
        if t in ("f16", "bf16"):
            if op != "add":
                raise Unsupported(self.mnem, "f16/bf16 atomics other than add")
            e = f"__P::atom_add_h<{'__half' if t == 'f16' else '__nv_bfloat16'}>(__ad, {self.operand(a[k + 1]).read('uint16_t')})"
            ct = "uint16_t"
        elif t in ("f16x2", "bf16x2"):
            raise Unsupported(self.mnem, "f16x2/bf16x2 atomics")
        else:
            ct = _TYPES[t]
            if op == "cas":
                if len(a) != k + 3:
                    raise Unsupported(self.mnem, "operands")
                e = f"__P::atom_cas<{ct}>(__ad, {self.operand(a[k + 1]).read(ct)}, {self.operand(a[k + 2]).read(ct)})"
            else:
                if len(a) != k + 2:
                    raise Unsupported(self.mnem, "operands")
                e = f"__P::atom<{ct}>(__ad, __P::{ops[op]}, {self.operand(a[k + 1]).read(ct)})"
        if dst is not None:
            return f"{{ const uint64_t __ad = {addr}; {dst.write(ct, e)} }}"
        return f"{{ const uint64_t __ad = {addr}; (void){e}; }}"

    def i_atom(self, mods, a):
        return self.atom_like(mods, a, True)

    def i_red(self, mods, a):
        return self.atom_like(mods, a, False)

    def i_membar(self, mods, a):
        if "cta" in mods:
            return "__threadfence_block();"
        if "sys" in mods:
            return "__threadfence_system();"
        return "__threadfence();"

    def i_fence(self, mods, a):
        # fence.sc / fence.acq_rel (any scope), fence.proxy.*: a full fence is at least as strong
        return "std::atomic_thread_fence(std::memory_order_seq_cst);"

    def i_bar(self, mods, a):
        if mods and mods[0] == "warp":
            if mods != ["warp", "sync"]:
                raise Unsupported(self.mnem)
            self.need(a, 1)
            return f"__syncwarp({self.operand(a[0]).read('uint32_t')});"
        m = [x for x in mods if x not in ("aligned", "cta")]
        if m != ["sync"] or len(a) != 1:
            raise Unsupported(self.mnem, "only bar.sync / barrier.sync 0 without a thread count (= __syncthreads)")
        b = self.operand(a[0])
        if isinstance(b, _Imm) and not b.cexpr.startswith("__a"):
            if b.cexpr != "0ll":
                raise Unsupported(self.mnem, "only barrier 0 (= __syncthreads)")
            return "__syncthreads();"
        return f"__P::bar_id0({b.read('uint32_t')}); __syncthreads();"

    i_barrier = i_bar

    def i_nanosleep(self, mods, a):
        self.need(a, 1)
        return f"__nanosleep({self.operand(a[0]).read('uint32_t')});"

    def i_trap(self, mods, a):
        return "__trap();"

    def i_activemask(self, mods, a):
        self.need(a, 1)
        return self.operand(a[0]).write("uint32_t", "__activemask()")

    # integer arithmetic
    def binop(self, mods, a, expr, allowed_types=None, allowed_mods=()):
        self.need(a, 3)
        self.check_mods(mods, set(allowed_mods))
        t = self.one_type(mods, allowed_types)
        ct = _TYPES[t]
        x, y = self.operand(a[1]).read(ct), self.operand(a[2]).read(ct)
        return self.operand(a[0]).write(ct, expr(ct, x, y, t))

    def fmods(self, mods):
        return {"rn", "rz", "rm", "rp", "ftz", "sat", "approx", "full"}

    def i_add(self, mods, a):
        return self.addsub(mods, a, "+")

    def i_sub(self, mods, a):
        return self.addsub(mods, a, "-")

    def addsub(self, mods, a, sign):
        t = self.one_type(mods)
        self.need(a, 3)
        ct = _TYPES[t]
        if t in _FLOAT:
            self.check_mods(mods, self.fmods(mods))
            return self.fbin(mods, a, t, "fadd" if sign == "+" else "fsub")
        if t in ("f16", "bf16", "f16x2", "bf16x2"):
            return self.half_arith("add" if sign == "+" else "sub", mods, a, t)
        x, y = self.operand(a[1]).read(ct), self.operand(a[2]).read(ct)
        d = self.operand(a[0])
        if "cc" in mods:
            self.carry_set = True
            self.check_mods(mods, {"cc"})
            ut = "uint32_t" if _SIZE[t] == 4 else "uint64_t"
            if sign == "+":
                return (f"{{ {ut} __x = static_cast<{ut}>({x}), __y = static_cast<{ut}>({y}); {ut} __s = __x + __y; "
                        f"__cc = __s < __x; {d.write(ct, '__s')} }}")
            return (f"{{ {ut} __x = static_cast<{ut}>({x}), __y = static_cast<{ut}>({y}); "
                    f"__cc = __x < __y; {d.write(ct, '__x - __y')} }}")
        if "sat" in mods:
            if t != "s32":
                raise Unsupported(self.mnem, ".sat needs .s32")
            return d.write(ct, f"__P::sat_{'add' if sign == '+' else 'sub'}_s32<int32_t>({x}, {y})")
        self.check_mods(mods, set())
        ut = "uint" + str(_SIZE[t] * 8) + "_t"
        return d.write(ct, f"static_cast<{ut}>(static_cast<{ut}>({x}) {sign} static_cast<{ut}>({y}))")

    def carry_in(self):
        if not self.carry_set:
            raise Unsupported(self.mnem, "a carry chain split across asm statements: the carry flag "
                                         "lives only within one asm statement here")

    def i_addc(self, mods, a):
        return self.addsubc(mods, a, "+")

    def i_subc(self, mods, a):
        return self.addsubc(mods, a, "-")

    def addsubc(self, mods, a, sign):
        self.need(a, 3)
        self.carry_in()
        self.check_mods(mods, {"cc"})
        t = self.one_type(mods, {"u32", "s32", "u64", "s64"})
        ct = _TYPES[t]
        ut = "uint32_t" if _SIZE[t] == 4 else "uint64_t"
        x, y = self.operand(a[1]).read(ct), self.operand(a[2]).read(ct)
        d = self.operand(a[0])
        setcc = "cc" in mods
        if sign == "+":
            body = (f"{ut} __x = static_cast<{ut}>({x}), __y = static_cast<{ut}>({y}); {ut} __s = __x + __y + __cc; "
                    + (f"__cc = (__s < __x) || (__cc && __s == __x); " if setcc else "") + d.write(ct, "__s"))
        else:
            body = (f"{ut} __x = static_cast<{ut}>({x}), __y = static_cast<{ut}>({y}); {ut} __s = __x - __y - __cc; "
                    + (f"__cc = (__x < __y) || (__cc && __x == __y); " if setcc else "") + d.write(ct, "__s"))
        return "{ " + body + " }"

    def i_mul(self, mods, a):
        self.need(a, 3)
        t = self.one_type(mods)
        ct = _TYPES[t]
        if t in _FLOAT:
            self.check_mods(mods, self.fmods(mods))
            return self.fbin(mods, a, t, "fmul")
        if t in ("f16", "bf16", "f16x2", "bf16x2"):
            return self.half_arith("mul", mods, a, t)
        x, y = self.operand(a[1]).read(ct), self.operand(a[2]).read(ct)
        d = self.operand(a[0])
        if "hi" in mods:
            return d.write(ct, f"__P::mulhi<{ct}>({x}, {y})")
        if "wide" in mods:
            if _SIZE[t] not in (2, 4):
                raise Unsupported(self.mnem, ".wide on 16/32-bit types")
            wt = {("u", 2): "uint32_t", ("s", 2): "int32_t", ("u", 4): "uint64_t", ("s", 4): "int64_t"}[
                ("s" if t in _SIGNED else "u", _SIZE[t])]
            return d.write(wt, f"__P::mulwide<{ct}>({x}, {y})")
        self.check_mods(mods, {"lo"})
        ut = "uint" + str(_SIZE[t] * 8) + "_t"
        return d.write(ct, f"static_cast<{ut}>(static_cast<{ut}>({x}) * static_cast<{ut}>({y}))")

    def i_mul24(self, mods, a):
        self.need(a, 3)
        t = self.one_type(mods, {"u32", "s32"})
        if "hi" in mods:
            raise Unsupported(self.mnem, "mul24.hi")
        ct = _TYPES[t]
        x, y = self.operand(a[1]).read(ct), self.operand(a[2]).read(ct)
        if t == "s32":
            e = (f"static_cast<uint32_t>(static_cast<int64_t>((static_cast<int32_t>(static_cast<uint32_t>({x}) << 8) >> 8)) * "
                 f"static_cast<int64_t>((static_cast<int32_t>(static_cast<uint32_t>({y}) << 8) >> 8)))")
        else:
            e = f"static_cast<uint32_t>(static_cast<uint64_t>({x} & 0xffffffu) * ({y} & 0xffffffu))"
        return self.operand(a[0]).write("uint32_t", e)

    def i_mad(self, mods, a):
        self.need(a, 4)
        t = self.one_type(mods)
        ct = _TYPES[t]
        if t in _FLOAT:
            return self.i_fma(mods, a)
        if t in ("f16", "bf16", "f16x2", "bf16x2"):
            return self.half_arith("fma", mods, a, t)
        x, y, z = (self.operand(v).read(ct) for v in a[1:])
        d = self.operand(a[0])
        ut = "uint" + str(_SIZE[t] * 8) + "_t"
        if "cc" in mods:
            if "lo" not in mods and "hi" not in mods:
                raise Unsupported(self.mnem)
            self.carry_set = True
            prod = (f"static_cast<{ut}>(__P::mulhi<{ct}>({x}, {y}))" if "hi" in mods
                    else f"static_cast<{ut}>(static_cast<{ut}>({x}) * static_cast<{ut}>({y}))")
            return (f"{{ {ut} __p = {prod}, __z = static_cast<{ut}>({z}); {ut} __s = __p + __z; __cc = __s < __p; "
                    f"{d.write(ct, '__s')} }}")
        if "hi" in mods:
            if "sat" in mods:
                raise Unsupported(self.mnem)
            return d.write(ct, f"static_cast<{ut}>(static_cast<{ut}>(__P::mulhi<{ct}>({x}, {y})) + static_cast<{ut}>({z}))")
        if "wide" in mods:
            if _SIZE[t] not in (2, 4):
                raise Unsupported(self.mnem, ".wide on 16/32-bit types")
            s = t in _SIGNED
            wt = {2: "int32_t" if s else "uint32_t", 4: "int64_t" if s else "uint64_t"}[_SIZE[t]]
            uw = {2: "uint32_t", 4: "uint64_t"}[_SIZE[t]]
            zr = self.operand(a[3]).read(wt)
            return d.write(wt, f"static_cast<{uw}>(static_cast<{uw}>(__P::mulwide<{ct}>({x}, {y})) + static_cast<{uw}>({zr}))")
        self.check_mods(mods, {"lo"})
        return d.write(ct, f"static_cast<{ut}>(static_cast<{ut}>({x}) * static_cast<{ut}>({y}) + static_cast<{ut}>({z}))")

    def i_madc(self, mods, a):
        self.need(a, 4)
        self.carry_in()
        t = self.one_type(mods, {"u32", "s32", "u64", "s64"})
        self.check_mods(mods, {"lo", "hi", "cc"})
        ct = _TYPES[t]
        ut = "uint" + str(_SIZE[t] * 8) + "_t"
        x, y, z = (self.operand(v).read(ct) for v in a[1:])
        prod = (f"static_cast<{ut}>(__P::mulhi<{ct}>({x}, {y}))" if "hi" in mods
                else f"static_cast<{ut}>(static_cast<{ut}>({x}) * static_cast<{ut}>({y}))")
        setcc = "cc" in mods
        return (f"{{ {ut} __p = {prod}, __z = static_cast<{ut}>({z}); {ut} __s = __p + __z + __cc; "
                + ("__cc = (__s < __p) || (__cc && __s == __p); " if setcc else "")
                + f"{self.operand(a[0]).write(ct, '__s')} }}")

    def i_mad24(self, mods, a):
        raise Unsupported(self.mnem)

    def i_min(self, mods, a):
        return self.minmax(mods, a, "min")

    def i_max(self, mods, a):
        return self.minmax(mods, a, "max")

    def minmax(self, mods, a, which):
        t = self.one_type(mods)
        if t in _FLOAT:
            self.check_mods(mods, {"ftz"})
            return self.fbin(mods, a, t, "fmin" if which == "min" else "fmax")
        if t in _HALF or t in ("f16x2", "bf16x2"):
            raise Unsupported(self.mnem, "f16/bf16 min/max")
        self.check_mods(mods, set())
        cmp = "<" if which == "min" else ">"
        return self.binop(mods, a, lambda ct, x, y, t: f"(({x}) {cmp} ({y}) ? ({x}) : ({y}))")

    def unop(self, mods, a, expr, allowed=None):
        self.need(a, 2)
        t = self.one_type(mods, allowed)
        ct = _TYPES[t]
        return self.operand(a[0]).write(ct, expr(ct, self.operand(a[1]).read(ct), t))

    def i_abs(self, mods, a):
        t = self.one_type(mods)
        if t in _FLOAT:
            self.check_mods(mods, {"ftz"})
            f = "__P::ftz" if "ftz" in mods and t == "f32" else ""
            return self.unop(mods, a, lambda ct, x, t: f"{f}(__P::fabs_<{ct}>({f}({x})))")
        self.check_mods(mods, set())
        return self.unop(mods, a, lambda ct, x, t: f"__P::iabs<{ct}>({x})", {"s16", "s32", "s64"})

    def i_neg(self, mods, a):
        t = self.one_type(mods)
        if t in _FLOAT:
            self.check_mods(mods, {"ftz"})
            f = "__P::ftz" if "ftz" in mods and t == "f32" else ""
            return self.unop(mods, a, lambda ct, x, t: f"{f}(__P::fneg<{ct}>({f}({x})))")
        self.check_mods(mods, set())
        return self.unop(mods, a, lambda ct, x, t: f"static_cast<{ct}>(0 - static_cast<uint64_t>({x}))",
                         {"s16", "s32", "s64"})

    def bitop(self, mods, a, sym):
        t = self.one_type(mods, {"b16", "b32", "b64", "pred"})
        self.check_mods(mods, set())
        if t == "pred":
            return self.binop(mods, a, lambda ct, x, y, t: f"(({x}) {sym} ({y}))")
        return self.binop(mods, a, lambda ct, x, y, t: f"static_cast<{ct}>(({x}) {sym} ({y}))")

    def i_and(self, mods, a):
        return self.bitop(mods, a, "&")

    def i_or(self, mods, a):
        return self.bitop(mods, a, "|")

    def i_xor(self, mods, a):
        return self.bitop(mods, a, "^")

    def i_not(self, mods, a):
        t = self.one_type(mods, {"b16", "b32", "b64", "pred"})
        if t == "pred":
            return self.unop(mods, a, lambda ct, x, t: f"!({x})")
        return self.unop(mods, a, lambda ct, x, t: f"static_cast<{ct}>(~({x}))")

    def i_cnot(self, mods, a):
        return self.unop(mods, a, lambda ct, x, t: f"static_cast<{ct}>(({x}) == 0 ? 1 : 0)", {"b16", "b32", "b64"})

    def i_shl(self, mods, a):
        self.need(a, 3)
        t = self.one_type(mods, {"b16", "b32", "b64"})
        ct = _TYPES[t]
        return self.operand(a[0]).write(
            ct, f"__P::shl<{ct}>({self.operand(a[1]).read(ct)}, {self.operand(a[2]).read('uint32_t')})")

    def i_shr(self, mods, a):
        self.need(a, 3)
        t = self.one_type(mods, {"b16", "b32", "b64", "u16", "u32", "u64", "s16", "s32", "s64"})
        ct = _TYPES[t]
        return self.operand(a[0]).write(
            ct, f"__P::shr<{ct}>({self.operand(a[1]).read(ct)}, {self.operand(a[2]).read('uint32_t')})")

    def i_brev(self, mods, a):
        return self.unop(mods, a, lambda ct, x, t: f"__P::brev<{ct}>({x})", {"b32", "b64"})

    def i_popc(self, mods, a):
        self.need(a, 2)
        t = self.one_type(mods, {"b32", "b64"})
        return self.operand(a[0]).write("uint32_t", f"__P::popc<{_TYPES[t]}>({self.operand(a[1]).read(_TYPES[t])})")

    def i_clz(self, mods, a):
        self.need(a, 2)
        t = self.one_type(mods, {"b32", "b64"})
        return self.operand(a[0]).write("uint32_t", f"__P::clz<{_TYPES[t]}>({self.operand(a[1]).read(_TYPES[t])})")

    def i_bfind(self, mods, a):
        self.need(a, 2)
        self.check_mods(mods, {"shiftamt"})
        t = self.one_type(mods, {"u32", "s32", "u64", "s64"})
        ct = _TYPES[t]
        return self.operand(a[0]).write(
            "uint32_t", f"__P::bfind<{ct}>({self.operand(a[1]).read(ct)}, {'true' if 'shiftamt' in mods else 'false'})")

    def i_bfe(self, mods, a):
        self.need(a, 4)
        t = self.one_type(mods, {"u32", "s32", "u64", "s64"})
        ct = _TYPES[t]
        return self.operand(a[0]).write(ct, f"__P::bfe<{ct}>({self.operand(a[1]).read(ct)}, "
                                            f"{self.operand(a[2]).read('uint32_t')}, {self.operand(a[3]).read('uint32_t')})")

    def i_bfi(self, mods, a):
        self.need(a, 5)
        t = self.one_type(mods, {"b32", "b64"})
        ct = _TYPES[t]
        return self.operand(a[0]).write(ct, f"__P::bfi<{ct}>({self.operand(a[1]).read(ct)}, {self.operand(a[2]).read(ct)}, "
                                            f"{self.operand(a[3]).read('uint32_t')}, {self.operand(a[4]).read('uint32_t')})")

    def i_prmt(self, mods, a):
        self.need(a, 4)
        modes = {"f4e": 1, "b4e": 2, "rc8": 3, "ecl": 4, "ecr": 5, "rc16": 6}
        self.check_mods(mods, set(modes))
        self.one_type(mods, {"b32"})
        mode = next((modes[m] for m in mods if m in modes), 0)
        x, y, z = (self.operand(v).read("uint32_t") for v in a[1:])
        return self.operand(a[0]).write("uint32_t", f"__P::prmt({x}, {y}, {z}, {mode})")

    def i_shf(self, mods, a):
        self.need(a, 4)
        self.check_mods(mods, {"l", "r", "wrap", "clamp"})
        self.one_type(mods, {"b32"})
        if ("l" in mods) == ("r" in mods) or ("wrap" in mods) == ("clamp" in mods):
            raise Unsupported(self.mnem)
        x, y, z = (self.operand(v).read("uint32_t") for v in a[1:])
        return self.operand(a[0]).write(
            "uint32_t", f"__P::shf({x}, {y}, {z}, {'true' if 'l' in mods else 'false'}, {'true' if 'wrap' in mods else 'false'})")

    def i_lop3(self, mods, a):
        self.need(a, 5)
        self.one_type(mods, {"b32"})
        self.check_mods(mods, set())
        x, y, z, lut = (self.operand(v).read("uint32_t") for v in a[1:])
        return self.operand(a[0]).write("uint32_t", f"__P::lop3({x}, {y}, {z}, ({lut}) & 0xffu)")

    # SIMD video instructions (vadd4, vabsdiff4 ... and the 2-lane forms): the default lane selectors and
    # mask only; .sat, or .add (the lanes' results summed into c, the sum-of-absolute-differences idiom
    # of cuda-samples' stereoDisparity `__usad4`)
    _VIDEO = {"vadd": "add", "vsub": "sub", "vavrg": "avrg", "vabsdiff": "absdiff", "vmin": "min", "vmax": "max"}

    def _video(self, op, lanes, mods, a):
        self.need(a, 4)
        self.check_mods(mods, {"sat", "add"})
        ts = self.types(mods)
        if len(ts) != 3 or any(t not in ("u32", "s32") for t in ts) or ("sat" in mods and "add" in mods):
            raise Unsupported(self.mnem)
        if any("." in v.split("[")[-1] for v in a):   # lane selectors / masks (%1.b3210): not implemented
            raise Unsupported(self.mnem, "lane selector or mask")
        x, y, z = (self.operand(v).read("uint32_t") for v in a[1:])
        sd, sa, sb = ("true" if t == "s32" else "false" for t in ts)
        mode = 2 if "add" in mods else 1 if "sat" in mods else 0
        return self.operand(a[0]).write(
            "uint32_t", f"__P::video<{lanes}, __P::Video::{op}, {sd}, {sa}, {sb}, {mode}>({x}, {y}, {z})")

    def i_vadd4(self, mods, a): return self._video("add", 4, mods, a)
    def i_vsub4(self, mods, a): return self._video("sub", 4, mods, a)
    def i_vavrg4(self, mods, a): return self._video("avrg", 4, mods, a)
    def i_vabsdiff4(self, mods, a): return self._video("absdiff", 4, mods, a)
    def i_vmin4(self, mods, a): return self._video("min", 4, mods, a)
    def i_vmax4(self, mods, a): return self._video("max", 4, mods, a)
    def i_vadd2(self, mods, a): return self._video("add", 2, mods, a)
    def i_vsub2(self, mods, a): return self._video("sub", 2, mods, a)
    def i_vavrg2(self, mods, a): return self._video("avrg", 2, mods, a)
    def i_vabsdiff2(self, mods, a): return self._video("absdiff", 2, mods, a)
    def i_vmin2(self, mods, a): return self._video("min", 2, mods, a)
    def i_vmax2(self, mods, a): return self._video("max", 2, mods, a)

    def i_dp4a(self, mods, a):
        self.need(a, 4)
        ts = self.types(mods)
        if len(ts) != 2 or any(t not in ("u32", "s32") for t in ts):
            raise Unsupported(self.mnem)
        x, y, z = (self.operand(v).read("uint32_t") for v in a[1:])
        sa, sb = ("true" if t == "s32" else "false" for t in ts)
        return self.operand(a[0]).write("uint32_t", f"__P::dp4a<{sa}, {sb}>({x}, {y}, {z})")

    def i_dp2a(self, mods, a):
        self.need(a, 4)
        ts = self.types(mods)
        if len(ts) != 2 or any(t not in ("u32", "s32") for t in ts) or ("lo" in mods) == ("hi" in mods):
            raise Unsupported(self.mnem)
        x, y, z = (self.operand(v).read("uint32_t") for v in a[1:])
        sa, sb = ("true" if t == "s32" else "false" for t in ts)
        return self.operand(a[0]).write("uint32_t", f"__P::dp2a<{sa}, {sb}>({x}, {y}, {z}, {'true' if 'hi' in mods else 'false'})")

    def i_selp(self, mods, a):
        self.need(a, 4)
        t = self.one_type(mods)
        ct = _TYPES[t]
        x, y, p = self.operand(a[1]).read(ct), self.operand(a[2]).read(ct), self.operand(a[3]).read("bool")
        return self.operand(a[0]).write(ct, f"(({p}) ? ({x}) : ({y}))")

    _CMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
            "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}

    def i_setp(self, mods, a):
        ts = self.types(mods)
        if len(ts) != 1:
            raise Unsupported(self.mnem)
        t = ts[0]
        ct = _TYPES[t]
        cmps = [m for m in mods if m in self._CMP or m in ("equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")]
        bops = [m for m in mods if m in ("and", "or", "xor")]
        self.check_mods(mods, set(cmps) | set(bops) | {"ftz"})
        if len(cmps) != 1 or t in _HALF or t in ("f16x2", "bf16x2", "pred"):
            raise Unsupported(self.mnem)
        c = cmps[0]
        dst = a[0].split("|")
        x, y = self.operand(a[1]).read(ct), self.operand(a[2]).read(ct)
        if t in _FLOAT:
            if "ftz" in mods and t == "f32":
                x, y = f"__P::ftz({x})", f"__P::ftz({y})"
            unord = f"(({x}) != ({x}) || ({y}) != ({y}))"
            if c in ("num", "nan"):
                e = f"!{unord}" if c == "num" else unord
            elif c.endswith("u") and c[:-1] in self._CMP:
                e = f"({unord} || (({x}) {self._CMP[c[:-1]]} ({y})))"
            elif c == "ne":
                e = f"(!{unord} && (({x}) != ({y})))"
            elif c in ("eq", "lt", "le", "gt", "ge"):
                e = f"(({x}) {self._CMP[c]} ({y}))"
            else:
                raise Unsupported(self.mnem)
        else:
            if c not in self._CMP:
                raise Unsupported(self.mnem)
            if c in ("lo", "ls", "hi", "hs") and t in _SIGNED:
                raise Unsupported(self.mnem)
            e = f"(({x}) {self._CMP[c]} ({y}))"
        code = ["{", f"bool __t = {e};"]
        if bops:
            if len(a) != 4:
                raise Unsupported(self.mnem, "operands")
            cp = a[3].strip()
            neg = cp.startswith("!")
            cv = self.operand(cp.lstrip("!").strip()).read("bool")
            cv = f"!({cv})" if neg else cv
            sym = {"and": "&&", "or": "||", "xor": "!="}[bops[0]]
            code.append(self.operand(dst[0]).write("bool", f"(__t {sym} {cv})"))
            if len(dst) > 1:
                code.append(self.operand(dst[1]).write("bool", f"(!__t {sym} {cv})"))
        else:
            self.need(a, 3)
            code.append(self.operand(dst[0]).write("bool", "__t"))
            if len(dst) > 1:
                code.append(self.operand(dst[1]).write("bool", "!__t"))
        code.append("}")
        return " ".join(code)

    # floating point
    def fbin(self, mods, a, t, fn):
        self.need(a, 3)
        ct = _TYPES[t]
        ftz = "ftz" in mods and t == "f32"
        x, y = self.operand(a[1]).read(ct), self.operand(a[2]).read(ct)
        if ftz:
            x, y = f"__P::ftz({x})", f"__P::ftz({y})"
        if fn in ("fmin", "fmax"):
            e = f"__P::{fn}<{ct}>({x}, {y})"
        else:
            e = f"__P::{fn}<{ct}>({x}, {y}, {self.rnd(mods)})"
        if ftz:
            e = f"__P::ftz({e})"
        if "sat" in mods:
            e = f"__P::fsat<{ct}>({e})"
        return self.operand(a[0]).write(ct, e)

    def i_div(self, mods, a):
        t = self.one_type(mods)
        if t not in _FLOAT:
            self.need(a, 3)
            self.check_mods(mods, set())
            ct = _TYPES[t]
            x, y = self.operand(a[1]).read(ct), self.operand(a[2]).read(ct)
            # integer division by zero traps as in the rest of the emulator (a fault report)
            if t in _SIGNED:
                e = f"static_cast<{ct}>(({y}) == -1 ? static_cast<{ct}>(0 - static_cast<uint64_t>({x})) : ({x}) / ({y}))"
            else:
                e = f"static_cast<{ct}>(({x}) / ({y}))"
            return self.operand(a[0]).write(ct, e)
        self.check_mods(mods, self.fmods(mods))
        return self.fbin(mods, a, t, "fdiv")

    def i_rem(self, mods, a):
        self.need(a, 3)
        t = self.one_type(mods, _INT)
        ct = _TYPES[t]
        x, y = self.operand(a[1]).read(ct), self.operand(a[2]).read(ct)
        if t in _SIGNED:
            e = f"static_cast<{ct}>(({y}) == -1 ? 0 : ({x}) % ({y}))"
        else:
            e = f"static_cast<{ct}>(({x}) % ({y}))"
        return self.operand(a[0]).write(ct, e)

    def i_fma(self, mods, a):
        self.need(a, 4)
        t = self.one_type(mods)
        if t in ("f16", "bf16", "f16x2", "bf16x2"):
            return self.half_arith("fma", mods, a, t)
        if t not in _FLOAT:
            raise Unsupported(self.mnem)
        self.check_mods(mods, {"rn", "rz", "rm", "rp", "ftz", "sat"})
        ct = _TYPES[t]
        ftz = "ftz" in mods and t == "f32"
        xs = [self.operand(v).read(ct) for v in a[1:]]
        if ftz:
            xs = [f"__P::ftz({x})" for x in xs]
        e = f"__P::ffma<{ct}>({xs[0]}, {xs[1]}, {xs[2]}, {self.rnd(mods)})"
        if ftz:
            e = f"__P::ftz({e})"
        if "sat" in mods:
            e = f"__P::fsat<{ct}>({e})"
        return self.operand(a[0]).write(ct, e)

    def funary(self, mods, a, expr, allow_rnd=True):
        self.need(a, 2)
        t = self.one_type(mods)
        if t not in _FLOAT:
            raise Unsupported(self.mnem, "type")
        self.check_mods(mods, {"approx", "ftz", "full"} | ({"rn", "rz", "rm", "rp"} if allow_rnd else set()))
        ct = _TYPES[t]
        ftz = "ftz" in mods and t == "f32"
        x = self.operand(a[1]).read(ct)
        if ftz:
            x = f"__P::ftz({x})"
        e = expr(ct, x, self.rnd(mods))
        if ftz:
            e = f"__P::ftz({e})"
        return self.operand(a[0]).write(ct, e)

    # .approx functions compute the accurate (correctly rounded or libm) value, as the emulator's fast
    # intrinsics do
    def i_rcp(self, mods, a):
        return self.funary(mods, a, lambda ct, x, m: f"__P::frcp<{ct}>({x}, {m})")

    def i_sqrt(self, mods, a):
        return self.funary(mods, a, lambda ct, x, m: f"__P::fsqrt<{ct}>({x}, {m})")

    def i_rsqrt(self, mods, a):
        return self.funary(mods, a, lambda ct, x, m: f"static_cast<{ct}>({ct}(1) / std::sqrt({x}))", False)

    def i_ex2(self, mods, a):
        return self.funary(mods, a, lambda ct, x, m: f"static_cast<{ct}>(std::exp2({x}))", False)

    def i_lg2(self, mods, a):
        return self.funary(mods, a, lambda ct, x, m: f"static_cast<{ct}>(std::log2({x}))", False)

    def i_sin(self, mods, a):
        return self.funary(mods, a, lambda ct, x, m: f"static_cast<{ct}>(std::sin({x}))", False)

    def i_cos(self, mods, a):
        return self.funary(mods, a, lambda ct, x, m: f"static_cast<{ct}>(std::cos({x}))", False)

    def i_tanh(self, mods, a):
        return self.funary(mods, a, lambda ct, x, m: f"static_cast<{ct}>(std::tanh({x}))", False)

    def half_arith(self, op, mods, a, t):
        """add/sub/mul/fma on f16/bf16 (x2): the emulator's __hadd/__hmul/__hfma & co."""
        self.check_mods(mods, {"rn"})
        pair = t.endswith("x2")
        base = t[:-2] if pair else t
        ht = ("__half" if base == "f16" else "__nv_bfloat16") + ("2" if pair else "")
        fn = {"add": "__hadd", "sub": "__hsub", "mul": "__hmul", "fma": "__hfma"}[op] + ("2" if pair else "")
        bt = "uint32_t" if pair else "uint16_t"
        n = 4 if op == "fma" else 3
        self.need(a, n)
        args = ", ".join(f"__P::bits<{ht}>({self.operand(v).read(bt)})" for v in a[1:])
        return (f"{{ {ht} __h = {fn}({args}); {bt} __b; __builtin_memcpy(&__b, static_cast<const void*>(&__h), sizeof __b); "
                f"{self.operand(a[0]).write(bt, '__b')} }}")

    def i_cvt(self, mods, a):
        ts = self.types(mods)
        if len(ts) != 2:
            raise Unsupported(self.mnem, "types")
        dt, st = ts
        known = {"rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "ftz", "sat", "relu"}
        self.check_mods(mods, known)
        if dt in ("f16x2", "bf16x2"):
            self.need(a, 3)
            if st != "f32":
                raise Unsupported(self.mnem)
            m = self.rnd(mods, -1)
            if m not in (0, 1):
                raise Unsupported(self.mnem, ".rn or .rz")
            fn = "f2h" if dt == "f16x2" else "f2bf"
            hi = f"__P::{fn}({self.operand(a[1]).read('float')}, {m})"
            lo = f"__P::{fn}({self.operand(a[2]).read('float')}, {m})"
            if "relu" in mods:
                bf = "true" if dt == "bf16x2" else "false"
                hi, lo = f"__P::relu16({hi}, {bf})", f"__P::relu16({lo}, {bf})"
            return self.operand(a[0]).write("uint32_t", f"(static_cast<uint32_t>({hi}) << 16) | static_cast<uint32_t>({lo})")
        self.need(a, 2)
        if dt not in _TYPES or st not in _TYPES or "x2" in st or dt == "pred" or st == "pred":
            raise Unsupported(self.mnem)
        dct, sct = _TYPES[dt], _TYPES[st]
        src = self.operand(a[1]).read(sct)
        d = self.operand(a[0])
        ftz = "ftz" in mods
        sat = "sat" in mods
        # source value as a C++ float/double or integer
        if st == "f16":
            sv, sk = f"__P::h2f({src})", "f32"
        elif st == "bf16":
            sv, sk = f"__P::bf2f({src})", "f32"
        else:
            sv, sk = src, st
        if sk == "f32" and ftz:
            sv = f"__P::ftz({sv})"
        if dt in _INT:
            if sk in _FLOAT:
                m = self.rnd(mods, -1, integer=True)
                if m < 0:
                    raise Unsupported(self.mnem, "float-to-integer cvt needs .rni/.rzi/.rmi/.rpi")
                return d.write(dct, f"__P::f2i<{dct}>({sv}, {m})")
            # integer -> integer (.sat clamps to the destination's range)
            if sat:
                return d.write(dct, f"static_cast<{dct}>(std::clamp<__int128>(static_cast<__int128>({sv}), "
                                    f"static_cast<__int128>(std::numeric_limits<{dct}>::min()), "
                                    f"static_cast<__int128>(std::numeric_limits<{dct}>::max())))")
            return d.write(dct, f"static_cast<{dct}>({sv})")
        # floating destination
        if sk in _INT:
            m = self.rnd(mods, 0)
            if dt in _FLOAT:
                e = f"__P::i2f<{dct}, {sct}>({sv}, {m})"
            else:
                fn = "f2h" if dt == "f16" else "f2bf"
                e = f"__P::{fn}(__P::i2d_odd<{sct}>({sv}), {m})"
        else:
            irnd = self.rnd(mods, -1, integer=True)
            m = self.rnd(mods, 0)
            if irnd >= 0:   # round to an integral value in the same format
                if dt in _HALF:
                    fn = "f2h" if dt == "f16" else "f2bf"
                    e = f"__P::{fn}(__P::fround<float>({sv}, {irnd}), 0)"
                else:
                    e = f"static_cast<{dct}>(__P::fround({sv}, {irnd}))"
            elif dt == "f32" and sk == "f64":
                e = f"__P::d2f({sv}, {m})"
            elif dt in _FLOAT:
                e = f"static_cast<{dct}>({sv})"
            else:
                fn = "f2h" if dt == "f16" else "f2bf"
                e = f"__P::{fn}({sv}, {m})"
        if dt == "f32" and ftz:
            e = f"__P::ftz({e})"
        if sat:
            if dt in _HALF:
                fn = "f2h" if dt == "f16" else "f2bf"
                back = "__P::h2f" if dt == "f16" else "__P::bf2f"
                e = f"__P::{fn}(__P::fsat<float>({back}({e})), 0)"
            else:
                e = f"__P::fsat<{dct}>({e})"
        if "relu" in mods and dt in _HALF:
            e = f"__P::relu16({e}, {'true' if dt == 'bf16' else 'false'})"
        return d.write(dct, e)

    # warp
    def pre_volta(self) -> str:
        """shfl / vote without .sync: PTX has them before sm_70 only (the warp's active lanes)."""
        msg = (f"inline PTX instruction '{self.mnem}' is not supported by the emulator (shfl and vote without "
               ".sync exist up to sm_6x: compile with -arch=sm_60 or use the .sync form)")
        return f"static_assert(::__emu::ptx::kArch < 700, {_cstr(msg)});"

    def i_shfl(self, mods, a):
        modes = {"up": 0, "down": 1, "bfly": 2, "idx": 3}
        mode = next((m for m in mods if m in modes), None)
        self.check_mods(mods, {"sync", "aligned", "up", "down", "bfly", "idx"})
        if mode is None:
            raise Unsupported(self.mnem)
        self.one_type(mods, {"b32"})
        sync = "sync" in mods
        self.need(a, 5 if sync else 4)
        dst = a[0].split("|")
        v, b, c = (self.operand(x) for x in a[1:4])
        mask = self.operand(a[4]).read("uint32_t") if sync else "__activemask()"
        # the source lane as PTX computes it, the exchange through the emulator's __shfl_sync
        code = [("" if sync else self.pre_volta()),
                f"{{ const uint32_t __m = {mask}; bool __ok; "
                f"const int __j = __P::shfl_src({modes[mode]}, {b.read('uint32_t')}, {c.read('uint32_t')}, &__ok);",
                f"const uint32_t __s = __shfl_sync(__m, {v.read('uint32_t')}, __j, 32);",
                self.operand(dst[0]).write("uint32_t", "__s")]
        if len(dst) > 1:
            code.append(self.operand(dst[1]).write("bool", "__ok"))
        code.append("}")
        return " ".join(code)

    def i_vote(self, mods, a):
        sync = "sync" in mods
        self.check_mods(mods, {"sync", "aligned", "all", "any", "uni", "ballot"})
        pre = ""
        if sync:
            self.need(a, 3)
            mask = self.operand(a[2]).read("uint32_t")
        else:
            self.need(a, 2)
            mask = "__activemask()"
            pre = self.pre_volta()
        p = a[1].strip()
        neg = p.startswith("!")
        pv = self.operand(p.lstrip("!").strip()).read("bool")
        if neg:
            pv = f"!({pv})"
        d = self.operand(a[0])
        if "ballot" in mods:
            return f"{pre}{{ const uint32_t __m = {mask}; {d.write('uint32_t', f'__ballot_sync(__m, {pv})')} }}"
        if "all" in mods:
            e = f"__all_sync(__m, {pv}) != 0"
        elif "any" in mods:
            e = f"__any_sync(__m, {pv}) != 0"
        elif "uni" in mods:
            e = f"(__all_sync(__m, __pv) != 0 || __any_sync(__m, __pv) == 0)"
            return f"{pre}{{ const uint32_t __m = {mask}; const bool __pv = {pv}; {d.write('bool', e)} }}"
        else:
            raise Unsupported(self.mnem)
        return f"{pre}{{ const uint32_t __m = {mask}; {d.write('bool', e)} }}"

    def i_match(self, mods, a):
        self.check_mods(mods, {"sync", "aligned", "any", "all"})
        t = self.one_type(mods, {"b32", "b64"})
        ct = _TYPES[t]
        self.need(a, 3)
        dst = a[0].split("|")
        v, mask = self.operand(a[1]).read(ct), self.operand(a[2]).read("uint32_t")
        if "any" in mods:
            if len(dst) > 1:
                raise Unsupported(self.mnem)
            return self.operand(dst[0]).write("uint32_t", f"__match_any_sync({mask}, {v})")
        code = [f"{{ int __pr = 0; const uint32_t __r = __match_all_sync({mask}, {v}, &__pr);",
                self.operand(dst[0]).write("uint32_t", "__r")]
        if len(dst) > 1:
            code.append(self.operand(dst[1]).write("bool", "__pr != 0"))
        code.append("}")
        return " ".join(code)

    def i_redux(self, mods, a):
        ops = {"add": "__reduce_add_sync", "min": "__reduce_min_sync", "max": "__reduce_max_sync",
               "and": "__reduce_and_sync", "or": "__reduce_or_sync", "xor": "__reduce_xor_sync"}
        op = next((m for m in mods if m in ops), None)
        self.check_mods(mods, set(ops) | {"sync", "aligned"})
        t = self.one_type(mods, {"u32", "s32", "b32"})
        if op is None:
            raise Unsupported(self.mnem)
        self.need(a, 3)
        ct = "int32_t" if t == "s32" else "uint32_t"
        cast = "int" if t == "s32" else "unsigned"
        return self.operand(a[0]).write(
            ct, f"{ops[op]}({self.operand(a[2]).read('uint32_t')}, static_cast<{cast}>({self.operand(a[1]).read(ct)}))")

    # control flow within the statement
    def i_bra(self, mods, a):
        self.need(a, 1)
        return f"goto {self.label(a[0].strip())};"

    def i_ret(self, mods, a):
        raise Unsupported(self.mnem, "returning from inline PTX")

    # cp.async (copied at once; commit/wait are no-ops)
    def i_cp(self, mods, a):
        if not mods or mods[0] != "async":
            raise Unsupported(self.mnem)
        rest = mods[1:]
        if rest in (["commit_group"], ["wait_all"]):
            return "std::atomic_thread_fence(std::memory_order_seq_cst);"
        if rest == ["wait_group"]:
            return "std::atomic_thread_fence(std::memory_order_seq_cst);"
        if not rest or rest[0] not in ("ca", "cg"):
            raise Unsupported(self.mnem)
        sp = [m for m in rest[1:] if not m.startswith(("L2::", "L1::"))]
        if sp not in (["shared", "global"], ["shared::cta", "global"]):
            raise Unsupported(self.mnem)
        if any(m.startswith("L2::cache_hint") for m in rest):
            a = a[:-1]
        if len(a) not in (3, 4):
            raise Unsupported(self.mnem, "operands")
        dst = self.addr(a[0], "shared")
        src = self.addr(a[1], "global")
        size = self.operand(a[2]).read("uint32_t")
        srcsize = size
        if len(a) == 4:
            x = self.operand(a[3])
            if isinstance(x, _Reg) and x.ctype == "bool":   # ignore-src predicate
                srcsize = f"({x.read('bool')} ? 0u : {size})"
            else:
                srcsize = x.read("uint32_t")
        return f"__P::cp_async({dst}, {src}, {size}, {srcsize});"

    def i_createpolicy(self, mods, a):
        """An L2 cache policy for the .L2::cache_hint forms, which ignore it here: its value is opaque."""
        if not a:
            raise Unsupported(self.mnem, "operands")
        return self.operand(a[0]).write("uint64_t", "0")

    def i_griddepcontrol(self, mods, a):
        return "(void)0;"

    def i_pmevent(self, mods, a):
        raise Unsupported(self.mnem)
