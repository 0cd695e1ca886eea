"""Rendering a review: text, Markdown, JSON and SARIF (``formats``, ``sarif``), the hosts'
summary (``summary``), fingerprints and markers (``fingerprint``), and untrusted text made
safe to publish (``untrusted``). Publishers only move what is rendered here."""
