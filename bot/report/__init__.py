"""Rendering a review: one structure (``digest``) every surface renders — Markdown for the
GitHub and GitLab summaries and the Actions job summary (``markdown``, ``summary``), Remarkup
for Phabricator (``remarkup``), terminal text (``text``), JSON and SARIF (``formats``,
``sarif``) — kept within each host's limit (``fit``); the terminal and file surface
(``local``); fingerprints and markers (``fingerprint``), and untrusted text made safe to
publish (``untrusted``). Publishers only move what is rendered here."""
