package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/capdex/capdex/engine"
)

func cmdRun(ctx context.Context, env *cliEnv, args []string) error {
	var c common
	fs := newFlags(env, "run", "[--version N] [--args JSON] [--confirm TOKEN] [--json] [--as T:U:S] ID")
	c.register(fs)
	version := fs.Int("version", 0, "the version you expect to run (refused if not the active one)")
	argsJSON := fs.String("args", "{}", "the arguments as a JSON object")
	confirm := fs.String("confirm", "", "the confirmation token of an earlier confirmation_required answer")
	session := fs.String("session", "cli", "session id bound into confirmation tokens")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return badInput("want one action ID")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(*argsJSON), &obj); err != nil || obj == nil {
		why := "want an object"
		var se *json.SyntaxError
		if errors.As(err, &se) {
			why = fmt.Sprintf("%v at byte offset %d", err, se.Offset)
		}
		return badInput("--args: not a JSON object (%s): %s", why, *argsJSON)
	}
	rc, err := c.identity()
	if err != nil {
		return err
	}
	rc.Session = *session
	e, err := env.open(ctx, &c, engine.Options{})
	if err != nil {
		return err
	}
	res, err := e.Run(ctx, engine.RunRequest{ID: pos[0], Version: *version, Arguments: json.RawMessage(*argsJSON), ConfirmationToken: *confirm}, rc)
	if err != nil {
		return err
	}
	if c.json {
		if err := printJSON(env.stdout, res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(env.stdout, "%s v%d: %s", res.ID, res.Version, res.Status)
		if res.Reason != "" {
			fmt.Fprintf(env.stdout, " (%s)", res.Reason)
		}
		if res.Message != "" {
			fmt.Fprintf(env.stdout, ": %s", res.Message)
		}
		fmt.Fprintln(env.stdout)
		for _, e := range res.Errors {
			fmt.Fprintf(env.stdout, "  %s\n", e)
		}
		if res.Status == "confirmation_required" {
			fmt.Fprintf(env.stdout, "%s\naffects: %s\nexpires: %s\nconfirm with: --confirm %s\n", res.Summary, strings.Join(res.AffectedResources, ", "), res.ExpiresAt.Format("15:04:05"), res.ConfirmationToken)
		}
		if len(res.Output) > 0 {
			fmt.Fprintf(env.stdout, "%s\n", res.Output)
		}
	}
	switch res.Status {
	case "succeeded", "confirmation_required":
		return nil
	case "refused":
		switch res.Reason {
		case "invalid_arguments":
			return badInput("refused: %s", res.Reason)
		case "not_found": // unknown or hidden: the same answer
			return noSuchCapability(pos[0])
		}
	}
	return fmt.Errorf("%s: %s", res.Status, res.Reason)
}
