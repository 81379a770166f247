"""The teaching layer: what the book shows on top of the engine (cutelite itself).

    explorers   what each explorer computes from the text in its boxes (standard library)
    svg         pictures as SVG text (standard library): what the live page draws
    live        the live page's bridge: build-time announcements, browser-side view() and check()
"""
