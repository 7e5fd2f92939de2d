package main

import (
	"context"
	"errors"
)

// The daemon (engine/server) lands with issue 6.
var errNoServer = errors.New("the daemon is not built yet (issue 6)")

func cmdServe(ctx context.Context, env *cliEnv, args []string) error { return errNoServer }

func cmdMCP(ctx context.Context, env *cliEnv, args []string) error { return errNoServer }
