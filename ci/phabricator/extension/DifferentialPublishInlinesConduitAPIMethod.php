<?php

/**
 * differential.publishinlines: publish the caller's draft inline comments on a revision,
 * with an optional comment, the way the web UI's "Submit" does.
 *
 * Stock Conduit can create inline comments (differential.createinline) but leaves them as
 * drafts that only their author sees; nothing stock publishes them. Nova detects this
 * method through conduit.query and then posts real, replyable inline comments.
 *
 * Install: copy this file into <phorge>/src/extensions/ and restart the web server and
 * the daemons (bin/phd restart). Files in src/extensions/ are loaded without
 * `arc liberate`.
 */
final class DifferentialPublishInlinesConduitAPIMethod
  extends DifferentialConduitAPIMethod {

  public function getAPIMethodName() {
    return 'differential.publishinlines';
  }

  public function getMethodDescription() {
    return pht(
      'Publish your draft inline comments on a revision, with an optional comment.');
  }

  protected function defineParamTypes() {
    return array(
      'revisionID' => 'required revisionid',
      'comment' => 'optional string',
      'silent' => 'optional bool',
    );
  }

  protected function defineReturnType() {
    return 'nonempty dict';
  }

  protected function defineErrorTypes() {
    return array(
      'ERR_BAD_REVISION' => pht('No such revision exists, or you cannot see it.'),
    );
  }

  protected function execute(ConduitAPIRequest $request) {
    $viewer = $request->getUser();

    $revision = id(new DifferentialRevisionQuery())
      ->setViewer($viewer)
      ->withIDs(array($request->getValue('revisionID')))
      ->needReviewers(true)
      ->executeOne();
    if (!$revision) {
      throw new ConduitException('ERR_BAD_REVISION');
    }

    // The viewer's unsubmitted inline comments, as the revision's comment form loads them.
    $inlines = DifferentialTransactionQuery::loadUnsubmittedInlineComments(
      $viewer,
      $revision);

    $xactions = array();
    foreach ($inlines as $inline) {
      $xactions[] = id(new DifferentialTransaction())
        ->setTransactionType(DifferentialTransaction::TYPE_INLINE)
        ->attachComment($inline);
    }

    $comment = (string)$request->getValue('comment');
    if (strlen($comment)) {
      $xactions[] = id(new DifferentialTransaction())
        ->setTransactionType(PhabricatorTransactions::TYPE_COMMENT)
        ->attachComment(
          id(new DifferentialTransactionComment())
            ->setContent($comment));
    }

    if ($xactions) {
      id(new DifferentialTransactionEditor())
        ->setActor($viewer)
        ->setContentSource($request->newContentSource())
        ->setContinueOnNoEffect(true)
        ->setContinueOnMissingFields(true)
        ->setDisableEmail((bool)$request->getValue('silent'))
        ->applyTransactions($revision, $xactions);
    }

    return array(
      'revisionID' => (int)$revision->getID(),
      'published' => count($inlines),
    );
  }

}
