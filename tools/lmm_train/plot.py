"""The loss curves as an SVG (no plotting library needed): one panel per
network, log-scaled loss against steps, plus the decompressor's mean joint
position error (cm) where it was measured."""
import math


def _panel(x0, y0, w, h, title, points, colour, unit=""):
    out = ['<rect x="%d" y="%d" width="%d" height="%d" fill="white" stroke="#999"/>' % (x0, y0, w, h),
           '<text x="%d" y="%d" font-size="13" font-family="sans-serif">%s</text>' % (x0 + 4, y0 - 6, title)]
    pts = [(s, v) for s, v in points if v > 0 and math.isfinite(v)]
    if len(pts) < 1:
        return out + ['<text x="%d" y="%d" font-size="12" fill="#999">no data</text>' % (x0 + 10, y0 + h // 2)]
    smax = max(s for s, _ in pts) or 1
    lo, hi = math.log10(min(v for _, v in pts)), math.log10(max(v for _, v in pts))
    if hi - lo < 1e-6:
        lo, hi = lo - 0.5, hi + 0.5
    X = lambda s: x0 + w * s / smax
    Y = lambda v: y0 + h - h * (math.log10(v) - lo) / (hi - lo)
    out.append('<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>'
               % (colour, " ".join("%.1f,%.1f" % (X(s), Y(v)) for s, v in pts)))
    for e in range(math.floor(lo), math.ceil(hi) + 1):
        for m in (1, 2, 5):
            v = m * 10.0 ** e
            if lo <= math.log10(v) <= hi:
                out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (x0, x0 + w, Y(v), Y(v)))
                out.append('<text x="%d" y="%.1f" font-size="10" text-anchor="end" font-family="sans-serif">%g%s</text>'
                           % (x0 - 3, Y(v) + 3, v, unit))
    for v in (10 ** lo, 10 ** hi):  # the range's ends, labelled always (a narrow range has no 1-2-5 line)
        out.append('<text x="%d" y="%.1f" font-size="10" text-anchor="start" fill="#666" font-family="sans-serif">%.3g%s</text>'
                   % (x0 + w + 3, Y(v) + 3, v, unit))
    out.append('<text x="%d" y="%d" font-size="10" text-anchor="end" font-family="sans-serif">%d steps</text>'
               % (x0 + w, y0 + h + 12, smax))
    if len(pts) < 40:
        out += ['<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (X(s), Y(v), colour) for s, v in pts]
    last = pts[-1][1]
    out.append('<text x="%d" y="%d" font-size="11" text-anchor="end" fill="%s" font-family="sans-serif">last %.4g%s</text>'
               % (x0 + w - 4, y0 + 14, colour, last, unit))
    return out


def write_svg(path, history, title):
    """history: {"decompressor": [(step, loss)], "stepper": ..., "projector": ..., "mjpe_cm": [(step, cm)]}."""
    panels = [("decompressor loss", history.get("decompressor", []), "#1f77b4", ""),
              ("decompressor mean joint position error (training frames)", history.get("mjpe_cm", []), "#d62728", " cm"),
              ("stepper loss", history.get("stepper", []), "#2ca02c", ""),
              ("projector loss", history.get("projector", []), "#9467bd", "")]
    w, h, pad = 380, 170, 60
    width, height = 2 * (w + pad) + 70, 2 * (h + pad) + 40
    body = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">' % (width, height, width, height),
            '<rect width="100%" height="100%" fill="#fafafa"/>',
            '<text x="10" y="20" font-size="15" font-family="sans-serif">%s</text>' % title]
    for i, (name, pts, colour, unit) in enumerate(panels):
        x0 = pad + (i % 2) * (w + pad)
        y0 = 50 + (i // 2) * (h + pad)
        body += _panel(x0, y0, w, h, name, pts, colour, unit)
    body.append("</svg>")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(body) + "\n")
    import os
    os.replace(tmp, path)
