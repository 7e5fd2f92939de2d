// Package handlers runs one capdex action: a Go function the embedding program registers
// (kind go), a local command (kind exec) or an HTTP request (kind http). A Dispatcher picks
// the handler by the definition's handler kind.
//
// # Basics
//
// A Handler receives the capability and its already validated arguments and returns the
// output as JSON. Handlers never decide permissions: the run pipeline (engine/govern) has
// checked the gates, the confirmation and the timeout before calling them, and passes the
// timeout as the context deadline.
//
// The exec handler never uses a shell unless the definition sets handler.shell; it passes
// the arguments both through argv templates ({{.name}}) and as JSON on stdin, passes only an
// allow-listed environment, runs the command in its own process group, and at the deadline
// sends SIGTERM to the group and SIGKILL 200 ms later. network_policy none is enforced with
// a fresh network namespace when the kernel allows one (see NetworkIsolation).
//
// # Caveats
//
// A go handler that ignores its context keeps running after its deadline; Run returns
// ErrTimeout at the deadline regardless. The exec handler cannot enforce a host allow-list
// (network_policy allowlist); such runs are reported as "unenforced".
package handlers
