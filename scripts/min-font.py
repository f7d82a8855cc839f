#!/usr/bin/env python3
"""Makes crates/site/src/min-font.ttf: the smallest TrueType font a browser
takes (a .notdef box and a space, the tables OTS requires), which
site::content wraps in a WOFF of any recorded size (its private data block
pads it): an imported page's synthetic web fonts are fonts a browser can
use, as the real page's were. Needs fontTools
(`pip install fonttools`); run once, the output is kept in the repository.

Usage: scripts/min-font.py crates/site/src/min-font.ttf
"""
import sys
import sys as _sys
if _sys.argv[1:2] in (['-h'], ['--help']):
    print(__doc__.strip())
    _sys.exit(0)

from fontTools.fontBuilder import FontBuilder
from fontTools.pens.ttGlyphPen import TTGlyphPen

fb = FontBuilder(1000, isTTF=True)
fb.setupGlyphOrder([".notdef", "space"])
fb.setupCharacterMap({32: "space"})
box = TTGlyphPen(None)
box.moveTo((100, 0))
box.lineTo((100, 700))
box.lineTo((500, 700))
box.lineTo((500, 0))
box.closePath()
fb.setupGlyf({".notdef": box.glyph(), "space": TTGlyphPen(None).glyph()})
fb.setupHorizontalMetrics({".notdef": (600, 100), "space": (250, 0)})
fb.setupHorizontalHeader(ascent=800, descent=-200)
fb.setupNameTable({"familyName": "spdylab", "styleName": "Regular"})
fb.setupOS2(sTypoAscender=800, usWinAscent=800, usWinDescent=200)
fb.setupPost()
# Fixed dates (head.created, head.modified), so that a rerun gives the same bytes.
fb.updateHead(created=0, modified=0)
fb.save(sys.argv[1])
