package engine

import (
	"errors"

	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/engine/rank"
	"github.com/capdex/capdex/registry"
)

// The term cache (rank.TermCache) is persisted as a section of the index state
// (index.Generation.PersistWith), so it is checked as the index's sections are (registry
// generation, the capabilities' ids and versions, this build of capdex, its checksum), and
// a full build loads it (rank.LoadTermChain) instead of analysing every capability again.
// Whatever does not match is made again (rank.NewTermChain) and logged, and the state is
// then written again with it.

// termsSection names the term cache's section of the index state.
const termsSection = "rank.terms"

// termSections returns the sections of the index state that hold terms: none when it is
// not the cache of a chain.
func termSections(terms *rank.TermCache) map[string][]byte {
	if terms == nil {
		return nil
	}
	b, ok := terms.AppendPersisted(nil)
	if !ok {
		return nil
	}
	return map[string][]byte{termsSection: b}
}

// openTerms returns the term cache of snap for a full build: the one persisted with the
// index state when it is usable (loaded true), else a new one (logged).
// sections, nil when there is no persisted state, returns its checked sections
// (index.PersistedSections).
func (e *Engine) openTerms(snap *registry.Snapshot, sections func() (map[string][]byte, error)) (terms *rank.TermCache, loaded bool) {
	if sections != nil {
		secs, err := sections()
		if body, ok := secs[termsSection]; ok {
			t, lerr := rank.LoadTermChain(body, snap.Caps, query.FieldTerms)
			if lerr == nil {
				e.log.Info("rank: persisted term cache loaded", "generation", snap.Generation)
				return t, true
			}
			err = lerr
		} else if err == nil {
			err = errors.New("no term cache section")
		}
		e.log.Warn("rank: persisted term cache not used, building", "generation", snap.Generation, "reason", err)
	}
	return rank.NewTermChain(snap.Caps, query.FieldTerms), false
}
