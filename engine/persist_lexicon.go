package engine

import (
	"errors"

	"github.com/capdex/capdex/engine/query"
	"github.com/capdex/capdex/registry"
)

// The query lexicon (query.Lexicon) is persisted as a section of the index state, beside
// the term cache (persist_terms.go) and checked as it is, so a full build loads it
// (query.LoadLexicon) instead of building it from every capability again. Whatever does not
// match is built again (query.NewLexicon) and logged, and the state is then written again
// with it.

// lexiconSection names the lexicon's section of the index state.
const lexiconSection = "query.lexicon"

// lexiconSections adds the lexicon's section to secs (made when nil) and returns it.
func lexiconSections(lex *query.Lexicon, secs map[string][]byte) map[string][]byte {
	if lex == nil {
		return secs
	}
	if secs == nil {
		secs = make(map[string][]byte, 1)
	}
	secs[lexiconSection] = lex.AppendPersisted(nil)
	return secs
}

// openLexicon returns the lexicon of snap for a full build: the one persisted with the
// index state when it is usable (loaded true), else a new one (logged). sections returns
// the checked sections of the persisted state, and is nil when there is none.
func (e *Engine) openLexicon(snap *registry.Snapshot, sections func() (map[string][]byte, error)) (lex *query.Lexicon, loaded bool) {
	if sections != nil {
		secs, err := sections()
		if body, ok := secs[lexiconSection]; ok {
			l, lerr := query.LoadLexicon(body, snap)
			if lerr == nil {
				e.log.Info("query: persisted lexicon loaded", "generation", snap.Generation)
				return l, true
			}
			err = lerr
		} else if err == nil {
			err = errors.New("no lexicon section")
		}
		e.log.Warn("query: persisted lexicon not used, building", "generation", snap.Generation, "reason", err)
	}
	return query.NewLexicon(snap), false
}
