// Package govern runs one capability under governance: the run pipeline of docs/ARCHITECTURE.md "Run".
//
// # Basics
//
// Governor.Run takes a RunRequest ({id, version, arguments, confirmation_token}) and the
// caller's RuntimeContext and goes, in this order: resolve the id to its active definition
// and apply the discover and describe gates (policy.Disclose: a capability the caller may not
// discover — absent, another tenant's, acl.deny, offline, disabled — is not_found, one it may
// not describe is forbidden, with describe's message, before anything of its contract is
// looked at; a pack or recipe is not_runnable, a recipe's steps are returned) → pinned
// version (version_mismatch) → arguments against arguments_schema (invalid_arguments,
// every error with its JSON pointer) → the ACL execute gate (forbidden; deny overrides) →
// risk: a network policy the machine cannot enforce for side effect I
// (network_unenforceable) → confirmation (confirmation_required with a token, or
// invalid_confirmation) → the handler under the action's timeout (timed_out, handler_failed)
// → the output against output_schema (invalid_output) → audit and history.
//
// Every attempt appends hash-chained audit records: one "denied" or
// "confirmation_required" record for a refusal, else an "allowed" record before the
// handler starts and a "succeeded", "failed" or "timed_out" record after it.
//
// Confirmation tokens are "cdx1.<kid>.<payload>.<mac>": an HMAC-SHA256 (key id kid) over a
// canonical payload binding tenant, user, session, action id, version, schema digest,
// arguments digest, expiry and a random single-use id. The single-use id is spent in the
// same store transaction that appends the run's "allowed" record, so of many concurrent
// redemptions exactly one runs. A new version or digest of the definition (a "rug pull")
// invalidates tokens issued for the old one. A token given for an action that needs no
// confirmation is ignored (and not spent).
//
// # Caveats
//
// Definitions must hand out capabilities with pack inheritance resolved (Capability.Eff);
// wrap a store with WithInheritance or a snapshot with FromSnapshot. A refusal is an answer
// (RunResult.Status "refused"), not an error: Run returns an error only when the audit log or
// another backend fails.
package govern
