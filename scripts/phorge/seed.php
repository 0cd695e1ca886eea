<?php

/**
 * Seed a local Phorge for Nova's end-to-end tests (idempotent).
 *
 *   php seed.php <phorge root> <out.json> <base url>
 *
 * Creates, unless they exist:
 *   - users: `admin` (administrator; owns the Herald rule), `alice` (writes revisions),
 *     `nova-bot` (a bot: Nova's identity), `bob` (another user who reads);
 *   - one standard Conduit API token for each;
 *   - the build plan "Nova review" with a "Make HTTP Request" step that waits for a
 *     message (as docs/phabricator.md tells an admin to set it up), and a global Herald
 *     rule that runs it on every revision, so builds are Herald-started and their lint
 *     shows in Differential;
 *   - D1: a revision by alice from d1.diff, made through Conduit
 *     (differential.createrawdiff, then differential.revision.edit) as alice.
 * Writes what the tests need (URL, usernames, PHIDs, tokens, plan, D1) to out.json.
 *
 * Phorge has no bin/accountadmin any more: users and tokens are made here with the
 * same editors the web UI uses (PhabricatorUserEditor, the empower transaction).
 */

if ($argc !== 4) {
  fwrite(STDERR, "usage: php seed.php <phorge root> <out.json> <base url>\n");
  exit(2);
}
list(, $root, $out_path, $base_url) = $argv;
require_once $root.'/scripts/__init_script__.php';

$omnipotent = PhabricatorUser::getOmnipotentUser();
$source = PhabricatorContentSource::newForSource(
  PhabricatorConsoleContentSource::SOURCECONST);

function nova_user($username, $real_name, $is_bot, $is_admin) {
  global $omnipotent, $source;
  $user = id(new PhabricatorPeopleQuery())
    ->setViewer($omnipotent)
    ->withUsernames(array($username))
    ->executeOne();
  if (!$user) {
    $user = id(new PhabricatorUser())
      ->setUsername($username)
      ->setRealName($real_name)
      ->setIsApproved(1);
    $email = id(new PhabricatorUserEmail())
      ->setAddress($username.'@example.invalid')
      ->setIsVerified(1);
    id(new PhabricatorUserEditor())
      ->setActor($omnipotent)
      ->createNewUser($user, $email);
    if ($is_bot) {
      id(new PhabricatorUserEditor())
        ->setActor($omnipotent)
        ->makeSystemAgentUser($user, true);
    }
  }
  if ($is_admin && !$user->getIsAdmin()) {
    $xactions = array(
      $user->getApplicationTransactionTemplate()
        ->setTransactionType(PhabricatorUserEmpowerTransaction::TRANSACTIONTYPE)
        ->setNewValue(true),
    );
    $user->getApplicationTransactionEditor()
      ->setActor($omnipotent)
      ->setActingAsPHID(id(new PhabricatorPeopleApplication())->getPHID())
      ->setContentSource($source)
      ->setContinueOnMissingFields(true)
      ->applyTransactions($user, $xactions);
  }
  return id(new PhabricatorPeopleQuery())
    ->setViewer($omnipotent)
    ->withPHIDs(array($user->getPHID()))
    ->needUserSettings(true)
    ->executeOne();
}

function nova_token(PhabricatorUser $user) {
  $token = id(new PhabricatorConduitToken())->loadOneWhere(
    'objectPHID = %s AND tokenType = %s AND expires IS NULL',
    $user->getPHID(),
    PhabricatorConduitToken::TYPE_STANDARD);
  if (!$token) {
    $token = PhabricatorConduitToken::initializeNewToken(
      $user->getPHID(),
      PhabricatorConduitToken::TYPE_STANDARD);
    $token->save();
  }
  return $token->getToken();
}

function nova_build_plan(PhabricatorUser $admin, $base_url) {
  $name = 'Nova review';
  $plans = id(new HarbormasterBuildPlanQuery())
    ->setViewer($admin)
    ->execute();
  // The CI job's URL in real life (Jenkins' buildWithParameters); here a page of
  // Phorge itself, so the step succeeds and the target waits for Nova's message.
  $uri = rtrim($base_url, '/').'/status/?TARGET_PHID=${target.phid}'.
    '&REVISION_ID=${buildable.revision}&DIFF_ID=${buildable.diff}';
  foreach ($plans as $plan) {
    if ($plan->getName() === $name) {
      // Seeded before on another port (PHORGE_PORT): the step follows the server.
      $steps = id(new HarbormasterBuildStepQuery())
        ->setViewer($admin)
        ->withBuildPlanPHIDs(array($plan->getPHID()))
        ->execute();
      foreach ($steps as $step) {
        if ($step->getDetail('uri') !== $uri) {
          $step->setDetail('uri', $uri)->save();
        }
      }
      return $plan;
    }
  }
  $plan = HarbormasterBuildPlan::initializeNewBuildPlan($admin)
    ->setName($name);
  $plan->save();
  id(new HarbormasterBuildStep())
    ->setName('Nova review (HTTP)')
    ->setDescription('')
    ->setBuildPlanPHID($plan->getPHID())
    ->setClassName('HarbormasterHTTPRequestBuildStepImplementation')
    ->setSequence(1)
    ->setDetail('uri', $uri)
    ->setDetail('method', 'GET')
    ->setDetail('builtin.wait-for-message', 'wait')
    ->save();
  return $plan;
}

