"""Plain numpy references of the four pipelines of shared/APPS.md, for the self-test of run.py.

The obvious formulas, whole-array at a time: integer pipelines in int64 with C semantics
(`/` truncates toward zero, `>>` arithmetic, a store into a narrower type keeps the low bits),
`unsharp` in float64. Arrays are `[rows][cols]` = `[M][N]` (`[C][M][N]` with channels).
"""

import numpy as np

F = np.array([1, 4, 6, 4, 1], dtype=np.int64)


def cdiv(a, b):
    """C division of int64 arrays by a positive int: truncates toward zero."""
    a = np.asarray(a, dtype=np.int64)
    return np.where(a < 0, -((-a) // b), a // b)


def wrap_u8(v):
    return (np.asarray(v, dtype=np.int64) & 0xFF).astype(np.uint8)


def wrap_i16(v):
    return (((np.asarray(v, dtype=np.int64) + 0x8000) & 0xFFFF) - 0x8000).astype(np.int16)


def _extrapolate_cols(a):
    """The paper's linear extrapolation, 2 columns on each side: [R][N] -> [R][N+4] (int64)."""
    n = a.shape[1]
    m2 = a[:, 3] * 4 - a[:, 1] * 4 + a[:, 0] * 2 - a[:, 2]
    m1 = a[:, 1] * 2 - a[:, 3]
    p1 = a[:, n - 2] * 2 - a[:, n - 4]
    p2 = a[:, n - 4] * 4 - a[:, n - 2] * 4 + a[:, n - 1] * 2 - a[:, n - 3]
    return np.concatenate([m2[:, None], m1[:, None], a, p1[:, None], p2[:, None]], axis=1)


def laplacian(src):
    """(lap: i16[M][N], down: u8[(M+1)/2][(N+1)/2])."""
    s = src.astype(np.int64)
    m, n = s.shape
    assert m >= 4 and n >= 4
    e = _extrapolate_cols(s)  # e[:, c + 2] = src[:, c]
    h = wrap_u8(cdiv(sum(F[k] * e[:, k:k + n] for k in range(5)) + 8, 16))
    eh = _extrapolate_cols(h.astype(np.int64).T).T  # eh[r + 2, :] = h[r, :]
    md, nd = (m + 1) // 2, (n + 1) // 2
    i = np.arange(md)
    j = np.arange(nd)
    acc = sum(F[k] * eh[2 * i + k][:, 2 * j] for k in range(5))  # rows 2i-2+k
    down = wrap_u8(cdiv(acc + 8, 16))
    d = down.astype(np.int64)
    x = np.arange(m)
    y = np.arange(n)
    y0, y1 = x // 2, np.minimum((x + 1) // 2, md - 1)
    x0, x1 = y // 2, np.minimum((y + 1) // 2, nd - 1)
    up = cdiv(d[y0][:, x0] + d[y0][:, x1] + d[y1][:, x0] + d[y1][:, x1] + 2, 4)
    return wrap_i16(s - up), down


def _taps4(length, big_len):
    """Rows (or columns) and weights of sharpen's 4x upsample for output positions 0..big_len."""
    t = np.arange(big_len, dtype=np.int64) - 2
    i0 = t >> 2  # floor(t / 4)
    a = t - 4 * i0
    return (np.clip(i0, 0, length - 1), 7 - 2 * a,
            np.clip(i0 + 1, 0, length - 1), 2 * a + 1)


def sharpen(src):
    """out: u8[M][N]."""
    s = src.astype(np.int64)
    m, n = s.shape
    assert m % 4 == 0 and n % 4 == 0 and m >= 8 and n >= 8
    md, nd = m // 4, n // 4
    down = (s.reshape(md, 4, nd, 4).sum(axis=(1, 3)) + 8) >> 4
    r0, wr0, r1, wr1 = _taps4(md, m)
    c0, wc0, c1, wc1 = _taps4(nd, n)
    acc = (wr0[:, None] * wc0[None, :] * down[r0][:, c0]
           + wr0[:, None] * wc1[None, :] * down[r0][:, c1]
           + wr1[:, None] * wc0[None, :] * down[r1][:, c0]
           + wr1[:, None] * wc1[None, :] * down[r1][:, c1])
    up = wrap_u8((acc + 32) >> 6).astype(np.int64)
    err = wrap_i16(s - up).astype(np.int64)
    p = np.pad(s, 1, mode="edge")  # p[x + 1][y + 1] = src[x][y], clamp-to-edge

    def sp(dx, dy):
        return p[1 + dx:1 + dx + m, 1 + dy:1 + dy + n]

    gx = (sp(-1, 1) + 2 * sp(0, 1) + sp(1, 1)) - (sp(-1, -1) + 2 * sp(0, -1) + sp(1, -1))
    gy = (sp(1, -1) + 2 * sp(1, 0) + sp(1, 1)) - (sp(-1, -1) + 2 * sp(-1, 0) + sp(-1, 1))
    edge = np.minimum(np.abs(gx) + np.abs(gy), 255)
    mean = int(edge.sum()) // (m * n)
    gain = np.minimum(edge * 16 // (mean + 16), 32)
    pre = up + cdiv(err * (16 + gain), 16)
    win = [sp(dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)]
    lo = np.minimum.reduce(win)
    hi = np.maximum.reduce(win)
    out = np.clip(np.minimum(np.maximum(pre, lo - 8), hi + 8), 0, 255)
    return out.astype(np.uint8)


def blur(src):
    """out: u16[M-2][N-2]."""
    s = src.astype(np.int64)
    m, n = s.shape
    assert m >= 3 and n >= 3
    bx = (s[:, 0:n - 2] + s[:, 1:n - 1] + s[:, 2:n]) // 3  # non-negative: floor = trunc
    out = (bx[0:m - 2] + bx[1:m - 1] + bx[2:m]) // 3
    return (out & 0xFFFF).astype(np.uint16)


def unsharp_taps():
    sigma = 1.5
    i = np.arange(4, dtype=np.float64)
    return np.exp(-i * i / (2 * sigma * sigma)) / (np.sqrt(2 * np.pi) * sigma)


def unsharp(img):
    """out: f32[3][M][N], computed in float64."""
    im = img.astype(np.float64)
    _, m, n = im.shape
    k = unsharp_taps()
    gray = 0.299 * im[0] + 0.587 * im[1] + 0.114 * im[2]
    g = np.pad(gray, 3, mode="edge")  # g[x + 3][y + 3] = gray[x][y]
    gr = g[:, 3:3 + n]
    by = k[0] * gr[3:3 + m] + sum(k[i] * (gr[3 - i:3 - i + m] + gr[3 + i:3 + i + m])
                                  for i in (1, 2, 3))
    b = np.pad(by, ((0, 0), (3, 3)), mode="edge")
    bx = k[0] * b[:, 3:3 + n] + sum(k[i] * (b[:, 3 - i:3 - i + n] + b[:, 3 + i:3 + i + n])
                                    for i in (1, 2, 3))
    ratio = (2 * gray - bx) / gray
    return (ratio[None] * im).astype(np.float32)
