<?php

/**
 * nova.differential.respond (contract version 1): Nova answers in a revision's
 * conversation — threaded replies under inline comments, inlines marked done
 * (resolved on fix), and a plain comment — in one call.
 *
 * Stock Conduit cannot do either: replies need setReplyToCommentPHID() and the
 * parent's changeset and line, and an inline's done state is a
 * "core:inlinestate" transaction that only the revision's author may apply
 * through the web UI. This method builds both and hands them to Differential's
 * transaction editor; as with nova.differential.publish, a failed call writes
 * nothing.
 *
 * This file is separate from nova.differential.publish on purpose: install
 * both (Nova finds each through conduit.query and works without this one:
 * replies then go to the revision as plain comments, and nothing is resolved).
 *
 * Parameters
 *   revisionID  required int   the revision (D123 -> 123)
 *   replies     optional list  of {"replyTo": string (a published inline
 *                              comment's PHID on this revision),
 *                              "content": non-empty string}
 *   done        optional list  of inline comment PHIDs on this revision to
 *                              mark done
 *   comment     optional string  a plain comment (remarkup)
 *   silent      optional bool  no email or notifications
 *
 * Returns {"version": 1, "revisionID", "replies": [{"id", "phid",
 *          "replyTo"}], "done": N}.
 * Errors: ERR-BAD-REVISION, ERR-BAD-INLINE (the message names the entry and
 * what is wrong; nothing was written), ERR-EMPTY.
 *
 * Install: copy this file into <phorge>/src/extensions/ beside
 * NovaDifferentialPublishConduitAPIMethod.php and restart the web server.
 * Written against Phorge master of 2026 (PHP 8.2).
 */
final class NovaDifferentialRespondConduitAPIMethod
  extends DifferentialConduitAPIMethod {

  const CONTRACT_VERSION = 1;

  public function getAPIMethodName() {
    return 'nova.differential.respond';
  }

  public function getMethodDescription() {
    return pht(
      'Nova extension (contract version %d): reply under inline comments, '.
      'mark inlines done, and comment on a revision, in one call.',
      self::CONTRACT_VERSION);
  }

  protected function defineParamTypes() {
    return array(
      'revisionID' => 'required revisionid',
      'replies' => 'optional list<map<string, wild>>',
      'done' => 'optional list<phid>',
      'comment' => 'optional string',
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
      'ERR-BAD-INLINE' => pht(
        'A reply or done entry names no published inline of this revision.'),
      'ERR-EMPTY' => pht('Nothing to do.'),
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

    $replies = $request->getValue('replies', array());
    $done = $request->getValue('done', array());
    $comment = (string)$request->getValue('comment', '');
    if (!is_array($replies) || !is_array($done)) {
      throw $this->badInline(pht('"replies" and "done" must be lists.'));
    }
    if (!$replies && !$done && !strlen(trim($comment))) {
      throw new ConduitException('ERR-EMPTY');
    }

    // Every inline named is loaded (and checked) before anything is written.
    $wanted = array_merge(ipull($replies, 'replyTo'), $done);
    $inlines = $this->loadInlines($viewer, $revision, $wanted);

    $xactions = array();
    if (strlen(trim($comment))) {
      $xactions[] = id(new DifferentialTransaction())
        ->setTransactionType(PhabricatorTransactions::TYPE_COMMENT)
        ->attachComment(
          id(new DifferentialTransactionComment())
            ->setContent($comment));
    }

    $made = array();
    foreach (array_values($replies) as $index => $spec) {
      $content = idx($spec, 'content');
      if (!is_string($content) || !strlen(trim($content))) {
        throw $this->badInline(pht('reply %d: "content" is empty.', $index));
      }
      $parent = $inlines[idx($spec, 'replyTo')];
      // Not saved here: the editor saves it inside its database transaction.
      $reply = id(new DifferentialTransactionComment())
        ->setRevisionPHID($revision->getPHID())
        ->setChangesetID($parent->getChangesetID())
        ->setIsNewFile($parent->getIsNewFile())
        ->setLineNumber($parent->getLineNumber())
        ->setLineLength($parent->getLineLength())
        ->setReplyToCommentPHID($parent->getPHID())
        ->setContent($content)
        ->attachReplyToComment($parent);
      $made[] = array($reply, $parent->getPHID());
      $xactions[] = id(new DifferentialTransaction())
        ->setTransactionType(DifferentialTransaction::TYPE_INLINE)
        ->attachComment($reply);
    }

    if ($done) {
      $old = array();
      $new = array();
      $details = array();
      foreach ($done as $phid) {
        $old[$phid] = $inlines[$phid]->getFixedState();
        $new[$phid] = PhabricatorInlineComment::STATE_DONE;
        // As Phorge's own editor records it (PHI995): the timeline then hides a
        // story of Nova marking its own inlines done.
        $details[$phid] = array(
          'authorPHID' => $inlines[$phid]->getAuthorPHID(),
        );
      }
      $xactions[] = id(new DifferentialTransaction())
        ->setTransactionType(PhabricatorTransactions::TYPE_INLINESTATE)
        ->setIgnoreOnNoEffect(true)
        ->setMetadataValue('inline.details', $details)
        ->setOldValue($old)
        ->setNewValue($new);
    }

    id(new DifferentialTransactionEditor())
      ->setActor($viewer)
      ->setContentSource($request->newContentSource())
      ->setContinueOnNoEffect(true)
      ->setContinueOnMissingFields(true)
      ->setIsSilent((bool)$request->getValue('silent'))
      ->applyTransactions($revision, $xactions);

    $published = array();
    foreach ($made as $pair) {
      list($reply, $parent_phid) = $pair;
      $published[] = array(
        'id' => (int)$reply->getID(),
        'phid' => $reply->getPHID(),
        'replyTo' => $parent_phid,
      );
    }

    return array(
      'version' => self::CONTRACT_VERSION,
      'revisionID' => (int)$revision->getID(),
      'replies' => $published,
      'done' => count($done),
    );
  }

  private function loadInlines(
    PhabricatorUser $viewer,
    DifferentialRevision $revision,
    array $phids) {

    $phids = array_values(array_unique(array_filter($phids, 'is_string')));
    if (!$phids) {
      return array();
    }
    $inlines = id(new DifferentialDiffInlineCommentQuery())
      ->setViewer($viewer)
      ->withRevisionPHIDs(array($revision->getPHID()))
      ->withPHIDs($phids)
      ->withIsDeleted(false)
      ->withHasTransaction(true)
      ->execute();
    // The query returns DifferentialTransactionComment storage objects (not the
    // DifferentialInlineComment wrappers): they are attached to replies as is.
    $inlines = mpull($inlines, null, 'getPHID');
    foreach ($phids as $phid) {
      if (!isset($inlines[$phid])) {
        throw $this->badInline(
          pht('no published inline "%s" on this revision.', $phid));
      }
    }
    return $inlines;
  }

  private function badInline($message) {
    return id(new ConduitException('ERR-BAD-INLINE'))
      ->setErrorDescription($message);
  }

}
