<?php

/**
 * nova.differential.publish (contract version 2): create inline comments on a
 * revision AND publish them, with a summary comment, in one call.
 *
 * Stock Conduit can only save inline drafts (differential.createinline) that
 * nobody but their author sees, and cannot publish them. This method builds the
 * inline comments itself and hands them to Differential's transaction editor as
 * "inline" transactions, next to the summary "comment" transaction. The editor
 * saves the comments inside its own database transaction, so a failed call
 * leaves nothing behind: no drafts, no half of the inlines, no summary.
 *
 * Parameters
 *   revisionID     required int   the revision (D123 -> 123)
 *   diffID         optional int   the diff the lines belong to (default: the
 *                                 revision's active diff); must be the
 *                                 revision's
 *   inlines        optional list  of {"path": string, "line": int >= 1,
 *                                 "length": int >= 0 (extra lines, default 0),
 *                                 "content": non-empty string,
 *                                 "isNewFile": bool (default true)}; the
 *                                 lines line..line+length must lie in one
 *                                 hunk of that file's changeset, on the side
 *                                 isNewFile names (a line past the end of
 *                                 the file, or outside the changeset, is
 *                                 refused like an unknown path)
 *   comment        optional string  the summary comment (remarkup)
 *   discardDrafts  optional bool  first delete the CALLER's own unpublished
 *                                 inline drafts on this revision (leftovers of
 *                                 differential.createinline); never anyone
 *                                 else's
 *   silent         optional bool  no email or notifications
 *
 * Returns {"version": 2, "revisionID", "diffID", "published": N,
 *          "discarded": M, "inlines": [{"id", "phid", "path", "line"}]}.
 * Errors: ERR-BAD-REVISION, ERR-BAD-DIFF, ERR-BAD-INLINE (the message names the
 * inline by its index and what is wrong: an unknown key or path, a bad line,
 * a line outside the changeset, empty content; nothing was written), ERR-EMPTY.
 *
 * Install: copy this file into <phorge>/src/extensions/ and restart the web
 * server (and the daemons, bin/phd restart). Files in src/extensions/ are
 * loaded without `arc liberate`. Nova finds the method through conduit.query.
 * Written against Phorge master of 2026 (PHP 8.2).
 */
