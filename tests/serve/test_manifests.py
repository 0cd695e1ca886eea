"""ci/kubernetes/nova-serve.yaml agrees with the code: the least RBAC the Kubernetes
executor needs, the server's and the jobs' secrets apart, settings Nova knows."""

from __future__ import annotations

from pathlib import Path

import yaml

from bot.config import all_settings
from bot.serve.environment import NEVER

ROOT = Path(__file__).resolve().parents[2]


def _docs() -> dict[str, dict]:
    text = (ROOT / "ci/kubernetes/nova-serve.yaml").read_text()
    return {d["kind"]: d for d in yaml.safe_load_all(text) if d and d["kind"] != "Secret"} | {
        f"Secret/{d['metadata']['name']}": d
        for d in yaml.safe_load_all(text)
        if d and d["kind"] == "Secret"
    }


def test_the_role_is_the_least_the_executor_needs() -> None:
    docs = _docs()
    assert "ClusterRole" not in docs and "ClusterRoleBinding" not in docs
    jobs, secrets, pods = docs["Role"]["rules"]
    assert jobs == {
        "apiGroups": ["batch"],
        "resources": ["jobs"],
        "verbs": ["create", "get", "watch", "delete"],
    }
    # a Job's own Secret: created, replaced, given its Job; never read or listed
    assert secrets == {
        "apiGroups": [""],
        "resources": ["secrets"],
        "verbs": ["create", "update", "patch"],
    }
    assert pods == {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}
    binding = docs["RoleBinding"]
    assert binding["subjects"][0]["name"] == docs["ServiceAccount"]["metadata"]["name"]


HOST_KEYS = {
    "github": "GITHUB_TOKEN",
    "gitlab": "GITLAB_TOKEN",
    "phabricator": "PHABRICATOR_API_TOKEN",
}


def test_the_server_and_the_jobs_get_different_secrets() -> None:
    docs = _docs()
    pod = docs["Deployment"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["args"][:1] == ["serve"]
    assert pod["securityContext"]["runAsUser"] == 10001
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    env = {e["name"]: e["value"] for e in container["env"]}
    known = {s.env for s in all_settings()}
    assert set(env) <= known, set(env) - known
    assert [ref["secretRef"]["name"] for ref in container["envFrom"]] == ["nova-serve"]
    assert env["NOVA_SERVE_JOB_SECRET"] == "nova-job"
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert env["NOVA_SERVE_DATA_DIR"] in mounts
    jobs = docs["Secret/nova-job"]["stringData"]
    assert not set(jobs) & NEVER and "NOVA_LLM_API_KEY" in jobs
    assert "NOVA_LLM_API_KEY" not in docs["Secret/nova-serve"]["stringData"]
    # every Job gets nova-job; only a host's Jobs get its token
    assert not any("TOKEN" in k for k in jobs)
    for host, token in HOST_KEYS.items():
        own = docs[f"Secret/nova-job-{host}"]["stringData"]
        assert token in own and not set(own) & (set(HOST_KEYS.values()) - {token})


def test_every_variable_docs_serve_names_is_a_setting() -> None:
    import re

    text = (ROOT / "docs/serve.md").read_text()
    named = set(re.findall(r"\bNOVA_[A-Z_]+[A-Z]\b", text))
    known = {s.env for s in all_settings()}
    # NOVA_HANDLE is declared by the conversation's section (nova respond); until then
    # nova serve reads it as "nova"; NOVA_SANDBOX_HIDE and NOVA_GIT_BASE are what the server
    # hands each job, not settings
    internal = {"NOVA_HANDLE", "NOVA_SANDBOX_HIDE", "NOVA_GIT_BASE"}
    assert named and named - known <= internal, named - known
    serve_vars = {s.env for s in all_settings() if s.name.startswith("serve_")}
    missing = {v for v in serve_vars if v not in text and "NAMESPACE" not in v}
    assert not missing - {"NOVA_SERVE_HOST", "NOVA_SERVE_PORT"}, missing
