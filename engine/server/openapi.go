package server

import (
	"encoding/json"

	"github.com/capdex/capdex/engine"
	"github.com/capdex/capdex/registry"
)

// openAPIDocument is the OpenAPI 3.1 description of the HTTP API, served at /openapi.json.
// TestOpenAPI keeps it true: every route is documented, every documented operation is
// routed, and every schema names exactly the JSON fields of the Go type it describes.
var openAPIDocument = mustJSON(openAPI())

// schemaTypes maps the document's component schemas to the Go types they describe (by
// name); TestOpenAPI reflects over those types.
var schemaTypes = map[string]string{
	"SearchRequest":   "registry.SearchRequest",
	"StructuredMatch": "registry.StructuredMatch",
	"SearchResponse":  "registry.SearchResponse",
	"Match":           "registry.Match",
	"NextStep":        "registry.NextStep",
	"Explanation":     "registry.Explanation",
	"EvidenceItem":    "registry.EvidenceItem",
	"ScoreComponent":  "registry.ScoreComponent",
	"SearchMeta":      "registry.SearchMeta",
	"ListRequest":     "server.ListRequest",
	"ListResponse":    "engine.ListResponse",
	"ListItem":        "engine.ListItem",
	"DescribeRequest": "server.DescribeRequest",
	"DescribeResult":  "server.DescribeResult",
	"Example":         "registry.Example",
	"RecipeStep":      "registry.RecipeStep",
	"RunRequest":      "govern.RunRequest",
	"RunResult":       "govern.RunResult",
	"Capability":      "registry.Capability",
	"ACL":             "registry.ACL",
	"Handler":         "registry.Handler",
	"PutResult":       "server.PutResult",
	"DeleteResult":    "server.DeleteResult",
	"ErrorBody":       "server.ErrorBody",
	"ErrorDetail":     "server.ErrorDetail",
	"UpstreamList":    "server.UpstreamList",
	"UpstreamStatus":  "engine.UpstreamStatus",
	"Funnel":          "engine.Funnel",
	"FunnelRow":       "engine.CapabilityFunnel",
}

// DeleteResult answers an admin DELETE.
type DeleteResult struct {
	ID         string `json:"id"`
	Deleted    bool   `json:"deleted"`
	Generation uint64 `json:"generation"`
}

type m = map[string]any

func mustJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err) // a static document always encodes
	}
	return b
}

func ref(name string) m { return m{"$ref": "#/components/schemas/" + name} }
func str(desc string) m { return m{"type": "string", "description": desc} }
func integer(desc string) m {
	return m{"type": "integer", "description": desc}
}
func number(desc string) m  { return m{"type": "number", "description": desc} }
func boolean(desc string) m { return m{"type": "boolean", "description": desc} }
func arr(items m, desc string) m {
	return m{"type": "array", "items": items, "description": desc}
}
func strs(desc string) m { return arr(m{"type": "string"}, desc) }
func enum(desc string, vals ...string) m {
	return m{"type": "string", "enum": vals, "description": desc}
}
func anyObject(desc string) m { return m{"type": "object", "description": desc} }

