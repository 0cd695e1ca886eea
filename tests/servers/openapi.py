"""Validate JSON against a schema of docs/task-manager.openapi.yaml (OpenAPI 3.0)."""

from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

SPEC_PATH = Path(__file__).resolve().parents[2] / "docs" / "task-manager.openapi.yaml"


def _nullable_to_json_schema(node: Any) -> Any:
    if isinstance(node, dict):
        node = {k: _nullable_to_json_schema(v) for k, v in node.items()}
        if node.pop("nullable", False) and "type" in node:
            node["type"] = [node["type"], "null"]
        return node
    if isinstance(node, list):
        return [_nullable_to_json_schema(v) for v in node]
    return node


@lru_cache(maxsize=1)
def spec() -> dict[str, Any]:
    return yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))


def errors(instance: Any, schema_name: str) -> list[str]:
    """Validation errors of ``instance`` against ``#/components/schemas/<schema_name>``."""
    root = _nullable_to_json_schema(copy.deepcopy(spec()))
    root["$ref"] = f"#/components/schemas/{schema_name}"
    validator = jsonschema.Draft7Validator(root)
    return [e.message for e in validator.iter_errors(instance)]
