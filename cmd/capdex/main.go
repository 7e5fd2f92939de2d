// Command capdex is the command line of the capdex capability registry: lint and import
// definitions, search, describe and run capabilities, evaluate search quality, and serve
// the HTTP and MCP daemon. It holds flags and wiring only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// exit statuses
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks bad input: the command exits with status 2.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func badInput(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

type command struct {
	name, args, help string
	run              func(ctx context.Context, env *cliEnv, args []string) error
}

var commands []command

func init() {
	commands = []command{
		{"search", "[flags] QUERY", "find the capabilities that fit a goal", cmdSearch},
		{"list", "[PREFIX]", "list stored definitions (active versions) under a prefix", cmdList},
		{"browse", "[PACK]", "browse a pack as capability_list does, with the gates applied", cmdBrowse},
		{"show", "ID[@VERSION]", "print one stored definition", cmdShow},
		{"describe", "[flags] ID", "disclose one capability's contract, or render it as a tool", cmdDescribe},
		{"run", "[flags] ID", "run an action through the governed pipeline", cmdRun},
		{"lint", "DIR", "check a registry directory; every error with file, line and field", cmdLint},
		{"import", "[flags] PATH", "import definitions or a foreign tool catalogue (all or nothing)", cmdImport},
		{"audit", "verify | tail [-n N]", "verify the audit hash chain, or print its last records", cmdAudit},
		{"delete", "[--recursive] ID", "delete a capability (a pack with --recursive: everything under it)", cmdDelete},
		{"upstreams", "[--url U]", "list a running daemon's upstream MCP servers and their state", cmdUpstreams},
		{"quarantine", "[list | approve ID | reject ID]", "review upstream tools held back by the rug-pull defence (admin)", cmdQuarantine},
		{"eval", "[flags]", "score search quality on labelled queries or cases", cmdEval},
		{"calibrate", "--cases FILE", "calibrate resolution thresholds from cases and store them", cmdCalibrate},
		{"stats", "[--as T:U:S,...] [--json]", "the funnel of the caller's tenant: search → describe → run → success, by capability", cmdStats},
		{"serve", "[--addr A] [--config F]", "run the HTTP JSON API and MCP daemon", cmdServe},
		{"mcp", "[--config F]", "serve MCP on stdin/stdout", cmdMCP},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes one command line and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &cliEnv{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	for _, c := range commands {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, env, args[1:])
		defer env.close()
		if err == nil || errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, "capdex %s: %v\n", c.name, err)
		if isBadInput(err) {
			return exitUsage
		}
		return exitFailure
	}
	fmt.Fprintf(stderr, "capdex: unknown command %q\n\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: capdex COMMAND [flags] [args]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %-28s %s\n", c.name, c.args, c.help)
	}
	fmt.Fprintln(w, "\nThe data directory is $CAPDEX_HOME, else the user's data directory (capdex/);")
	fmt.Fprintln(w, "it is seeded with the built-in example registry on first use.")
	fmt.Fprintln(w, "Run 'capdex COMMAND -h' for a command's flags.")
}

func isBadInput(err error) bool {
	var u usageError
	return errors.As(err, &u) || isEngineBadInput(err) || isEngineNotFound(err)
}