function nova_herald_rule(PhabricatorUser $admin, HarbormasterBuildPlan $plan) {
  global $source;
  $name = 'Run Nova review';
  $rule = id(new HeraldRuleQuery())
    ->setViewer($admin)
    ->withContentTypes(array('differential'))
    ->execute();
  foreach ($rule as $existing) {
    if ($existing->getName() === $name) {
      return $existing;
    }
  }
  $rule = id(new HeraldRule())
    ->setAuthorPHID($admin->getPHID())
    ->setContentType('differential')
    ->setRuleType(HeraldRuleTypeConfig::RULE_TYPE_GLOBAL)
    ->setMustMatchAll(1)
    ->setRepetitionPolicyStringConstant(HeraldRule::REPEAT_EVERY)
    ->attachConditions(array())
    ->attachActions(array());
  $condition = id(new HeraldCondition())
    ->setFieldName(HeraldAlwaysField::FIELDCONST)
    ->setFieldCondition(HeraldAdapter::CONDITION_UNCONDITIONALLY)
    ->setValue(null);
  $action = id(new HeraldActionRecord())
    ->setAction(HarbormasterRunBuildPlansHeraldAction::ACTIONCONST)
    ->setTarget(array($plan->getPHID()));
  $state = id(new HeraldRuleSerializer())->serializeRuleComponents(
    true,
    array($condition),
    array($action),
    HeraldRule::REPEAT_EVERY);
  $xactions = array(
    id(new HeraldRuleTransaction())
      ->setTransactionType(PhabricatorTransactions::TYPE_CREATE),
    id(new HeraldRuleTransaction())
      ->setTransactionType(HeraldRuleEditTransaction::TRANSACTIONTYPE)
      ->setNewValue($state),
    id(new HeraldRuleTransaction())
      ->setTransactionType(HeraldRuleNameTransaction::TRANSACTIONTYPE)
      ->setNewValue($name),
  );
  id(new HeraldRuleEditor())
    ->setActor($admin)
    ->setContinueOnNoEffect(true)
    ->setContentSource($source)
    ->applyTransactions($rule, $xactions);
  return $rule;
}

function nova_conduit(PhabricatorUser $user, $method, array $params) {
  return id(new ConduitCall($method, $params))
    ->setUser($user)
    ->execute();
}

function nova_first_revision(PhabricatorUser $author, $diff_path) {
  $existing = id(new DifferentialRevisionQuery())
    ->setViewer($author)
    ->withIDs(array(1))
    ->executeOne();
  if ($existing) {
    return (int)$existing->getID();
  }
  $diff = nova_conduit($author, 'differential.createrawdiff', array(
    'diff' => Filesystem::readFile($diff_path),
  ));
  $edit = nova_conduit($author, 'differential.revision.edit', array(
    'transactions' => array(
      array('type' => 'update', 'value' => $diff['phid']),
      array('type' => 'title', 'value' => 'Cart: tax and totals'),
      array('type' => 'summary', 'value' => 'Adds tax to the cart total.'),
      array('type' => 'testPlan', 'value' => 'Ran the unit tests.'),
    ),
  ));
  return (int)$edit['object']['id'];
}

$admin = nova_user('admin', 'Admin', false, true);
$users = array(
  'author' => nova_user('alice', 'Alice Author', false, false),
  'bot' => nova_user('nova-bot', 'Nova Bot', true, false),
  'reader' => nova_user('bob', 'Bob Reader', false, false),
);
$plan = nova_build_plan($admin, $base_url);
$rule = nova_herald_rule($admin, $plan);
$revision = nova_first_revision($users['author'], dirname(__FILE__).'/d1.diff');

$out = array(
  'url' => rtrim($base_url, '/'),
  'phorge_root' => $root,
  'build_plan' => $plan->getPHID(),
  'herald_rule' => $rule->getPHID(),
  'revision' => $revision,
  'users' => array(),
);
foreach ($users + array('admin' => $admin) as $role => $user) {
  $out['users'][$role] = array(
    'username' => $user->getUsername(),
    'phid' => $user->getPHID(),
    'token' => nova_token($user),
  );
}
Filesystem::writeFile($out_path, phutil_json_encode($out));
fwrite(STDERR, "seeded: D{$revision}, users ".
  implode(', ', ipull($out['users'], 'username'))."\n");
