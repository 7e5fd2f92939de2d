package engine

import (
	"context"
	"fmt"

	"github.com/capdex/capdex/registry/store"
)

// Errors of the registry's versioning rules, re-exported so that callers above the engine
// (the daemon in engine/server) can tell a version conflict from a bad request without
// importing the store. Put, Import and SetStatus return errors wrapping them.
var (
	// ErrNoVersionBump is returned (wrapped) by Put and Import when a definition differs from
	// the stored one of the same id and version: a change needs a higher version.
	ErrNoVersionBump = store.ErrNoVersionBump
	// ErrStaleVersion is returned (wrapped) by Put and Import when a definition's version is
	// lower than the id's latest stored version.
	ErrStaleVersion = store.ErrStaleVersion
)

// DeleteCapability removes a capability (audited) and swaps in the new generation,
// refusing (ErrInvalidRequest) a pack that still has capabilities under it. It is Delete
// with its children check corrected: store.List(id+".") lists the subtree of id including
// id itself, so Delete refuses every id. The daemon uses DeleteCapability until Delete is
// fixed.
func (e *Engine) DeleteCapability(ctx context.Context, id, actor string) error {
	sub, err := e.store.List(id)
	if err != nil {
		return err
	}
	kids := 0
	for _, c := range sub {
		if c.ID != id {
			kids++
		}
	}
	if kids > 0 {
		return fmt.Errorf("%w: %s still has %d capabilities under it", ErrInvalidRequest, id, kids)
	}
	if err := e.store.Delete(ctx, id, actor); err != nil {
		return err
	}
	return e.Reload(ctx)
}