// object is a schema with properties; closed objects refuse other fields.
func object(desc string, closed bool, props m, required ...string) m {
	o := m{"type": "object", "description": desc, "properties": props}
	if closed {
		o["additionalProperties"] = false
	}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func jsonBody(schema string) m {
	return m{"required": true, "content": m{"application/json": m{"schema": ref(schema)}}}
}

func answer(desc, schema string) m {
	return m{"description": desc, "content": m{"application/json": m{"schema": ref(schema)}}}
}

// errs are the error answers an operation may give.
func errs(codes ...string) m {
	desc := map[string]string{
		"400": "Malformed JSON (the message names the byte offset), an unknown field, or a request the engine refuses.",
		"401": "Missing or invalid API key.",
		"403": "The caller may not do this (describe gate, or the admin scope).",
		"404": "No visible capability has the id.",
		"409": "Versioning conflict: a changed definition without a version bump, a version older than the stored one, or a pack that still has children.",
		"413": "The body exceeds limits.max_body_bytes.",
		"429": "Too many searches or runs in flight; retry after Retry-After seconds.",
		"503": "Shutting down, or no registry generation loaded.",
	}
	out := m{}
	for _, c := range codes {
		out[c] = answer(desc[c], "ErrorBody")
	}
	return out
}

func merge(a, b m) m {
	for k, v := range b {
		a[k] = v
	}
	return a
}

var idParam = m{"name": "id", "in": "path", "required": true, "schema": m{"type": "string"},
	"description": "Capability id, e.g. maintenance.codex.diagnose."}

var sessionParam = m{"name": HeaderSession, "in": "header", "required": false, "schema": m{"type": "string"},
	"description": "The caller's session; confirmation tokens are bound to it, so run and redeem with the same value."}

func openAPI() m {
	sideEffect := enum("Side effect: R < W-local < W-shared < I.", "R", "W-local", "W-shared", "I")
	resourceType := enum("Resource type.", "pack", "action", "recipe")
	risk := enum("Reviewed risk.", "low", "medium", "high", "critical")
	availability := enum("Whether the caller can use it now.", "available", "needs_confirmation", "missing_credentials", "unavailable", "incompatible", "forbidden")

	schemas := m{
		"SearchRequest": object("capability_search input (docs/ARCHITECTURE.md, Protocol).", true, m{
			"query":           str("The goal in the user's words (any language)."),
			"within":          str("Limit the search to a pack and its subtree."),
			"types":           arr(resourceType, "Resource types to return; empty means all."),
			"side_effect_max": sideEffect,
			"limit":           m{"type": "integer", "minimum": 1, "maximum": 10, "default": 5, "description": "How many matches."},
			"match":           ref("StructuredMatch"),
			"explain":         boolean("Add each match's evidence per retriever and its score breakdown."),
		}, "query"),
		"StructuredMatch": object("Optional structured match for orchestrators that hold an ontology.", true, m{
			"next_step": enum("The orchestrator's next step; selects capability types (docs/matching.md).", nextStepNames()...),
			"domain":    str("Hard filter: the capability's domain."), "scenario": str("Hard filter: one of the capability's scenarios."),
			"intents":          strs("Ranking: intents the capability should serve."),
			"risk_signals":     strs("Ranking: risk signals, met by the symptoms rules and other capabilities declare."),
			"capability_types": arr(enum("Capability type.", registry.CapabilityTypes...), "Hard filter: capability types."),
		}),
		"SearchResponse": object("capability_search output. It never carries schemas.", false, m{
			"query": str("The query."), "scope": str("The searched pack, or all."),
			"resolution":          enum("How sure the search is.", "confident", "ambiguous", "no_confident_match"),
			"reason":              str("A reason code: no_match, unavailable, incompatible, policy_hidden."),
			"reason_detail":       str("Which hard filter of match left nothing the caller may discover."),
			"confidence":          number("Calibrated probability (0..1) that the first match is the one wanted."),
			"decision":            enum("The route decision.", "confident", "clarify", "no_match", "unavailable", "incompatible", "policy_hidden"),
			"fallback":            arr(ref("FallbackStep"), "What to do next when not confident, in order: observe, ask, read_only, hand_off, refuse."),
			"missing_information": strs("What would tell ambiguous candidates apart."),
			"matches":             arr(ref("Match"), "Ranked matches."),
			"search_meta":         ref("SearchMeta"),
		}, "query", "scope", "resolution", "matches", "search_meta"),
		"PlanReason": object("One planned retriever and why.", false, m{
			"retriever": str("The retriever."), "reason": str("Why the planner chose it."),
		}, "retriever", "reason"),
		"FallbackStep": object("One fallback step.", false, m{
			"step":        enum("The step.", "observe", "ask", "read_only", "hand_off", "refuse"),
			"resource_id": str("The capability the step uses."),
		}, "step"),
		"Match": object("One returned capability summary.", false, m{
			"rank": integer("1-based rank."), "resource_type": resourceType, "resource_id": str("Capability id."),
			"title": str("Title."), "summary": str("Summary."),
			"matched_entities": strs("Entities the query matched."), "matched_intents": strs("Intents the query matched."),
			"matched_symptoms": strs("Symptoms the query matched."), "side_effect": sideEffect, "risk_level": risk,
			"requires_confirmation": boolean("A run needs the user's confirmation."), "availability": availability, "availability_reasons": strs("Why it is unavailable (such as an upstream MCP server that is down)."),
			"score": number("Final score."), "next_step": ref("NextStep"), "explain": ref("Explanation"),
			"warnings": strs("What to know before using it (deprecated)."),
		}),
		"NextStep": object("The meta-tool to call next and its arguments.", false, m{
			"tool": str("capability_describe or capability_run."), "arguments": m{"type": "object", "additionalProperties": m{"type": "string"}, "description": "Its arguments."},
		}),
		"Explanation": object("A match's evidence per retriever and score breakdown.", false, m{
			"evidence": arr(ref("EvidenceItem"), "Per retriever."), "score_breakdown": arr(ref("ScoreComponent"), "Addends of the score."),
			"extra": anyObject("Extra diagnostics."),
		}),
		"EvidenceItem": object("What one retriever said about a candidate.", false, m{
			"retriever": str("Retriever."), "rank": integer("Its rank there."), "raw_score": number("Its raw score."),
			"matched_fields": strs("Fields that matched."),
		}),
		"ScoreComponent": object("One named addend of a score.", false, m{"name": str("Name."), "value": number("Value.")}),
		"SearchMeta": object("How the search ran.", false, m{
			"planned_retrievers": strs("Planned."), "completed_retrievers": strs("Answered in time."),
			"plan_reasons":         arr(ref("PlanReason"), "Why each planned retriever ran."),
			"timed_out_retrievers": strs("Missed their deadline."), "pending_retrievers": strs("Still running when a streamed partial answer was sent."), "failed_retrievers": strs("Failed or panicked."),
			"candidate_count": integer("Candidates gathered."), "returned_count": integer("Matches returned."),
			"partial": boolean("Some retriever did not answer (or the update is not the final one)."),
			"took_us": integer("Microseconds."), "generation": integer("Registry generation searched."),
		}),
		"ListRequest": object("capability_list input.", true, m{"pack": str("Pack to browse; empty lists the root packs.")}),
		"ListResponse": object("A pack's visible children.", false, m{
			"pack": str("The pack."), "title": str("Its title."), "guidance": str("Its local guidance."),
			"items": arr(ref("ListItem"), "Children."),
		}),
		"ListItem": object("One child of a pack.", false, m{
			"resource_id": str("Id."), "resource_type": resourceType, "title": str("Title."), "summary": str("Summary."),
			"side_effect": sideEffect, "risk_level": risk, "requires_confirmation": boolean("Needs confirmation."),
			"availability": availability, "children": integer("Visible children of a pack."),
		}),
		"DescribeRequest": object("capability_describe input.", true, m{
			"resource_id": str("Capability id, as search's next_step names it."),
			"format":      enum("Also render the action as a tool in this format.", "openai", "anthropic", "mcp"),
		}, "resource_id"),
		"DescribeResult": object("One capability's full contract.", false, m{
			"resource_id": str("Id."), "resource_type": resourceType, "capability_type": str("What it is (tool, skill, ...)."),
			"version": integer("Active version."), "title": str("Title."), "summary": str("Summary."),
			"when_to_use": strs("When to use it."), "when_not_to_use": strs("When not to."),
			"arguments_schema": anyObject("JSON Schema of the arguments."), "output_schema": anyObject("JSON Schema of the output."),
			"side_effect": sideEffect, "risk_level": risk, "requires_confirmation": boolean("A run needs confirmation."),
			"schema_digest": str("sha256 digest pinning what a confirmation approves."), "examples": arr(ref("Example"), "Sample calls."),
			"produces": strs("What its output holds."), "timeout": str("Run timeout."), "network_policy": enum("Network a run may reach.", "none", "allowlist", "any"),
			"availability": availability, "availability_reasons": strs("Why it is not available."),
			"status": enum("Lifecycle.", "active", "deprecated", "offline"), "owner": str("Owner."),
			"warnings": strs("What to know before using it (deprecated)."),
			"steps":    arr(ref("RecipeStep"), "A recipe's steps."), "guidance": str("A pack's guidance."),
			"children": arr(ref("ListItem"), "A pack's children."), "next_step": ref("NextStep"),
			"tool": anyObject("The action rendered as a tool, when format was given."),
		}),
		"Example": object("A sample call.", false, m{"title": str("Title."), "arguments": anyObject("Arguments.")}),
		"RecipeStep": object("A recipe step.", false, m{
			"title": str("Title."), "command": str("Suggested command."), "action": str("An action this step may run."), "note": str("Note."),
		}),
		"RunRequest": object("capability_run input (strict: no other fields, no repeated fields).", true, m{
			"resource_id":        str("Action id, as describe and next_step name it; id@N pins version N."),
			"id":                 str("The same as resource_id (kept for older clients; give one, or both equal)."),
			"version":            m{"type": "integer", "minimum": 0, "description": "The version you described; 0 or absent means the active one."},
			"arguments":          anyObject("Arguments, valid against the action's arguments_schema."),
			"confirmation_token": str("The token of an earlier confirmation_required answer."),
		}),
		"RunResult": object("The outcome of a run; a refusal is an answer, not an HTTP error.", false, m{
			"status":             enum("Outcome.", "succeeded", "confirmation_required", "refused", "failed"),
			"reason":             str("Reason code: not_found, not_runnable, unavailable, incompatible, version_mismatch, invalid_arguments, forbidden, network_unenforceable, confirmation_required, invalid_confirmation, timed_out, handler_failed, invalid_output."),
			"message":            str("Why, in one sentence."),
			"errors":             strs("Every schema or token problem."),
			"id":                 str("Action id."),
			"version":            integer("Active version."),
			"schema_digest":      str("Digest of the definition checked."),
			"output":             m{"description": "The handler's output."},
			"summary":            str("What the run would do (confirmation_required)."),
			"affected_resources": strs("What it would change (confirmation_required)."),
			"confirmation_token": str("Redeem it, once the user agreed, within expires_at (single use)."),
			"expires_at":         m{"type": "string", "format": "date-time", "description": "Token expiry."},
			"steps":              arr(ref("RecipeStep"), "A recipe's steps (not_runnable)."),
			"exit_status":        integer("exec handler's exit status."),
			"http_status":        integer("http handler's status."),
			"stderr":             str("Tail of an exec handler's stderr."),
			"truncated":          boolean("Output cut at its cap."),
			"network":            str("How the network policy was enforced."),
			"duration_us":        integer("Handler run time."),
			"run_id":             str("Run id in the audit records."),
			"audit_seq":          integer("Sequence number of the last audit record."),
		}, "status", "id", "run_id"),
		"Capability": object("A capability definition (docs/ARCHITECTURE.md, Definitions) as JSON; the id key may also be spelled action_id, pack_id or recipe_id. schema_digest is computed, never typed.", false, m{
			"id": str("Dotted id."), "version": integer("Version (≥ 1); a change needs a higher one."),
			"resource_type": resourceType, "capability_type": str("rule, skill, mcp, task, database_query, knowledge_search, report_generator, notification, tool, model, agent, workflow."),
			"title": str("Title."), "summary": str("Summary."), "aliases": strs("Other names."), "intents": strs("Intents."),
			"entities": strs("Entities."), "symptoms": strs("Symptoms."), "when_to_use": strs("When to use."),
			"when_not_to_use": strs("When not to."), "domain": str("Domain."), "scenarios": strs("Scenarios."),
			"supported_os": strs("linux, macos, windows."), "required_executors": strs("shell, npm, ..."),
			"side_effect": sideEffect, "risk_level": risk, "requires_confirmation": boolean("Needs confirmation."),
			"timeout": str("Go duration."), "network_policy": enum("Network policy.", "none", "allowlist", "any"),
			"network_allow": strs("Allowed hosts."), "acl": ref("ACL"), "owner": str("Owner (required)."),
			"reviewer": str("Reviewer (required for high and critical risk)."), "status": enum("Lifecycle.", "active", "deprecated", "offline"),
			"arguments_schema": anyObject("JSON Schema."), "output_schema": anyObject("JSON Schema."), "handler": ref("Handler"),
			"produces": strs("Output facts."), "tags": strs("Tags."), "provenance": anyObject("provider, source, imported, format, reviewed_at."),
			"compatibility": anyObject("agent_runtime, regions."), "behavior": anyObject("latency_class, cost_class, supports_dry_run."),
			"requirements": anyObject("credentials, feature_flags, min_budget."), "health": anyObject("status, checked_at, message."),
			"examples": arr(ref("Example"), "Sample calls."), "external_id": str("Original name of an imported tool."),
			"guidance": str("A pack's guidance."), "enabled": boolean("false disables a pack and its subtree."),
			"tenants": strs("Tenants that see a pack's subtree."), "steps": arr(ref("RecipeStep"), "A recipe's steps."),
		}, "version", "resource_type", "title"),
		"ACL": object("Who passes each gate: scope names, user:NAME, tenant:NAME or *; deny overrides.", true, m{
			"discover": strs("May see it exists."), "describe": strs("May read its contract."),
			"execute": strs("May run it."), "deny": strs("Never."),
		}),
		"Handler": object("How an action runs.", true, m{
			"kind": enum("Handler kind.", "go", "exec", "http", "mcp"), "name": str("go function, or the mcp tool's name upstream."), "server": str("The upstream MCP server of an mcp handler."), "argv": strs("exec command."),
			"shell": boolean("Run through /bin/sh -c."), "env": strs("Environment allow-list."), "dir": str("Working directory."),
			"max_output": integer("Output cap in bytes."), "method": str("HTTP method."), "url": str("URL template."),
			"headers": m{"type": "object", "additionalProperties": m{"type": "string"}, "description": "Header templates."},
			"body":    str("Body template."), "secrets": m{"type": "object", "additionalProperties": m{"type": "string"}, "description": "Template name → environment variable."},
			"record_arguments": boolean("Keep the raw arguments in the audit."),
		}, "kind"),
		"PutResult": object("A stored definition.", false, m{
			"id": str("Id."), "version": integer("Stored version."), "generation": integer("The registry generation now served."),
		}),
		"DeleteResult": object("A deleted capability.", false, m{
			"id": str("Id."), "deleted": boolean("Always true."), "generation": integer("The registry generation now served."),
		}),
		"ErrorBody": object("Every error answer.", false, m{"error": ref("ErrorDetail")}, "error"),
		"ErrorDetail": object("An error.", false, m{
			"code":       enum("Stable code.", "malformed_json", "unknown_field", "invalid_request", "bad_request", "body_too_large", "request_timeout", "unsupported_media_type", "unauthorized", "forbidden", "not_found", "conflict", "method_not_allowed", "overloaded", "unavailable", "internal"),
			"message":    str("What is wrong, for people."),
			"request_id": str("The request's X-Request-ID."),
		}, "code", "message"),
		"Status":       object("Health and readiness.", false, m{"status": str("ok or ready."), "generation": integer("Registry generation (readyz).")}),
		"UpstreamList": object("The upstream MCP servers the caller may see.", false, m{"upstreams": arr(ref("UpstreamStatus"), "In configuration order.")}, "upstreams"),
		"UpstreamStatus": object("One upstream MCP server.", false, m{
			"name": str("Its name in capdex.yaml."), "transport": enum("How capdex reaches it.", "stdio", "http"),
			"state":     enum("Connection state; while not connected its tools are unavailable.", "connected", "connecting", "down"),
			"last_sync": m{"type": []string{"string", "null"}, "format": "date-time", "description": "When its tools were last listed (RFC 3339), null before the first listing."},
			"tools":     integer("Its actions the caller may discover."), "quarantined": integer("Tools waiting for review (administrators only; 0 otherwise)."),
			"error": str("Why it is down, or what the last sync failed at."), "pack": str("The pack its tools are under."),
		}, "name", "transport", "state", "last_sync", "tools", "quarantined"),
		"Funnel": object("The caller's tenant's funnel of recorded sessions (docs/feedback.md). Rates are 0 without a denominator.", false, m{
			"funnel":             arr(ref("FunnelRow"), "Per capability the caller may discover, most shown first."),
			"search_to_describe": number("Share of searches followed by a describe in their session."),
			"describe_to_run":    number("Share of (search, capability) describes followed by a run of it."),
			"run_success":        number("Share of runs after a search that succeeded."),
			"clarification_rate": number("Share of searches whose answer was not confident."),
		}, "funnel", "search_to_describe", "describe_to_run", "run_success", "clarification_rate"),
		"FunnelRow": object("One capability's funnel.", false, m{
			"resource_id": str("Capability id."), "searched": integer("Searches that showed it."),
			"described": integer("Searches followed by its describe."), "ran": integer("Searches followed by its run (to an outcome)."),
			"succeeded": integer("Searches followed by its successful run."),
		}, "resource_id", "searched", "described", "ran", "succeeded"),
	}

	authed := []m{{"apiKey": []string{}}, {"bearer": []string{}}}
	public := []m{}
	op := func(summary, id string, extra m) m {
		o := m{"summary": summary, "operationId": id}
		return merge(o, extra)
	}
	paths := m{
		"/v1/search": m{"post": op("Search capabilities (capability_search)", "search", m{
			"description": "With Accept: text/event-stream the answer is a Server-Sent Events stream as /v1/search/stream gives.",
			"parameters":  []m{sessionParam},
			"requestBody": jsonBody("SearchRequest"),
			"responses": merge(m{"200": m{"description": "Ranked matches.", "content": m{
				"application/json":  m{"schema": ref("SearchResponse")},
				"text/event-stream": m{"schema": m{"type": "string", "description": "event: partial / event: final, data: SearchResponse JSON"}},
			}}}, errs("400", "401", "413", "429")),
		})},
		"/v1/search/stream": m{"post": op("Search, streaming partial rankings (SSE)", "searchStream", m{
			"description": "Server-Sent Events: one `event: partial` per retriever answer, then one `event: final`; each data line is a SearchResponse.",
			"requestBody": jsonBody("SearchRequest"),
			"responses": merge(m{"200": m{"description": "The event stream.", "content": m{
				"text/event-stream": m{"schema": m{"type": "string", "description": "event: partial|final, data: SearchResponse JSON"}},
			}}}, errs("400", "401", "413", "429")),
		})},
		"/v1/list": m{"post": op("Browse a pack (capability_list)", "list", m{
			"requestBody": jsonBody("ListRequest"),
			"responses":   merge(m{"200": answer("The pack's children.", "ListResponse")}, errs("400", "401", "404", "413")),
		})},
		"/v1/describe": m{"post": op("Describe a capability (capability_describe)", "describe", m{
			"requestBody": jsonBody("DescribeRequest"),
			"responses":   merge(m{"200": answer("The contract.", "DescribeResult")}, errs("400", "401", "403", "404", "413")),
		})},
		"/v1/run": m{"post": op("Run an action (capability_run)", "run", m{
			"parameters":  []m{sessionParam},
			"requestBody": jsonBody("RunRequest"),
			"responses":   merge(m{"200": answer("The run's outcome, refusals included.", "RunResult")}, errs("400", "401", "413", "429")),
		})},
		"/v1/capabilities/{id}": m{
			"parameters": []m{idParam},
			"get": op("Describe a capability", "getCapability", m{
				"parameters": []m{{"name": "format", "in": "query", "required": false, "schema": m{"enum": []string{"openai", "anthropic", "mcp"}}, "description": "Also render the action as a tool."}},
				"responses":  merge(m{"200": answer("The contract.", "DescribeResult")}, errs("400", "401", "403", "404")),
			}),
			"put": op("Store a definition (admin)", "putCapability", m{
				"description": "Creates the capability or a new version of it. The same version with a changed definition, or an older version, is refused with 409; an identical definition is accepted unchanged.",
				"requestBody": jsonBody("Capability"),
				"responses":   merge(m{"200": answer("Stored; the new generation is served.", "PutResult")}, errs("400", "401", "403", "409", "413")),
			}),
			"delete": op("Delete a capability (admin)", "deleteCapability", m{
				"responses": merge(m{"200": answer("Deleted.", "DeleteResult")}, errs("400", "401", "403", "404", "409")),
			}),
		},
		"/v1/upstreams": m{"get": op("Upstream MCP servers and their state", "upstreams", m{
			"description": "Any caller; each sees the servers whose pack it may discover, with the tools it may discover. Administrators see every server and its quarantine count.",
			"responses":   merge(m{"200": answer("The servers.", "UpstreamList")}, errs("401")),
		})},
		"/v1/stats": m{"get": op("The funnel of the caller's tenant: search → describe → run → success, by capability", "stats", m{
			"responses": merge(m{"200": answer("The funnel.", "Funnel")}, errs("401")),
		})},
		"/healthz": m{"get": op("Liveness", "healthz", m{"security": public,
			"responses": m{"200": answer("Alive.", "Status")}})},
		"/readyz": m{"get": op("Readiness: engine open, a registry generation loaded, every upstream listed once or down (at most 20 s)", "readyz", m{"security": public,
			"responses": merge(m{"200": answer("Ready.", "Status")}, errs("503"))})},
		"/metrics": m{"get": op("Prometheus metrics", "metrics", m{"security": public,
			"responses": m{"200": m{"description": "Prometheus text format.", "content": m{"text/plain": m{"schema": m{"type": "string"}}}}}})},
		"/openapi.json": m{"get": op("This document", "openapi", m{
			"responses": merge(m{"200": m{"description": "OpenAPI 3.1.", "content": m{"application/json": m{"schema": m{"type": "object"}}}}}, errs("401"))})},
		"/mcp": m{
			"post": op("MCP streamable HTTP: a JSON-RPC message", "mcpPost", m{
				"description": "The Model Context Protocol endpoint (streamable HTTP). A session runs as the API key that opened it; a session opened with another key is refused with 403. Tools: capability_search, capability_list, capability_describe, capability_run, and the leaf tools of described actions.",
				"requestBody": m{"required": true, "content": m{"application/json": m{"schema": m{"type": "object", "description": "JSON-RPC 2.0 message or batch"}}}},
				"responses": merge(m{"200": m{"description": "JSON-RPC answer (application/json or text/event-stream)."},
					"202": m{"description": "Accepted (a notification or response)."}}, errs("401", "403", "413", "503")),
			}),
			"get": op("MCP streamable HTTP: the session's event stream", "mcpGet", m{
				"responses": merge(m{"200": m{"description": "text/event-stream of server messages."}}, errs("401", "403")),
			}),
			"delete": op("MCP streamable HTTP: end the session", "mcpDelete", m{
				"responses": merge(m{"204": m{"description": "Session ended."}}, errs("401", "403")),
			}),
		},
	}
	return m{
		"openapi": "3.1.0",
		"info": m{
			"title":       "capdex daemon API",
			"version":     "1",
			"description": "Capability search, describe and governed run for LLM agent harnesses. Every error is {\"error\": {\"code\", \"message\"}}. Every request may carry X-Request-ID (echoed; generated when absent).",
		},
		"security": authed,
		"paths":    paths,
		"components": m{
			"schemas": schemas,
			"securitySchemes": m{
				"bearer": m{"type": "http", "scheme": "bearer", "description": "Authorization: Bearer <API key>."},
				"apiKey": m{"type": "apiKey", "in": "header", "name": HeaderAPIKey},
			},
		},
	}
}

// nextStepNames lists the next_step values of a structured match.
func nextStepNames() []string {
	steps := engine.NextSteps()
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.Step
	}
	return out
}