final class NovaDifferentialPublishConduitAPIMethod
  extends DifferentialConduitAPIMethod {

  const CONTRACT_VERSION = 2;

  public function getAPIMethodName() {
    return 'nova.differential.publish';
  }

  public function getMethodDescription() {
    return pht(
      'Nova extension (contract version %d): create inline comments and '.
      'publish them with a comment on a revision, in one call.',
      self::CONTRACT_VERSION);
  }

  protected function defineParamTypes() {
    return array(
      'revisionID' => 'required revisionid',
      'diffID' => 'optional diffid',
      'inlines' => 'optional list<map<string, wild>>',
      'comment' => 'optional string',
      'discardDrafts' => 'optional bool',
      'silent' => 'optional bool',
    );
  }

  protected function defineReturnType() {
    return 'nonempty dict';
  }

  protected function defineErrorTypes() {
    return array(
      'ERR-BAD-REVISION' => pht(
        'No such revision exists, or you cannot see it.'),
      'ERR-BAD-DIFF' => pht('No such diff on this revision.'),
      'ERR-BAD-INLINE' => pht(
        'An inline comment is malformed or names a file not in the diff.'),
      'ERR-EMPTY' => pht('Neither inline comments nor a comment were given.'),
    );
  }

  protected function execute(ConduitAPIRequest $request) {
    $viewer = $request->getUser();

    $revision = id(new DifferentialRevisionQuery())
      ->setViewer($viewer)
      ->withIDs(array($request->getValue('revisionID')))
      ->executeOne();
    if (!$revision) {
      throw new ConduitException('ERR-BAD-REVISION');
    }
    $diff = $this->loadDiff($viewer, $revision, $request->getValue('diffID'));

    // Check every inline before anything is written.
    $inlines = $this->buildInlines(
      $viewer,
      $revision,
      $diff,
      $request->getValue('inlines', array()));

    $comment = (string)$request->getValue('comment', '');
    if (!$inlines && !strlen(trim($comment))) {
      throw new ConduitException('ERR-EMPTY');
    }

    $discarded = 0;
    if ($request->getValue('discardDrafts')) {
      $discarded = $this->discardDrafts($viewer, $revision);
    }

    $xactions = array();
    if (strlen(trim($comment))) {
      $xactions[] = id(new DifferentialTransaction())
        ->setTransactionType(PhabricatorTransactions::TYPE_COMMENT)
        ->attachComment(
          id(new DifferentialTransactionComment())
            ->setContent($comment));
    }
    foreach ($inlines as $inline) {
      $xactions[] = id(new DifferentialTransaction())
        ->setTransactionType(DifferentialTransaction::TYPE_INLINE)
        ->attachComment($inline);
    }

    // The editor opens a database transaction, saves each comment in it as it
    // saves its transaction, and rolls everything back on any exception.
    id(new DifferentialTransactionEditor())
      ->setActor($viewer)
      ->setContentSource($request->newContentSource())
      ->setContinueOnNoEffect(true)
      ->setContinueOnMissingFields(true)
      ->setIsSilent((bool)$request->getValue('silent'))
      ->applyTransactions($revision, $xactions);

    $changesets = mpull($diff->loadChangesets(), 'getFilename', 'getID');
    $published = array();
    foreach ($inlines as $inline) {
      $published[] = array(
        'id' => (int)$inline->getID(),
        'phid' => $inline->getPHID(),
        'path' => idx($changesets, $inline->getChangesetID()),
        'line' => (int)$inline->getLineNumber(),
      );
    }

    return array(
      'version' => self::CONTRACT_VERSION,
      'revisionID' => (int)$revision->getID(),
      'diffID' => (int)$diff->getID(),
      'published' => count($inlines),
      'discarded' => $discarded,
      'inlines' => $published,
    );
  }

  private function loadDiff(
    PhabricatorUser $viewer,
    DifferentialRevision $revision,
    $diff_id) {

    $query = id(new DifferentialDiffQuery())
      ->setViewer($viewer)
      ->withRevisionIDs(array($revision->getID()));
    if ($diff_id) {
      $query->withIDs(array($diff_id));
    }
    $diffs = $query->execute();
    if (!$diffs) {
      throw new ConduitException('ERR-BAD-DIFF');
    }
    return last(msort($diffs, 'getID'));
  }

  private function buildInlines(
    PhabricatorUser $viewer,
    DifferentialRevision $revision,
    DifferentialDiff $diff,
    $specs) {

    if (!is_array($specs)) {
      throw $this->badInline(pht('"inlines" must be a list.'));
    }

    // With their hunks: a line must lie inside the changeset.
    $changesets = id(new DifferentialChangesetQuery())
      ->setViewer($viewer)
      ->withDiffs(array($diff))
      ->needHunks(true)
      ->execute();
    $by_path = array();
    foreach ($changesets as $changeset) {
      $by_path[$changeset->getFilename()] = $changeset;
    }

    $inlines = array();
    foreach (array_values($specs) as $index => $spec) {
      if (!is_array($spec)) {
        throw $this->badInline(pht('inline %d is not a dictionary.', $index));
      }
      $unknown = array_diff(
        array_keys($spec),
        array('path', 'line', 'length', 'content', 'isNewFile'));
      if ($unknown) {
        throw $this->badInline(
          pht('inline %d: unknown keys: %s.', $index, implode(', ', $unknown)));
      }
      $path = idx($spec, 'path');
      if (!is_string($path) || !isset($by_path[$path])) {
        throw $this->badInline(
          pht('inline %d: no file "%s" in diff %d.', $index,
            is_string($path) ? $path : '', $diff->getID()));
      }
      $line = idx($spec, 'line');
      $length = idx($spec, 'length', 0);
      if (!is_int($line) || $line < 1 || !is_int($length) || $length < 0) {
        throw $this->badInline(
          pht('inline %d: "line" must be an integer >= 1 and "length" >= 0.',
            $index));
      }
      $content = idx($spec, 'content');
      if (!is_string($content) || !strlen(trim($content))) {
        throw $this->badInline(pht('inline %d: "content" is empty.', $index));
      }
      $is_new = idx($spec, 'isNewFile', true);
      if (!is_bool($is_new)) {
        throw $this->badInline(pht('inline %d: "isNewFile" must be a bool.',
          $index));
      }
      $ranges = self::hunkRanges($by_path[$path]->getHunks(), $is_new);
      if (!self::rangesCover($ranges, $line, $length)) {
        throw $this->badInline(
          pht('inline %d: line %d%s of "%s" is not in diff %d (%s).',
            $index, $line, $length ? '+'.$length : '', $path, $diff->getID(),
            self::describeRanges($ranges, $is_new)));
      }

      // Not saved here: the editor saves it inside its database transaction.
      $inlines[] = id(new DifferentialTransactionComment())
        ->setRevisionPHID($revision->getPHID())
        ->setChangesetID($by_path[$path]->getID())
        ->setIsNewFile((int)$is_new)
        ->setLineNumber($line)
        ->setLineLength($length)
        ->setContent($content)
        ->attachReplyToComment(null);
    }

    return $inlines;
  }

  private function discardDrafts(
    PhabricatorUser $viewer,
    DifferentialRevision $revision) {

    // Unpublished inlines the caller wrote and has not deleted.
    $drafts = id(new DifferentialDiffInlineCommentQuery())
      ->setViewer($viewer)
      ->withRevisionPHIDs(array($revision->getPHID()))
      ->withAuthorPHIDs(array($viewer->getPHID()))
      ->withIsDeleted(false)
      ->withHasTransaction(false)
      ->execute();

    $count = 0;
    foreach ($drafts as $draft) {
      if ($draft->getTransactionPHID()) {
        continue;
      }
      PhabricatorVersionedDraft::purgeDrafts(
        $draft->getPHID(),
        $viewer->getPHID());
      $draft->delete();
      $count++;
    }
    return $count;
  }

  /**
   * The [first, last] line numbers each hunk shows on one side of the file
   * (new: isNewFile, else old); a hunk with no lines on that side shows none.
   */
  public static function hunkRanges(array $hunks, $is_new) {
    $ranges = array();
    foreach ($hunks as $hunk) {
      $offset = (int)($is_new ? $hunk->getNewOffset() : $hunk->getOldOffset());
      $len = (int)($is_new ? $hunk->getNewLen() : $hunk->getOldLen());
      if ($len > 0) {
        $ranges[] = array($offset, $offset + $len - 1);
      }
    }
    return $ranges;
  }

  /**
   * Whether lines $line..$line+$length all lie in one of $ranges.
   */
  public static function rangesCover(array $ranges, $line, $length) {
    foreach ($ranges as $range) {
      if ($line >= $range[0] && $line + $length <= $range[1]) {
        return true;
      }
    }
    return false;
  }

  public static function describeRanges(array $ranges, $is_new) {
    if (!$ranges) {
      return $is_new ? 'no new lines' : 'no old lines';
    }
    $parts = array();
    foreach ($ranges as $range) {
      $parts[] = $range[0].'-'.$range[1];
    }
    return ($is_new ? 'new' : 'old').' lines '.implode(', ', $parts);
  }

  private function badInline($message) {
    return id(new ConduitException('ERR-BAD-INLINE'))
      ->setErrorDescription($message);
  }

}
