<?php
// Runs the real check of Nova's extension (NovaDifferentialPublishConduitAPIMethod::
// buildInlines) without a Phorge: the few Phorge classes it touches are stubbed here with
// the same methods. Reads a JSON list of cases on stdin, each {"hunks": {path: [[oldOffset,
// oldLen, newOffset, newLen], ...]}, "inlines": [...]}; prints one result per case:
// {"ok": [[changeset id, line], ...]} or {"error": code, "message": text}. Used by
// tests/e2e/test_extension_check.py.

function pht($format, ...$args) { return vsprintf($format, $args); }
function idx(array $map, $key, $default = null) {
  return array_key_exists($key, $map) ? $map[$key] : $default;
}
function id($object) { return $object; }

class ConduitException extends Exception {
  private $description;
  public function setErrorDescription($text) { $this->description = $text; return $this; }
  public function getErrorDescription() { return $this->description; }
}
abstract class DifferentialConduitAPIMethod {}
class ConduitAPIRequest {}
class PhabricatorUser {}
class DifferentialRevision { public function getPHID() { return 'PHID-DREV-1'; } }
class DifferentialDiff {
  public function getID() { return 7; }
}

class StubHunk {
  private $row;
  public function __construct(array $row) { $this->row = $row; }
  public function getOldOffset() { return $this->row[0]; }
  public function getOldLen() { return $this->row[1]; }
  public function getNewOffset() { return $this->row[2]; }
  public function getNewLen() { return $this->row[3]; }
}

class StubChangeset {
  private $path;
  private $hunks;
  private $id;
  public function __construct($id, $path, array $hunks) {
    $this->id = $id;
    $this->path = $path;
    $this->hunks = $hunks;
  }
  public function getID() { return $this->id; }
  public function getFilename() { return $this->path; }
  public function getHunks() { return $this->hunks; }
}

class DifferentialChangesetQuery {
  public static $changesets = array();
  private $hunks = false;
  public function setViewer($viewer) { return $this; }
  public function withDiffs(array $diffs) { return $this; }
  public function needHunks($need) { $this->hunks = $need; return $this; }
  public function execute() {
    if (!$this->hunks) {
      throw new Exception('hunks were not loaded');  // getHunks() would fail in Phorge
    }
    return self::$changesets;
  }
}

class DifferentialTransactionComment {
  public $fields = array();
  public function __call($name, $args) {
    $this->fields[$name] = $args ? $args[0] : null;
    return $this;
  }
}

require $argv[1];

$method = new NovaDifferentialPublishConduitAPIMethod();
$build = new ReflectionMethod($method, 'buildInlines');
$build->setAccessible(true);

$results = array();
foreach (json_decode(stream_get_contents(STDIN), true) as $case) {
  DifferentialChangesetQuery::$changesets = array();
  $n = 0;
  foreach ($case['hunks'] as $path => $rows) {
    DifferentialChangesetQuery::$changesets[] = new StubChangeset(
      ++$n, $path, array_map(function ($row) { return new StubHunk($row); }, $rows));
  }
  try {
    $inlines = $build->invoke(
      $method, new PhabricatorUser(), new DifferentialRevision(), new DifferentialDiff(),
      $case['inlines']);
    $ok = array();
    foreach ($inlines as $inline) {
      $ok[] = array($inline->fields['setChangesetID'], $inline->fields['setLineNumber']);
    }
    $results[] = array('ok' => $ok);
  } catch (ConduitException $ex) {
    $results[] = array(
      'error' => $ex->getMessage(),
      'message' => $ex->getErrorDescription(),
    );
  }
}
echo json_encode($results);
