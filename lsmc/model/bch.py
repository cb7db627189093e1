"""Reference model of the NAND controller's BCH code (hw/ip/nand/rtl/NandBch.scala), written independently of
the RTL's structure: polynomials are Python integers, syndromes are evaluated directly on the received
word, Berlekamp-Massey is the textbook form with inverses and the Chien search tries every position.

Code definition shared with the RTL (the on-flash format): binary BCH over GF(2^m) with the primitive
polynomial `prim`, shortened to `data_bytes` data bytes + r = deg g check bits per codeword, g the
least common multiple of the minimal polynomials of a^1 .. a^2t. The sector is read MSB first, byte 0
first (int.from_bytes(..., "big")), so data bit q = 8 * byte + 7 - bit is the coefficient of
x^(r + 8 * data_bytes - 1 - q). The check bits are data(x) * x^r mod g(x), stored in ceil(r / 8) bytes
(MSB first, pad bits 1) XOR K, K = check bytes of an all-FFh sector XOR all ones: an erased sector
(all FFh) is a valid codeword.
"""
from __future__ import annotations

# Linux lib/bch.c's default primitive polynomials, by m.
PRIM = {5: 0x25, 6: 0x43, 7: 0x83, 8: 0x11D, 9: 0x211, 10: 0x409, 11: 0x805, 12: 0x1053, 13: 0x201B,
        14: 0x402B, 15: 0x8003}


class Bch:
    def __init__(self, t: int = 8, data_bytes: int = 512, m: int = 13, prim: int | None = None):
        self.t, self.data_bytes, self.m = t, data_bytes, m
        self.prim = prim or PRIM[m]
        self.n = (1 << m) - 1
        self.exp = [0] * (2 * self.n)
        self.log = [0] * (self.n + 1)
        x = 1
        for i in range(self.n):
            self.exp[i] = self.exp[i + self.n] = x
            self.log[x] = i
            x <<= 1
            if x >> m:
                x ^= self.prim
        if x != 1:
            raise ValueError(f"prim {self.prim:#x} is not primitive for GF(2^{m})")
        # g = lcm of minimal polynomials: multiply (x - a^j) over the union of the cyclotomic cosets
        roots = set()
        for i in range(1, 2 * t + 1):
            j = i
            while j not in roots:
                roots.add(j)
                j = 2 * j % self.n
        poly = [1]  # GF coefficients, index = degree
        for e in sorted(roots):
            a = self.exp[e]
            nxt = [0] * (len(poly) + 1)
            for d, c in enumerate(poly):
                nxt[d + 1] ^= c
                nxt[d] ^= self.mul(c, a)
            poly = nxt
        if any(c > 1 for c in poly):
            raise AssertionError("generator polynomial is not binary")
        self.gen = sum(1 << d for d, c in enumerate(poly) if c)
        self.r = self.gen.bit_length() - 1
        self.ecc_bytes = (self.r + 7) // 8
        self.pad = 8 * self.ecc_bytes - self.r
        self.data_bits = 8 * data_bytes
        if self.data_bits + self.r > self.n:
            raise ValueError(f"{data_bytes}-byte sectors with t={t} do not fit GF(2^{m})")
        self.kmask = (self._check(b"\xff" * data_bytes) << self.pad) ^ ((1 << 8 * self.ecc_bytes) - 1)

    # ------------------------------------------------------------ field
    def mul(self, a: int, b: int) -> int:
        return 0 if a == 0 or b == 0 else self.exp[self.log[a] + self.log[b]]

    def inv(self, a: int) -> int:
        return self.exp[(self.n - self.log[a]) % self.n]

    # ------------------------------------------------------------ encoding
    def _mod(self, v: int) -> int:
        for d in range(v.bit_length() - 1, self.r - 1, -1):
            if v >> d & 1:
                v ^= self.gen << (d - self.r)
        return v

    def _check(self, data: bytes) -> int:
        return self._mod(int.from_bytes(data, "big") << self.r)

    def ecc(self, data: bytes) -> bytes:
        """Check bytes as stored in the spare area."""
        if len(data) != self.data_bytes:
            raise ValueError(f"sector must be {self.data_bytes} bytes, got {len(data)}")
        return ((self._check(data) << self.pad) ^ self.kmask).to_bytes(self.ecc_bytes, "big")

    def codeword(self, data: bytes, ecc: bytes) -> int:
        """Received polynomial (bit d = coefficient of x^d) from stored data and check bytes."""
        par = (int.from_bytes(ecc, "big") ^ self.kmask) >> self.pad
        return int.from_bytes(data, "big") << self.r | par

    # ------------------------------------------------------------ decoding
    def syndromes(self, cw: int) -> list:
        s = [0] * (2 * self.t + 1)
        degs = [d for d in range(cw.bit_length()) if cw >> d & 1]
        for j in range(1, 2 * self.t + 1):
            acc = 0
            for d in degs:
                acc ^= self.exp[j * d % self.n]
            s[j] = acc
        return s

    def locator(self, s: list) -> list:
        """Berlekamp-Massey (with inverses): error locator coefficients, index = degree."""
        lam, b, L, k, last = [1], [1], 0, 1, 1
        for r in range(2 * self.t):
            d = s[r + 1]
            for i in range(1, L + 1):
                if i < len(lam):
                    d ^= self.mul(lam[i], s[r + 1 - i])
            if d == 0:
                k += 1
                continue
            coef = self.mul(d, self.inv(last))
            nxt = lam + [0] * max(0, len(b) + k - len(lam))
            for i, c in enumerate(b):
                nxt[i + k] ^= self.mul(coef, c)
            if 2 * L <= r:
                b, L, last, k = lam, r + 1 - L, d, 1
            else:
                k += 1
            lam = nxt
        while len(lam) > 1 and lam[-1] == 0:
            lam.pop()
        return lam if len(lam) - 1 == L else lam + [None]  # None marks an inconsistent locator

    def decode(self, data: bytes, ecc: bytes):
        """(corrected data, bit errors corrected) or (data unchanged, None) when uncorrectable."""
        cw = self.codeword(data, ecc)
        s = self.syndromes(cw)
        if not any(s):
            return data, 0
        lam = self.locator(s)
        if None in lam or len(lam) - 1 > self.t:
            return data, None
        positions = []
        for d in range(self.data_bits + self.r):  # roots a^-d, d inside the shortened code
            x = self.exp[(self.n - d) % self.n]
            acc, xp = 0, 1
            for c in lam:
                acc ^= self.mul(c, xp)
                xp = self.mul(xp, x)
            if acc == 0:
                positions.append(d)
        if len(positions) != len(lam) - 1:
            return data, None
        for d in positions:
            cw ^= 1 << d
        return (cw >> self.r).to_bytes(self.data_bytes, "big"), len(positions)
