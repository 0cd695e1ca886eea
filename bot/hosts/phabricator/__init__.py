"""The phabricator host."""
