package govern

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/capdex/capdex/registry"
	"github.com/capdex/capdex/registry/store"
)

// AuditLog appends hash-chained audit records. *store.Store implements it.
type AuditLog interface {
	// AppendAudit appends rec and returns it with Seq, Time, Prev and Hash filled.
	AppendAudit(ctx context.Context, rec store.AuditRecord) (store.AuditRecord, error)
}

// TokenSpender spends single-use token ids. *store.Store implements it.
type TokenSpender interface {
	// SpendToken marks tokenID spent and appends start in one transaction; a second spend
	// of one id fails with an error wrapping store.ErrTokenSpent and appends nothing. Of
	// concurrent spends of one id exactly one may succeed.
	SpendToken(ctx context.Context, tokenID string, expires time.Time, start store.AuditRecord) (store.AuditRecord, error)
}

// SecretStore keeps generate-once key material. *store.Store implements it.
type SecretStore interface {
	// Secret returns the bytes kept under name, calling gen to create them the first time.
	Secret(name string, gen func() ([]byte, error)) ([]byte, error)
}

// UseRecorder feeds the history retriever. *store.Store implements it.
type UseRecorder interface {
	// RecordUse counts one use of capability id by user in project at time at.
	RecordUse(ctx context.Context, user, project, id string, at time.Time) error
}

// Definitions resolves ids to definitions. Run asks only for the active version (version 0)
// and needs Capability.Eff filled (pack inheritance: tenants, enabled, ACL); an unknown id
// is an error wrapping registry.ErrNotFound. Use FromSnapshot or WithInheritance.
type Definitions interface {
	// Get returns version of id, the active one when version is 0.
	Get(id string, version int) (*registry.Capability, error)
}

// Getter is what WithInheritance needs: *store.Store implements it.
type Getter interface {
	Get(id string, version int) (*registry.Capability, error)
}

// snapshotDefs serves definitions from the current snapshot.
type snapshotDefs struct{ load func() *registry.Snapshot }

// FromSnapshot serves definitions from the snapshot load returns at each call (for example
// the engine's current index generation). Only active versions are known: Get with a
// version other than 0 or the snapshot's version is registry.ErrNotFound.
func FromSnapshot(load func() *registry.Snapshot) Definitions { return snapshotDefs{load} }

func (d snapshotDefs) Get(id string, version int) (*registry.Capability, error) {
	snap := d.load()
	if snap == nil {
		return nil, fmt.Errorf("%w: %s (no snapshot)", registry.ErrNotFound, id)
	}
	c, ok := snap.Get(id)
	if !ok || (version != 0 && version != c.Version) {
		return nil, fmt.Errorf("%w: %s", registry.ErrNotFound, id)
	}
	return c, nil
}

// inheritDefs resolves pack inheritance over a plain getter.
type inheritDefs struct{ g Getter }

// WithInheritance wraps a getter of raw definitions (such as *store.Store, whose results
// have no Eff) and fills Eff from the active versions of the ancestor packs, as
// registry.NewSnapshot does. A missing ancestor is skipped.
func WithInheritance(g Getter) Definitions { return inheritDefs{g} }

func (d inheritDefs) Get(id string, version int) (*registry.Capability, error) {
	c, err := d.g.Get(id, version)
	if err != nil {
		return nil, err
	}
	leaf := *c // shallow copy: NewSnapshot only assigns Eff
	chain := []*registry.Capability{&leaf}
	for p := registry.Parent(id); p != ""; p = registry.Parent(p) {
		pc, err := d.g.Get(p, 0)
		if errors.Is(err, registry.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		cp := *pc
		chain = append(chain, &cp)
	}
	snap, err := registry.NewSnapshot(0, chain)
	if err != nil {
		return nil, err
	}
	out, _ := snap.Get(id) // present: it is in chain
	return out, nil
}
