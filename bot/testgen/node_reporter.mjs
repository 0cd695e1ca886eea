// Nova's reporter for node:test (Node >= 20): one JSON object per line, read by
// bot/testgen/runners.py. It reports every test's start and result with its place in the
// file, and with --experimental-test-coverage the count of every line of every file.
const pick = (d) => ({
  name: d.name, nesting: d.nesting, file: d.file ?? null,
  line: d.line ?? null, column: d.column ?? null,
});

function errorText(error) {
  if (!error) return "";
  const inner = error.cause ?? error;
  return String(inner && inner.message !== undefined ? inner.message : inner).slice(0, 500);
}

export default async function* novaReporter(source) {
  for await (const event of source) {
    const d = event.data ?? {};
    if (event.type === "test:start") {
      yield JSON.stringify({ event: "start", ...pick(d) }) + "\n";
    } else if (event.type === "test:pass" || event.type === "test:fail") {
      yield JSON.stringify({
        event: event.type === "test:pass" ? "pass" : "fail", ...pick(d),
        skip: Boolean(d.skip || d.todo),
        suite: d.details?.type === "suite",
        error: event.type === "test:fail" ? errorText(d.details?.error) : undefined,
      }) + "\n";
    } else if (event.type === "test:coverage") {
      // Node releases before per-line counts give `lines: undefined`: say so (null)
      const files = d.summary.files.map((f) => ({
        path: f.path,
        covered: f.lines ? f.lines.filter((l) => l.count > 0).map((l) => l.line) : null,
        uncovered: f.lines ? f.lines.filter((l) => l.count === 0).map((l) => l.line) : null,
      }));
      yield JSON.stringify({ event: "coverage", files }) + "\n";
    }
  }
}
