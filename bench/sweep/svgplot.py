"""A log-log line plot as a standalone SVG file, with no plotting library
(the bench machines have none): what bench/sweep/sweep.py draws for
latency against batch size and against sequence length."""
import math

W, H = 640, 420
LEFT, RIGHT, TOP, BOTTOM = 70, 160, 40, 50
COLORS = ["#d62728", "#1f77b4", "#7f7f7f", "#2ca02c"]


def _ticks(lo, hi):
    """Powers of 10 (and 2x, 5x between them) spanning [lo, hi]."""
    out = []
    e = math.floor(math.log10(lo))
    while 10 ** e <= hi * 1.0001:
        for m in (1, 2, 5):
            v = m * 10 ** e
            if lo / 1.0001 <= v <= hi * 1.0001:
                out.append(v)
        e += 1
    return out


def _fmt(v):
    return ("%g" % v) if v >= 0.01 else ("%.0e" % v)


def write(path, title, xlabel, ylabel, series):
    """series: [(label, [(x, y), ...], dashed)]; x and y > 0. Writes an
    SVG with log axes, one polyline and marker set per series and a
    legend on the right."""
    pts = [p for _, s, _ in series for p in s if p[0] > 0 and p[1] > 0]
    if not pts:
        return
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    if x1 <= x0:
        x1 = x0 * 2
    y0, y1 = y0 / 1.3, y1 * 1.3
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def px(x):
        return LEFT + pw * (math.log(x) - math.log(x0)) / (
            math.log(x1) - math.log(x0))

    def py(y):
        return TOP + ph * (1 - (math.log(y) - math.log(y0)) / (
            math.log(y1) - math.log(y0)))

    o = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
         'font-family="sans-serif" font-size="12">' % (W, H),
         '<rect width="100%" height="100%" fill="white"/>',
         '<text x="%d" y="22" font-size="14">%s</text>' % (LEFT, title),
         '<rect x="%d" y="%d" width="%d" height="%d" fill="none" '
         'stroke="black"/>' % (LEFT, TOP, pw, ph)]
    xs = sorted(set(p[0] for p in pts))
    for x in xs:
        o.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>'
                 % (px(x), TOP, px(x), TOP + ph))
        o.append('<text x="%.1f" y="%d" text-anchor="middle">%g</text>'
                 % (px(x), TOP + ph + 16, x))
    for y in _ticks(y0, y1):
        o.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>'
                 % (LEFT, py(y), LEFT + pw, py(y)))
        o.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>'
                 % (LEFT - 6, py(y) + 4, _fmt(y)))
    o.append('<text x="%d" y="%d" text-anchor="middle">%s</text>'
             % (LEFT + pw // 2, H - 12, xlabel))
    o.append('<text transform="translate(16,%d) rotate(-90)" '
             'text-anchor="middle">%s</text>' % (TOP + ph // 2, ylabel))
    for i, (label, s, dashed) in enumerate(series):
        c = COLORS[i % len(COLORS)]
        s = [p for p in s if p[0] > 0 and p[1] > 0]
        if not s:
            continue
        line = " ".join("%.1f,%.1f" % (px(x), py(y)) for x, y in s)
        o.append('<polyline points="%s" fill="none" stroke="%s" '
                 'stroke-width="2"%s/>' % (
                     line, c, ' stroke-dasharray="6,4"' if dashed else ""))
        if not dashed:
            for x, y in s:
                o.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>'
                         % (px(x), py(y), c))
        ly = TOP + 10 + 20 * i
        o.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" '
                 'stroke-width="2"%s/>' % (
                     LEFT + pw + 10, ly, LEFT + pw + 34, ly, c,
                     ' stroke-dasharray="6,4"' if dashed else ""))
        o.append('<text x="%d" y="%d">%s</text>' % (LEFT + pw + 40, ly + 4,
                                                    label))
    o.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(o) + "\n")
